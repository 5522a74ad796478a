/**
 * What the run ledger's parts share: ids, row mapping, and the fence. Every run write goes
 * through `fence`: one `UPDATE runs … WHERE seq = ? AND epoch = ?` inside the write transaction
 * that must change exactly one row, so check and write are one atomic step, never a read
 * followed by a write.
 */
import type { Tx as Transaction } from "../memory/db.ts";
import { NotFoundError, StaleEpochError } from "../core/errors.ts";
import type { Clock, CrashPoint } from "../core/ports.ts";
import type { Database } from "../memory/db.ts";
import type { BlobStore } from "../store/blobs.ts";

export interface LedgerDeps {
  db: Database;
  /** Where artifact bodies, attachments and context go (store/blobs.ts). */
  blobs: BlobStore;
  clock: Clock;
  crash?: CrashPoint;
}

export type Row = Record<string, unknown>;

const prefixed = (prefix: string) => ({
  format: (seq: number) => `${prefix}_${String(seq).padStart(4, "0")}`,
  parse: (id: string): number | null => {
    const m = new RegExp(`^${prefix}_(\\d{1,15})$`).exec(id);
    return m ? Number(m[1]) : null;
  },
});

export const RUN_ID = prefixed("R");
export const RECEIPT_ID = prefixed("RC");
export const ADJUSTMENT_ID = prefixed("ADJ");
export const CONTEXT_ID = prefixed("C");
export const CHARGE_ID = prefixed("CH");

/** The seq of an id, or `not_found` naming it. */
export function seqOf(kind: ReturnType<typeof prefixed>, id: string, what: string): number {
  const seq = kind.parse(id);
  if (seq === null) throw new NotFoundError(what, id);
  return seq;
}

export const json = <T>(v: unknown, fallback: T): T => (v === null || v === undefined ? fallback : (JSON.parse(String(v)) as T));
export const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** Refuses (and so rolls back) unless `epoch` is the run's current epoch. Touches `updated_at`. */
export async function fence(tx: Transaction, runSeq: number, epoch: number, at: string): Promise<void> {
  const rs = await tx.execute({ sql: "UPDATE runs SET updated_at = ? WHERE seq = ? AND epoch = ?", args: [at, runSeq, epoch] });
  if (rs.rowsAffected === 1) return;
  const cur = await tx.execute({ sql: "SELECT epoch FROM runs WHERE seq = ?", args: [runSeq] });
  if (!cur.rows.length) throw new NotFoundError("run", RUN_ID.format(runSeq));
  throw new StaleEpochError(RUN_ID.format(runSeq), epoch, Number(cur.rows[0]!.epoch));
}

export async function addEvent(tx: Transaction, runSeq: number, epoch: number, kind: string, detail: Record<string, unknown>, at: string): Promise<void> {
  await tx.execute({
    sql: "INSERT INTO run_events(run_seq, epoch, kind, detail, at) VALUES (?, ?, ?, ?, ?)",
    args: [runSeq, epoch, kind, JSON.stringify(detail), at],
  });
}
