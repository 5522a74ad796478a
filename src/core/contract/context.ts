/**
 * What every part of the task contract shares: its dependencies and the one piece of process
 * state it keeps (a lease this process holds void), plus the helpers each part uses to load and
 * save the task. Every mutation runs inside `StateStore.transact`, on a copy of the state, and is
 * saved only when whole (`commit`).
 */
import type { CheckpointData } from "../checkpoint.ts";
import { NoActiveTaskError } from "../errors.ts";
import { revokeLease } from "../lease.ts";
import type { StateStore, StateTx } from "../ports.ts";
import { assertTransition, isTerminal, type TaskStatus } from "../status.ts";
import { pushBounded, type TaskState } from "../task.ts";
import type { ContractDeps, PendingInfo } from "./types.ts";

/** The contract's internals, handed to each part (one per `TaskContract`, never shared between them). */
export class ContractContext {
  /**
   * A failed checkpoint whose lease could not be ended in the database: this process refuses
   * writes while the stored task is still at (or before) this version.
   */
  voidLease: { through_version: number } | null = null;

  constructor(readonly d: ContractDeps) {}

  crash(point: string): void {
    this.d.crash?.(point);
  }

  now(): Date {
    return this.d.clock.now();
  }

  leaseVoided(seen: TaskState): boolean {
    return this.voidLease !== null && seen.version <= this.voidLease.through_version;
  }

  async pendingInfo(): Promise<PendingInfo | null> {
    if (this.d.pending.lost()) {
      return { path: this.d.pending.path, checkpoint_id: "", task_id: "", created_at: "", error: "a checkpoint failed and could not be kept (storage full or failing): nothing to replay; task.resume clears this", lost: true };
    }
    const p = await this.d.pending.read();
    if (!p) return null;
    return {
      path: this.d.pending.path,
      checkpoint_id: p.checkpoint_id,
      task_id: p.task_id,
      created_at: p.created_at,
      error: p.error,
    };
  }
}

export async function mustLoad(tx: StateTx | StateStore): Promise<TaskState> {
  const state = await tx.load();
  if (!state) throw new NoActiveTaskError();
  return state;
}

/** The task, which must exist and not be finished (completed or failed). */
export async function mustBeOpen(tx: StateTx, what: string): Promise<TaskState> {
  const state = await mustLoad(tx);
  if (isTerminal(state.status)) {
    throw new NoActiveTaskError(`${what}: task ${state.task_id} is ${state.status}; start a new task with task.start`, {
      task_id: state.task_id,
      status: state.status,
    });
  }
  return state;
}

/** Saves `next` as the successor of `prev` (version + 1, updated_at now). */
export async function commit(tx: StateTx, prev: TaskState | null, next: TaskState, now: Date): Promise<TaskState> {
  next.version = (prev?.version ?? 0) + 1;
  next.updated_at = now.toISOString();
  await tx.save(next, prev ? prev.version : null);
  return next;
}

export function setStatus(state: TaskState, to: TaskStatus, reason: string, now: Date): void {
  assertTransition(state.status, to);
  state.history = pushBounded(state.history, {
    at: now.toISOString(),
    from: state.status,
    to,
    reason,
    turn: state.turn_index,
  });
  if (state.status === "in_progress" && to !== "in_progress") revokeLease(state, `status ${to}`, now);
  state.status = to;
}

/** The last checkpoint's data: `{}` when it carried none (an older one), null when there is no checkpoint. */
export function checkpointDataOf(task: TaskState): CheckpointData | null {
  return task.last_checkpoint ? (task.last_checkpoint.data ?? {}) : null;
}
