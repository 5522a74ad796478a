/**
 * What the run ledger's parts share: ids, row mapping, the clock, a run's chain, the fence, and
 * blob cleanup. Every run write goes through `fence`: one `UPDATE runs … WHERE seq = ? AND
 * epoch = ?` inside the write transaction that must change exactly one row, so check and write
 * are one atomic step, never a read followed by a write.
 */
import type { Tx as Transaction } from "../db/database.ts";
import { NotFoundError, StaleEpochError } from "../core/errors.ts";
import { RUN_ID } from "../core/ids.ts";
export { ADJUSTMENT_ID, CHARGE_ID, CONTEXT_ID, RECEIPT_ID, RUN_ID, seqOf } from "../core/ids.ts";
import type { Clock, CrashPoint } from "../core/ports.ts";
import type { Database } from "../db/database.ts";
import type { BlobStore } from "../store/blobs.ts";

export interface LedgerDeps {
  db: Database;
  /** Where artifact bodies, attachments and context go (store/blobs.ts). */
  blobs: BlobStore;
  clock: Clock;
  crash?: CrashPoint;
}

export type Row = Record<string, unknown>;

export const json = <T>(v: unknown, fallback: T): T => (v === null || v === undefined ? fallback : (JSON.parse(String(v)) as T));
export const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** The ledger's clock, as the ISO string every row records. */
export const now = (d: LedgerDeps): string => d.clock.now().toISOString();

/**
 * The earlier runs of a run's chain (parent, its parent…) and every child run of those (at any
 * depth), as a recursive CTE named `ancestry(seq, depth)` (depth: how far up the chain; a child
 * counts at its parent's). What a continuation inherits (unknown effects and charges) comes from
 * these: a child's unknown is its parent's, so also the parent's continuation's.
 */
export const ANCESTRY = `WITH RECURSIVE ancestry(seq, depth) AS (
    SELECT parent_seq, 1 FROM runs WHERE seq = ? AND parent_seq IS NOT NULL
    UNION SELECT r.parent_seq, a.depth + 1 FROM runs r JOIN ancestry a ON r.seq = a.seq WHERE r.parent_seq IS NOT NULL AND a.depth < 1000
    UNION SELECT r.seq, a.depth FROM runs r JOIN ancestry a ON r.child_of = a.seq
  )`;

/**
 * The runs whose unsettled effects a run must not begin again, as a recursive CTE named
 * `lineage(seq, depth)` over `?` (the run) twice: the runs it works under (its parent run, and
 * theirs, for a child), the earlier runs of each of their chains, and every child run of all of
 * these at any depth (its own children, its siblings, their children…), the run itself left out.
 * An effect left unknown anywhere in the work it is part of may have happened: a child cannot
 * resend what its parent, a sibling or an earlier run left unknown, nor a parent what its child did.
 */
export const EFFECT_LINEAGE = `WITH RECURSIVE
    up(seq, depth) AS (SELECT ?, 0 UNION SELECT r.child_of, u.depth + 1 FROM runs r JOIN up u ON r.seq = u.seq WHERE r.child_of IS NOT NULL AND u.depth < 100),
    chain(seq, depth) AS (SELECT seq, depth FROM up UNION SELECT r.parent_seq, c.depth + 1 FROM runs r JOIN chain c ON r.seq = c.seq WHERE r.parent_seq IS NOT NULL AND c.depth < 1000),
    below(seq, depth) AS (SELECT seq, depth FROM chain UNION SELECT r.seq, b.depth + 1 FROM runs r JOIN below b ON r.child_of = b.seq WHERE b.depth < 1100),
    lineage(seq, depth) AS (SELECT seq, MIN(depth) FROM below WHERE seq <> ? GROUP BY seq)`;

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

/** Runs `write`; if it is refused (stale epoch, unknown version…), the blobs written for it go too. */
export async function orRemove<T>(d: LedgerDeps, refs: string[], write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    for (const ref of refs) await d.blobs.remove(ref);
    throw e;
  }
}
