/**
 * The checkpoint (I2: memory before checkpoint), by construction: on a copy of the task, revoke
 * the lease (unless it is a progress checkpoint), render the text with its machine line, and save
 * the memory record and the new state in one commit; only then return the text. A checkpoint
 * still pending from an earlier failure goes to memory first, in that same commit. If the commit
 * fails, nothing of it is saved: the checkpoint goes to the pending file (the gate reads the root
 * as read-only while it waits), the live state's lease is revoked, and `CheckpointWriteError`
 * names the file; no text is returned.
 */
import { type CheckpointData, type CheckpointLang, renderCheckpoint } from "../checkpoint.ts";
import { CheckpointWriteError, describeCause, LimitExceededError, LongrunError, STORAGE_KINDS, TransitionError } from "../errors.ts";
import { revokeLease } from "../lease.ts";
import { LIMITS } from "../limits.ts";
import type { NewMemory, PendingCheckpoint } from "../ports.ts";
import { isTerminal, TRANSITIONS } from "../status.ts";
import { cloneState, type TaskState } from "../task.ts";
import { commit, type ContractContext, mustLoad, setStatus } from "./context.ts";
import { applyCheckpoint } from "./resume.ts";
import { type CheckpointInput, PROGRESS_KIND } from "./types.ts";

export async function checkpoint(c: ContractContext, input: CheckpointInput): Promise<{ text: string; memory_id: string; task: TaskState }> {
  checkDataSize(input.data);
  // one look at the pending file: none there (the common case) lets the store check the task at
  // commit instead of reading it under the lock, and leaves nothing to clear afterwards
  const hadPending = c.d.pending.exists();
  let prepared: { pending: PendingCheckpoint; waiting: boolean } | null = null;
  try {
    const out = await c.d.state.transact(async (tx) => {
      const live = await mustLoad(tx);
      if (isTerminal(live.status)) throw new TransitionError(live.status, "paused", TRANSITIONS[live.status]);
      const waiting = await c.d.pending.read();
      // an older checkpoint still pending goes first, and its effect with it (a pause ends the
      // lease): this one is drafted from the task as the older one left it
      const base = !waiting || waiting.task_id !== live.task_id
        ? live
        : live.last_checkpoint?.checkpoint_id !== waiting.checkpoint_id
        ? applyCheckpoint(live, waiting, "", c.now())
        : revokeLease(cloneState(live), "checkpoint replayed", c.now()); // applied already (by a resume): its end of the lease still holds
      const { working, text, record, checkpointId, savedAt } = draftCheckpoint(c, base, input);
      prepared = {
        waiting: waiting !== null,
        // `working` is only reassigned at its top level from here on: a shallow copy keeps the draft
        pending: { format: 1, checkpoint_id: checkpointId, task_id: working.task_id, created_at: savedAt, error: null, record, state: { ...working } },
      };

      if (waiting) await tx.saveMemory(waiting.record); // the older checkpoint first, never lost
      const memoryId = (await tx.saveMemory(record)).record.id;
      working.last_checkpoint = { ...working.last_checkpoint!, memory_id: memoryId };
      await tx.save(working, live.version);
      c.crash("checkpoint.before_commit");
      return { text, memory_id: memoryId, task: working, replayed: waiting !== null };
      // drafted from the task as last seen where the store can check it is still the stored one
      // at commit (on a server: one request); a pending checkpoint to replay takes the lock
    }, { optimistic: !hadPending });
    c.crash("checkpoint.after_commit");
    if (out.replayed || (hadPending && c.d.pending.lost())) await c.d.pending.clear();
    c.crash("checkpoint.before_reply");
    return { text: out.text, memory_id: out.memory_id, task: out.task };
  } catch (cause) {
    let p = prepared as { pending: PendingCheckpoint; waiting: boolean } | null;
    if (p === null) {
      // refused on its merits (no task, finished, unreadable state): nothing was attempted
      if (cause instanceof LongrunError && !STORAGE_KINDS.has(cause.kind)) throw cause;
      // the transaction never began (the database locked or failing): the checkpoint is made
      // from a lock-free read and kept in the pending file all the same, never lost
      p = await prepareWithoutLock(c, input).catch(() => null);
      if (p === null) throw await checkpointUndrafted(c, cause);
    }
    const failed = await checkpointFailed(c, p.waiting ? null : { ...p.pending, error: describeCause(cause) }, p.pending.state.version - 1);
    throw new CheckpointWriteError(c.d.pending.path, cause, { pendingError: failed.kept, revokeError: failed.revoked });
  }
}

/**
 * A checkpoint of `live`, not yet saved: on a copy, the lease revoked and the task paused (unless
 * it is a progress checkpoint), its text rendered with the machine line, its memory record.
 */
function draftCheckpoint(c: ContractContext, live: TaskState, input: CheckpointInput) {
  const now = c.now();
  const working = cloneState(live);
  if (input.kind !== PROGRESS_KIND) {
    revokeLease(working, "checkpoint", now);
    if (working.status === "in_progress") setStatus(working, "paused", `checkpoint (${input.kind ?? "manual"})`, now);
  }
  if (input.phase !== undefined) working.phase = input.phase;
  working.next_step = input.next_step;
  working.version = live.version + 1;
  working.updated_at = now.toISOString();
  const checkpointId = c.d.ids.checkpointId();
  const savedAt = now.toISOString();
  const kind = input.kind ?? "manual";
  // omitted: the last checkpoint's data goes on (a hook's or a person's checkpoint never drops the host's state)
  const data = input.data ?? live.last_checkpoint?.data ?? {};
  const lang = input.lang ?? rootLang(c);
  const text = renderCheckpoint(working, { summary: input.summary, kind, data, lang }, checkpointId, savedAt);
  const record = checkpointRecord(working, text, checkpointId);
  working.last_checkpoint = { checkpoint_id: checkpointId, memory_id: "", at: savedAt, kind, data };
  return { working, text, record, checkpointId, savedAt };
}

/** The root's checkpoint language; a setting that cannot be read never stops a checkpoint (English then). */
function rootLang(c: ContractContext): CheckpointLang {
  try {
    return c.d.checkpointLang?.() ?? "en";
  } catch {
    return "en";
  }
}

/** A checkpoint's pending form from a lock-free read of the state (for a transaction that could not begin). */
async function prepareWithoutLock(c: ContractContext, input: CheckpointInput): Promise<{ pending: PendingCheckpoint; waiting: boolean } | null> {
  let live: TaskState | null;
  try {
    live = await c.d.state.load();
  } catch (e) {
    // the store cannot even be read (a server unreachable): drafted from the task as this
    // process last saw it; the replay applies it to the task as it then is (resume, checkpoint)
    live = e instanceof LongrunError && e.kind === "storage_error" ? (c.d.state.lastKnown?.() ?? null) : null;
    if (!live) throw e;
  }
  if (!live || isTerminal(live.status)) return null;
  const { working, record, checkpointId, savedAt } = draftCheckpoint(c, live, input);
  return { waiting: c.d.pending.exists() && !c.d.pending.lost(), pending: { format: 1, checkpoint_id: checkpointId, task_id: working.task_id, created_at: savedAt, error: null, record, state: cloneState(working) } };
}

/**
 * A checkpoint that failed before the task could even be read (memory.db gone, the server
 * unreachable): nothing can be drafted, but the lease ends all the same. The empty pending
 * marker makes every process's gate refuse (and task.status read read-only) until task.resume.
 */
async function checkpointUndrafted(c: ContractContext, cause: unknown): Promise<LongrunError> {
  if (c.d.pending.exists() && !c.d.pending.lost()) {
    // an older checkpoint waits there: it already holds the gate shut, and it is kept
    return new CheckpointWriteError(c.d.pending.path, cause, { revokeError: describeCause(cause) });
  }
  const marked = c.d.pending.markLost();
  if (!marked) c.voidLease = { through_version: Number.MAX_SAFE_INTEGER };
  return new CheckpointWriteError(c.d.pending.path, cause, {
    pendingError: `the task state could not be read to draft it${marked ? `; ${c.d.pending.path} marks it` : ", and the pending marker could not be created either"}`,
    revokeError: describeCause(cause),
  });
}

/**
 * After a failed checkpoint commit: the checkpoint goes to the pending file (unless an older one
 * waits there, which stays and is saved first next time), then the lease is revoked in a new
 * transaction. If that cannot commit either, the pending file still makes the gate read-only.
 */
async function checkpointFailed(c: ContractContext, pending: PendingCheckpoint | null, drafted_from: number): Promise<{ kept: string | null; revoked: string | null }> {
  // each step on its own: a pending file that cannot be written never keeps the lease open
  let kept: string | null = null;
  if (pending) {
    try {
      await c.d.pending.write(pending);
      c.crash("checkpoint.after_pending_write");
    } catch (e) {
      kept = describeCause(e);
    }
  }
  let revoked: string | null = null;
  try {
    await c.d.state.transact(async (tx) => {
      const live = await tx.load();
      if (!live || (live.access_mode === "read_only" && live.lease === null)) return;
      const now = c.now();
      await commit(tx, live, revokeLease(cloneState(live), "checkpoint write failed", now), now);
    });
  } catch (e) {
    revoked = describeCause(e);
    // the database kept the lease: this process refuses writes itself until a state change
    // commits after this moment, and (when the checkpoint itself could not be kept either) an
    // empty pending file makes every other process's gate refuse too
    c.voidLease = { through_version: drafted_from };
    if (kept !== null && !c.d.pending.markLost()) revoked += "; the pending marker could not be created either";
  }
  return { kept, revoked };
}

function checkpointRecord(working: TaskState, text: string, checkpointId: string): NewMemory {
  return {
    type: "session",
    title: `[LongRun Checkpoint] ${working.phase || working.task_id}`,
    content: text,
    keywords: ["longrun", "checkpoint", working.task_id],
    task_id: working.task_id,
    dedupe_key: `checkpoint:${checkpointId}`,
  };
}

/** A checkpoint's data is bounded (compact JSON, in characters), refused before anything is touched. */
function checkDataSize(data: CheckpointData | undefined): void {
  if (data === undefined) return;
  const size = JSON.stringify(data).length;
  if (size > LIMITS.checkpoint_data_chars) {
    throw new LimitExceededError("data", LIMITS.checkpoint_data_chars, size, "characters", "keep a checkpoint's data to what the loop needs to go on (an index, a cursor, ids); store large results with memory.save or context.put");
  }
}
