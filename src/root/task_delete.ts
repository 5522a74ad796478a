/**
 * `task.delete` (the host's): a task of the root goes, with what it holds, in one write
 * transaction; a tombstone stays (who, when, why) and the event log says `task.deleted`.
 *
 * | goes | how |
 * |---|---|
 * | the task's state row, quarantined copies | deleted |
 * | its checkpoints and outcome (memory) | forgotten (memory/forget.ts: index, row, body; their tombstones stay) |
 * | other memories saved under it | kept as project memory, unless `memories: true` forgets them too |
 * | its runs with their receipts, charges, events, open items, run checkpoints | deleted |
 * | its artifacts (versions, attachments, marks), contexts (reads, shares), adjustments, approvals, gaps | deleted; bodies removed once no other row names them |
 * | its events in the event log | deleted; one `task.deleted` event stays |
 * | kept answers (idempotency) that name it or anything of it (a run, receipt, charge, context, adjustment, approval) | deleted: a replay runs again and finds nothing, never an old answer with its text |
 *
 * Refused, changing nothing: the root's current task (start or switch to another first: the
 * current task is what the gate and every turn read); a task with an open run (running, parked
 * or requested: end them first, e.g. task.finish with cancel_runs); a task whose runs a granted or
 * requested run of another task continues (that run's ancestry would lose what it inherits; a
 * refused one is only detached); a pending checkpoint for it (task.resume replays it first).
 * Deleting a deleted task answers `already: true`. With `memories`, each record goes with every
 * other version of it (memory.update's chain), as memory.forget does: also a newer version saved
 * under another task.
 */
import { ConflictError, LongrunError, NotFoundError } from "../core/errors.ts";
import { ADJUSTMENT_ID, CHARGE_ID, CONTEXT_ID, RECEIPT_ID, RUN_ID } from "../core/ids.ts";
import { APPROVAL_ID } from "../ledger/approvals.ts";
import { GAP_ID } from "../ledger/gaps.ts";
import type { Database, Tx } from "../db/database.ts";
import type { LibsqlMemory } from "../memory/store.ts";
import type { BlobStore } from "../store/blobs.ts";
import { blobsNamed } from "../store/db_blobs.ts";
import { idsNamed } from "../store/idempotency.ts";
import { CURRENT_TASK } from "../store/state_db.ts";

export interface TaskDeleteDeps {
  db: Database;
  memory: LibsqlMemory;
  blobs: BlobStore;
  /** The task a pending checkpoint waits for; null when none waits; "unreadable" when one does but cannot be read. */
  pendingTask: () => Promise<string | null>;
  now: () => Date;
}

export interface TaskDeleteInput {
  task_id: string;
  by: string;
  reason: string | null;
  /** Also forget the memories saved under the task (not only its checkpoints and outcome). */
  memories: boolean;
}

export interface TaskDeleteResult {
  task_id: string;
  deleted: true;
  /** It was deleted before this call; nothing more was done. */
  already: boolean;
  runs: string[];
  /** Memory records forgotten with it (its checkpoints and outcome; every one with `memories`). */
  memories_forgotten: string[];
  /** Memories saved under it that stay as project memory (memory.forget removes them). */
  memories_kept: number;
  artifacts: number;
}

/** The runs of the task, as a subquery over `?` (the task id). */
const RUNS = "SELECT seq FROM runs WHERE task_id = ?";

export async function deleteTask(d: TaskDeleteDeps, input: TaskDeleteInput): Promise<TaskDeleteResult> {
  const { task_id: taskId } = input;
  const pending = await d.pendingTask();
  if (pending === taskId || pending === "unreadable") {
    throw new ConflictError(`Refused: a checkpoint of task ${taskId} is pending (not yet in memory); task.resume replays it, then delete the task. Nothing changed`, { reason: "pending_checkpoint", task_id: taskId });
  }
  const out = await d.db.write(async (tx) => {
    const task = (await tx.execute({ sql: "SELECT status FROM tasks WHERE task_id = ?", args: [taskId] })).rows[0];
    if (!task) {
      const gone = (await tx.execute({ sql: "SELECT 1 FROM task_tombstones WHERE task_id = ?", args: [taskId] })).rows.length > 0;
      if (gone) return { result: { task_id: taskId, deleted: true as const, already: true, runs: [], memories_forgotten: [], memories_kept: 0, artifacts: 0 }, blobs: [] };
      throw new NotFoundError("task", taskId, "; task.list shows this root's tasks");
    }
    await refuseUnlessDeletable(tx, taskId);
    const runs = (await tx.execute({ sql: `${RUNS} ORDER BY seq`, args: [taskId] })).rows.map((r) => RUN_ID.format(Number(r.seq)));
    const memory = await d.memory.forgetTaskIn(tx, taskId, input.memories, input.by, input.reason ?? `task ${taskId} deleted`);
    const blobs = [...memory.blobs];
    for (const table of ["artifacts", "artifact_attachments"]) {
      blobs.push(...(await tx.execute({ sql: `SELECT ref FROM ${table} WHERE task_id = ? AND ref IS NOT NULL`, args: [taskId] })).rows.map((r) => String(r.ref)));
    }
    blobs.push(...(await tx.execute({ sql: "SELECT path FROM contexts WHERE task_id = ?", args: [taskId] })).rows.map((r) => String(r.path)));
    const artifacts = Number((await tx.execute({ sql: "SELECT COUNT(*) AS n FROM artifacts WHERE task_id = ?", args: [taskId] })).rows[0]!.n);
    const contexts = "SELECT seq FROM contexts WHERE task_id = ?";
    const t = [taskId];
    const steps: [string, unknown[]][] = [
      // a refused continuation in another task was never granted: it only loses its link
      [`UPDATE runs SET parent_seq = NULL WHERE parent_seq IN (${RUNS}) AND task_id <> ? AND grant_state = 'refused'`, [taskId, taskId]],
      [`DELETE FROM context_reads WHERE context_seq IN (${contexts}) OR run_seq IN (${RUNS}) OR reader_task = ?`, [taskId, taskId, taskId]],
      [`DELETE FROM context_shares WHERE context_seq IN (${contexts}) OR task_id = ?`, [taskId, taskId]],
      ["DELETE FROM contexts WHERE task_id = ?", t],
      ["DELETE FROM adjustment_events WHERE adjustment_seq IN (SELECT seq FROM adjustments WHERE task_id = ?)", t],
      ["DELETE FROM adjustments WHERE task_id = ?", t],
      ["DELETE FROM artifact_marks WHERE task_id = ?", t],
      ["DELETE FROM artifact_attachments WHERE task_id = ?", t],
      ["DELETE FROM artifacts WHERE task_id = ?", t],
      ["DELETE FROM approvals WHERE task_id = ?", t],
      ["DELETE FROM gaps WHERE task_id = ?", t],
      [`DELETE FROM open_items WHERE run_seq IN (${RUNS}) OR receipt_seq IN (SELECT seq FROM receipts WHERE run_seq IN (${RUNS}))`, [taskId, taskId]],
      [`DELETE FROM run_checkpoints WHERE run_seq IN (${RUNS})`, t],
      [`DELETE FROM run_events WHERE run_seq IN (${RUNS})`, t],
      [`DELETE FROM charges WHERE run_seq IN (${RUNS})`, t],
      [`DELETE FROM receipts WHERE run_seq IN (${RUNS})`, t],
      ["DELETE FROM runs WHERE task_id = ?", t],
      ["DELETE FROM ledger_tasks WHERE task_id = ?", t],
      ["DELETE FROM tasks_quarantine WHERE task_id = ?", t],
      ["DELETE FROM tasks WHERE task_id = ?", t],
      // what the log said of it (a checkpoint's id, an approval's reason…); the tombstone's event follows
      ["DELETE FROM events WHERE task_id = ?", t],
      ["INSERT INTO task_tombstones(task_id, deleted_at, by, reason) VALUES (?, ?, ?, ?)", [taskId, d.now().toISOString(), input.by, input.reason]],
    ];
    const answers = await answersNaming(tx, taskId);
    for (const [sql, args] of steps) await tx.execute({ sql, args: args as never });
    if (answers.length) await tx.execute({ sql: "DELETE FROM idempotency WHERE key IN (SELECT value FROM json_each(?))", args: [JSON.stringify(answers)] });
    return { result: { task_id: taskId, deleted: true as const, already: false, runs, memories_forgotten: memory.forgotten, memories_kept: memory.kept, artifacts }, blobs };
  });
  // bodies are shared by content: one goes only when no row names it any more
  const refs = [...new Set(out.blobs)];
  const named = await blobsNamed(d.db, refs);
  for (const ref of refs) if (!named.has(ref)) await d.blobs.remove(ref);
  return out.result;
}

async function refuseUnlessDeletable(tx: Tx, taskId: string): Promise<void> {
  const current = (await tx.execute({ sql: "SELECT value FROM root_meta WHERE key = ?", args: [CURRENT_TASK] })).rows[0];
  if (current && String(current.value) === taskId) {
    throw new LongrunError("transition_error", `Refused: ${taskId} is the root's current task; start or switch to another task first (task.start, task.switch), then delete it. Nothing changed`, {
      reason: "current_task",
      task_id: taskId,
    });
  }
  const open = await tx.execute({ sql: "SELECT seq FROM runs WHERE task_id = ? AND status IN ('running', 'parked') ORDER BY seq", args: [taskId] });
  if (open.rows.length) {
    const ids = open.rows.map((r) => RUN_ID.format(Number(r.seq)));
    throw new ConflictError(`Refused: task ${taskId} has open runs (${ids.join(", ")}); end them first (run.cancel, or task.finish with cancel_runs), then delete it. Nothing changed`, {
      reason: "runs_open",
      task_id: taskId,
      runs: ids,
    });
  }
  const elsewhere = await tx.execute({
    sql: `SELECT seq, task_id FROM runs WHERE parent_seq IN (${RUNS}) AND task_id <> ? AND COALESCE(grant_state, 'granted') <> 'refused' ORDER BY seq`,
    args: [taskId, taskId],
  });
  if (elsewhere.rows.length) {
    const ids = elsewhere.rows.map((r) => `${RUN_ID.format(Number(r.seq))} of task ${String(r.task_id)}`);
    throw new ConflictError(`Refused: runs of another task continue runs of ${taskId} (${ids.join(", ")}) and inherit what they left open; refuse a requested one (run.refuse) or delete that task first. Nothing changed`, {
      reason: "continued_elsewhere",
      task_id: taskId,
      runs: elsewhere.rows.map((r) => RUN_ID.format(Number(r.seq))),
    });
  }
}

/**
 * The keys of kept answers (idempotency) about the task or anything of it (what their `names`
 * say; an answer kept before names were, by the ids its text names), read before its rows go. A
 * memory method's answer is about memory records, which forgetting rewrites itself
 * (memory/forget.ts), and a memory kept stays replayable.
 */
async function answersNaming(tx: Tx, taskId: string): Promise<string[]> {
  const ids = new Set<string>([taskId]);
  const collect = async (sql: string, format: (n: number) => string) => {
    for (const r of (await tx.execute({ sql, args: [taskId] })).rows) ids.add(format(Number(r.seq)));
  };
  await collect(RUNS, (n) => RUN_ID.format(n));
  await collect(`SELECT seq FROM receipts WHERE run_seq IN (${RUNS})`, (n) => RECEIPT_ID.format(n));
  await collect(`SELECT seq FROM charges WHERE run_seq IN (${RUNS})`, (n) => CHARGE_ID.format(n));
  await collect("SELECT seq FROM contexts WHERE task_id = ?", (n) => CONTEXT_ID.format(n));
  await collect("SELECT seq FROM adjustments WHERE task_id = ?", (n) => ADJUSTMENT_ID.format(n));
  await collect("SELECT seq FROM approvals WHERE task_id = ?", (n) => APPROVAL_ID.format(n));
  await collect("SELECT seq FROM gaps WHERE task_id = ?", (n) => GAP_ID.format(n));
  const out: string[] = [];
  let after = "";
  for (;;) {
    const page = (await tx.execute({
      sql: "SELECT key, CASE WHEN names IS NULL THEN answer END AS answer, names FROM idempotency WHERE key > ? AND method NOT LIKE 'memory.%' ORDER BY key LIMIT 500",
      args: [after],
    })).rows;
    for (const r of page) {
      const named = r.names === null ? idsNamed(String(r.answer)) : (JSON.parse(String(r.names)) as string[]);
      if (named.some((id) => ids.has(id))) out.push(String(r.key));
    }
    if (page.length < 500) return out;
    after = String(page.at(-1)!.key);
  }
}
