/**
 * Forgetting and versions of memory records, inside one write transaction each.
 *
 * `forget` (the host's): a record's text, and every other version of it (`memory.update`'s chain),
 * leaves the index (its slice's FTS row), the row (title, content, keywords and digest emptied)
 * and its long body (the blob, removed after the commit);
 * what stays is its number and dedupe key in `memories` and a tombstone (when, by whom, why). So a
 * late write cannot bring it back: a save with its dedupe key inserts nothing (the key is taken),
 * and a replayed `memory.save` / `memory.update` answer kept under an idempotency key is rewritten
 * to name the id as forgotten. Checkpoints and outcomes (what recovery reads) are refused.
 *
 * `update`: a new record (a new id) that `supersedes` the old; the old leaves the index (search
 * finds the newest version only) and stays readable by id, marked `superseded_by`.
 */
import { LIMITS } from "../core/limits.ts";
import { LongrunError, NotFoundError } from "../core/errors.ts";
import type { Tx } from "../db/database.ts";
import { memoryId, parseMemoryId } from "./memory_id.ts";
import { sliceOf, sliceTable } from "./slices.ts";

type Row = Record<string, unknown>;

export interface ForgetResult {
  forgotten: string[];
  /** Ids that were forgotten before this call (nothing more to do). */
  already: string[];
  /** Checkpoint and outcome records left as they are (a forget by query skips them; by ids they are refused). */
  skipped: string[];
}

/** What recovery reads: never forgotten nor replaced. */
const STATE_KEY = /^(checkpoint|outcome):/;

const TOMBSTONED = "SELECT 1 FROM memory_tombstones t WHERE t.seq = m.seq";
/** A condition on `memories m`: neither forgotten nor replaced by a newer version. */
export const CURRENT = `m.superseded_by IS NULL AND NOT EXISTS (${TOMBSTONED})`;

/** The record's row and whether it is forgotten; not_found when there is no such id. */
async function rowOf(tx: Tx, id: string): Promise<{ seq: number; row: Row; forgotten: boolean }> {
  const seq = parseMemoryId(id);
  const rs = seq === null ? [] : (await tx.execute({ sql: `SELECT m.*, EXISTS (${TOMBSTONED}) AS forgotten FROM memories m WHERE m.seq = ?`, args: [seq] })).rows;
  if (!rs[0]) throw new NotFoundError("memory", id, "; memory.search lists what exists");
  return { seq: seq!, row: rs[0], forgotten: Number(rs[0].forgotten) === 1 };
}

function refuseState(id: string, row: Row, what: string): void {
  if (STATE_KEY.test(String(row.dedupe_key ?? ""))) {
    throw new LongrunError("transition_error", `Refused: ${id} is a checkpoint or outcome record, which recovery reads; it cannot be ${what}. Nothing changed`, { id });
  }
}

/** Takes a record out of the index (a no-op where its slice was never made). */
async function unindex(tx: Tx, seq: number, sliceSize: number): Promise<void> {
  const table = sliceTable(sliceOf(seq, sliceSize));
  const exists = (await tx.execute({ sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", args: [table] })).rows.length > 0;
  if (exists) await tx.execute({ sql: `DELETE FROM ${table} WHERE rowid = ?`, args: [seq] });
}

/**
 * What a forget does with a checkpoint or outcome record: refuses the call (by ids), skips it (by
 * query), or forgets it with the rest (task.delete: the whole task goes, so nothing recovers it).
 */
export type StateRecords = "refuse" | "skip" | "forget";

/**
 * Forgets `ids` (all or none: an unknown id or, unless `state` says otherwise, a state record
 * refuses the whole call). Returns the blob refs to remove once the transaction has committed.
 */
export async function forgetIn(tx: Tx, ids: readonly string[], by: string, reason: string | null, sliceSize: number, state: StateRecords = "refuse"): Promise<{ result: ForgetResult; blobs: string[] }> {
  // a record's every version goes with it (memory.update's chain, both ways): an older version
  // left readable by id would keep the very text the host asked to forget
  const unique = await withVersions(tx, [...new Set(ids)]);
  const rows = [];
  const skipped: string[] = [];
  for (const id of unique) {
    const r = await rowOf(tx, id);
    if (state === "skip" && !r.forgotten && STATE_KEY.test(String(r.row.dedupe_key ?? ""))) {
      skipped.push(id);
      continue;
    }
    if (!r.forgotten && state === "refuse") refuseState(id, r.row, "forgotten");
    rows.push({ id, ...r });
  }
  const at = new Date().toISOString();
  const out: ForgetResult = { forgotten: [], already: [], skipped };
  const blobs: string[] = [];
  for (const { id, seq, row, forgotten } of rows) {
    if (forgotten) {
      out.already.push(id);
      continue;
    }
    await unindex(tx, seq, sliceSize);
    await tx.execute({ sql: "UPDATE memories SET title = '', content = '', keywords = '[]', raw_ref = NULL, sha256 = '', size = 0 WHERE seq = ?", args: [seq] });
    await tx.execute({ sql: "INSERT INTO memory_tombstones(seq, forgotten_at, by, reason) VALUES (?, ?, ?, ?)", args: [seq, at, by, reason] });
    // a kept answer of a save or update names the record's title: a replay gets the id as forgotten
    await tx.execute({
      sql: "UPDATE idempotency SET answer = ? WHERE method IN ('memory.save', 'memory.update') AND json_extract(answer, '$.id') = ?",
      args: [JSON.stringify({ id, created: false, forgotten: true }), id],
    });
    if (row.raw_ref !== null) blobs.push(String(row.raw_ref));
    out.forgotten.push(id);
  }
  return { result: out, blobs };
}

/** `ids` and, after each, the other versions of its record (oldest first), each once; unknown ids stay as they are (rowOf names them). */
async function withVersions(tx: Tx, ids: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const id of ids) {
    const seq = parseMemoryId(id);
    const chain = seq === null ? [] : (await tx.execute({
      sql: `WITH RECURSIVE older(seq, n) AS (SELECT supersedes, 1 FROM memories WHERE seq = ? AND supersedes IS NOT NULL
              UNION ALL SELECT m.supersedes, o.n + 1 FROM memories m JOIN older o ON m.seq = o.seq WHERE m.supersedes IS NOT NULL AND o.n < 10000),
            newer(seq, n) AS (SELECT superseded_by, 1 FROM memories WHERE seq = ? AND superseded_by IS NOT NULL
              UNION ALL SELECT m.superseded_by, w.n + 1 FROM memories m JOIN newer w ON m.seq = w.seq WHERE m.superseded_by IS NOT NULL AND w.n < 10000)
            SELECT seq FROM older UNION SELECT seq FROM newer ORDER BY seq`,
      args: [seq, seq],
    })).rows.map((r) => memoryId(Number(r.seq)));
    for (const x of [id, ...chain]) {
      if (!seen.has(x)) {
        seen.add(x);
        out.push(x);
      }
    }
  }
  return out;
}

/** The old record of an update, checked: current (not forgotten, not replaced) and not a state record. */
export async function updatableIn(tx: Tx, id: string): Promise<Row> {
  const { row, forgotten } = await rowOf(tx, id);
  if (forgotten) throw new NotFoundError("memory", id, "", `Not found: memory ${id} was forgotten; save a new record instead`);
  if (row.superseded_by !== null && row.superseded_by !== undefined) {
    const newer = memoryId(Number(row.superseded_by));
    throw new LongrunError("transition_error", `Refused: ${id} was already replaced by ${newer}; update ${newer}, the newest version. Nothing changed`, { id, superseded_by: newer });
  }
  refuseState(id, row, "updated");
  return row;
}

/** Links the new version to the old and takes the old out of the index. */
export async function linkVersionIn(tx: Tx, oldSeq: number, newSeq: number, sliceSize: number): Promise<void> {
  await tx.execute({ sql: "UPDATE memories SET supersedes = ? WHERE seq = ?", args: [oldSeq, newSeq] });
  await tx.execute({ sql: "UPDATE memories SET superseded_by = ? WHERE seq = ?", args: [newSeq, oldSeq] });
  await unindex(tx, oldSeq, sliceSize);
}

export const FORGET_MAX_IDS = LIMITS.save_many_items;
