/**
 * Which task is current: task.status's read, task.start (I1: search before create) and
 * task.switch. A lease never moves from one task to another: the task left behind loses its lease.
 */
import { ConflictError, NotFoundError } from "../errors.ts";
import { extractKeywords, normalizeKeywords } from "../keywords.ts";
import { asSeen, revokeLease } from "../lease.ts";
import type { MemoryHit, StateTx } from "../ports.ts";
import { isTerminal } from "../status.ts";
import { cloneState, newTaskState, type TaskState } from "../task.ts";
import { commit, type ContractContext, setStatus } from "./context.ts";
import { CONTEXT_MEMORIES, type PendingInfo } from "./types.ts";

export async function status(c: ContractContext, taskId?: string): Promise<{ task: TaskState | null; pending_checkpoint: PendingInfo | null }> {
  const current = await c.d.state.load();
  const now = c.now();
  if (taskId === undefined || current?.task_id === taskId) {
    const pending = await c.pendingInfo();
    // what the gate would answer: a lease past its turn, time or uses, or ended by a checkpoint
    // that failed (pending, or its lease not ended in storage), reads as read-only
    const ended = pending !== null || (current !== null && c.leaseVoided(current));
    return { task: current && asSeen(current, now, ended), pending_checkpoint: pending };
  }
  const task = await c.d.state.loadTask(taskId);
  if (!task) throw new NotFoundError("task", taskId, "; task.list shows the tasks of this root");
  return { task: asSeen(task, now), pending_checkpoint: null };
}

export async function startTask(c: ContractContext, description: string, keywords?: readonly string[]): Promise<{ task: TaskState; memories: MemoryHit[]; previous_task: string | null }> {
  await c.d.state.load(); // an unreadable current state is state_corrupt before any search
  const terms = normalizeKeywords(keywords) ?? extractKeywords(description);
  // Even when no keyword can be extracted the search runs (on the description itself): an
  // empty result is fine, a skipped search is not.
  const found = await c.d.memory.search(terms.length ? terms : description, { limit: CONTEXT_MEMORIES });
  return c.d.state.transact(async (tx) => {
    const existing = await tx.load();
    const now = c.now();
    const at = now.toISOString();
    const taskId = await freeTaskId(c, tx, now, "started");
    const state = newTaskState(
      {
        task_id: taskId,
        description,
        keywords: terms,
        status: "pending",
        turn_index: 1,
        history: [{ at, from: null, to: "pending", reason: "task created", turn: 1 }],
      },
      at,
    );
    const previous = existing && !isTerminal(existing.status) ? await leaveCurrent(tx, existing, `task ${state.task_id} became the current task`, now) : existing;
    setStatus(state, "in_progress", "start_task", now);
    await commit(tx, previous, state, now);
    return { task: state, memories: found.hits, previous_task: existing && !isTerminal(existing.status) ? existing.task_id : null };
  });
}

/**
 * A task id not yet in this root. An id is the time to the second and 16 random bits: one already
 * taken (by a task, or by a deleted task's tombstone) is drawn again here, under the write lock,
 * so no task is ever overwritten by a new one and no new task inherits what named a deleted one.
 */
export async function freeTaskId(c: ContractContext, tx: StateTx, now: Date, what: "started" | "forked"): Promise<string> {
  let taskId = c.d.ids.taskId(now);
  for (let draw = 1; await tx.taskIdTaken(taskId); draw++) {
    if (draw >= 16) throw new ConflictError(`Task not ${what}: no free task id could be drawn for ${now.toISOString()}; retry`, { reason: "task_id_taken" });
    taskId = c.d.ids.taskId(now);
  }
  return taskId;
}

/** The current task stops being current: its lease ends (the turn ends for it); it keeps its status. */
export async function leaveCurrent(tx: StateTx, live: TaskState, why: string, now: Date): Promise<TaskState> {
  const next = revokeLease(cloneState(live), why, now);
  next.version = live.version + 1;
  next.updated_at = now.toISOString();
  await tx.saveTask(next, live.version);
  return next;
}

export function switchTask(c: ContractContext, taskId: string, reason: string): Promise<TaskState> {
  return c.d.state.transact(async (tx) => {
    const existing = await tx.load();
    if (existing?.task_id === taskId) return existing;
    const target = await tx.loadTask(taskId);
    if (!target) throw new NotFoundError("task", taskId, "; task.list shows the tasks of this root");
    if (isTerminal(target.status)) {
      throw new ConflictError(`Task ${taskId} is ${target.status}; a finished task cannot become current again (task.start begins a new one)`, {
        reason: "task_finished",
        task_id: taskId,
        status: target.status,
      });
    }
    const now = c.now();
    if (existing && !isTerminal(existing.status)) await leaveCurrent(tx, existing, `switched to task ${taskId}`, now);
    const next = revokeLease(cloneState(target), `became current again (${reason})`, now);
    next.version = target.version + 1;
    next.updated_at = now.toISOString();
    await tx.saveTask(next, target.version);
    await tx.setCurrent(taskId);
    return next;
  });
}
