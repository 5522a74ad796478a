/**
 * task.resume: a new turn, read-only, on the stored task, and the replay of a pending checkpoint
 * (a checkpoint whose commit failed and that waits in the pending file). Memory dedupes a
 * replayed checkpoint by its id, so a repeated or interrupted replay never makes a second record.
 */
import type { CheckpointData } from "../checkpoint.ts";
import { describeCause, LongrunError } from "../errors.ts";
import { revokeLease } from "../lease.ts";
import type { MemoryHit, PendingCheckpoint } from "../ports.ts";
import { cloneState, pushBounded, type TaskState } from "../task.ts";
import { checkpointDataOf, commit, type ContractContext, mustBeOpen, setStatus } from "./context.ts";
import { CONTEXT_MEMORIES, type PendingInfo, type ReplayInfo } from "./types.ts";

export function resume(c: ContractContext, messageId?: string): Promise<{
  task: TaskState;
  memories: MemoryHit[];
  replayed: ReplayInfo | null;
  pending_checkpoint: PendingInfo | null;
  /** The last checkpoint's `data` (`{}` when it carried none; null when the task has no checkpoint). */
  data: CheckpointData | null;
}> {
  return resumeOnce(c, messageId).then(async (r) => {
    c.crash("resume.after_replay");
    c.voidLease = null; // the new turn's commit ended any lease in storage
    if (r.replayed || c.d.pending.lost()) await c.d.pending.clear();
    else if (r.failed) await c.d.pending.write(r.failed).catch(() => {});
    const memories = await contextMemories(c, r.task);
    return { task: r.task, memories, replayed: r.replayed, pending_checkpoint: await c.pendingInfo(), data: checkpointDataOf(r.task) };
  });
}

/**
 * The turn, and the pending checkpoint's replay, in one commit. If the replay cannot commit, the
 * turn is begun without it (the checkpoint stays pending, with the reason).
 */
async function resumeOnce(c: ContractContext, messageId?: string): Promise<{ task: TaskState; replayed: ReplayInfo | null; failed: PendingCheckpoint | null }> {
  const waiting = await c.d.pending.read();
  if (waiting) {
    try {
      return await resumeTx(c, waiting, messageId);
    } catch (cause) {
      if (cause instanceof LongrunError) throw cause;
      const r = await resumeTx(c, null, messageId);
      return { ...r, failed: { ...waiting, error: describeCause(cause) } };
    }
  }
  return resumeTx(c, null, messageId);
}

function resumeTx(c: ContractContext, waiting: PendingCheckpoint | null, messageId?: string): Promise<{ task: TaskState; replayed: ReplayInfo | null; failed: null }> {
  return c.d.state.transact(async (tx) => {
    const live = await mustBeOpen(tx, "Not resumed");
    // the message that began this turn already: no second turn (a pending checkpoint is still saved)
    const sameMessage = messageId !== undefined && live.turn_message_id === messageId;
    if (sameMessage && !waiting && live.status !== "paused") return { task: live, replayed: null, failed: null };
    const now = c.now();
    let next = cloneState(live);
    let replayed: ReplayInfo | null = null;
    if (waiting) {
      const saved = await tx.saveMemory(waiting.record);
      replayed = { checkpoint_id: waiting.checkpoint_id, memory_id: saved.record.id, created: saved.created };
      if (waiting.task_id === live.task_id && live.last_checkpoint?.checkpoint_id !== waiting.checkpoint_id) {
        next = applyCheckpoint(next, waiting, saved.record.id, now);
      }
    }
    if (!sameMessage) {
      next.turn_index = next.turn_index + 1;
      next.turn_message_id = messageId ?? null;
      revokeLease(next, "resume", now);
    }
    if (next.status === "paused") setStatus(next, "in_progress", "resume", now);
    await commit(tx, live, next, now);
    return { task: next, replayed, failed: null };
  });
}

async function contextMemories(c: ContractContext, task: TaskState): Promise<MemoryHit[]> {
  return c.d.memory.recent(task.task_id, CONTEXT_MEMORIES);
}

/** The live state with a replayed checkpoint's effect applied (status, phase, next step). */
export function applyCheckpoint(base: TaskState, cp: PendingCheckpoint, memoryId: string, now: Date): TaskState {
  const next = cloneState(base);
  // a checkpoint that failed ended the lease then; whatever replays it ends it too
  revokeLease(next, "checkpoint replayed", now);
  if (next.status === "in_progress" && cp.state.status === "paused") {
    next.history = pushBounded(next.history, {
      at: now.toISOString(),
      from: "in_progress",
      to: "paused",
      reason: "checkpoint replayed",
      turn: next.turn_index,
    });
    next.status = "paused";
  }
  next.phase = cp.state.phase;
  next.next_step = cp.state.next_step;
  next.turn_index = Math.max(next.turn_index, cp.state.turn_index);
  const made = cp.state.last_checkpoint;
  next.last_checkpoint = {
    checkpoint_id: cp.checkpoint_id,
    memory_id: memoryId,
    at: cp.created_at,
    ...(made?.kind !== undefined ? { kind: made.kind } : {}),
    ...(made?.data !== undefined ? { data: made.data } : {}),
  };
  return next;
}
