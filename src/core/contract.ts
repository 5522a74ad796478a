/**
 * The task contract (seed 002): I1 search before create, I2 memory before checkpoint, I3 a write
 * lease covers one turn. Every mutation runs inside `StateStore.transact` (one root-wide lock,
 * compare-and-swap on `version`), on a copy of the state, and is saved only when whole.
 *
 * This file is the contract's face: `TaskContract` and its public methods. Each concept lives in
 * its own file under `./contract/`, as plain functions over the contract's internals
 * (`ContractContext`):
 *
 * - `start.ts`: which task is current (task.status, task.start, task.switch);
 * - `turns.ts`: turns and the write lease, and the write gate;
 * - `transition.ts`: task.transition and task.finish;
 * - `checkpoint.ts`: the checkpoint, and its fallback to the pending file;
 * - `resume.ts`: task.resume and the replay of a pending checkpoint;
 * - `recover.ts`: task.recover, from the newest checkpoint in memory (or a chosen one);
 * - `history.ts`: a task's checkpoints, one checkpoint, and task.fork.
 */
import type { GrantInput } from "./lease.ts";
import type { TaskStatus } from "./status.ts";
import { checkpoint } from "./contract/checkpoint.ts";
import { ContractContext } from "./contract/context.ts";
import { forkTask, getCheckpoint, listCheckpoints } from "./contract/history.ts";
import { recoverFromMemory } from "./contract/recover.ts";
import { resume } from "./contract/resume.ts";
import { startTask, status, switchTask } from "./contract/start.ts";
import { checkFinishable, finish, transition } from "./contract/transition.ts";
import { beginTurn, enableWrites, endTurn, requestWrites, requireWritable, requireWritableNow } from "./contract/turns.ts";
import type { Actor, CheckpointInput, ContractDeps } from "./contract/types.ts";

export { type Actor, type CheckpointInput, CONTEXT_MEMORIES, type ContractDeps, type PendingInfo, PROGRESS_KIND, type ReplayInfo } from "./contract/types.ts";

export class TaskContract {
  readonly #c: ContractContext;

  constructor(deps: ContractDeps) {
    this.#c = new ContractContext(deps);
  }

  /** The current task, or null; with the pending checkpoint, if one waits. */
  status(taskId?: string) {
    return status(this.#c, taskId);
  }

  /**
   * I1: searches this root's memory (given keywords, else keywords from the description) before
   * any state is created, then creates the task: in_progress, read-only, turn 1, and makes it the
   * root's current task. A task that was current and is still open goes on in the background (its
   * runs keep running), but its lease ends here: a lease never moves from one task to another.
   * The new task inherits nothing.
   */
  startTask(description: string, keywords?: readonly string[]) {
    return startTask(this.#c, description, keywords);
  }

  /**
   * Makes another open task of the root the current one. The turn ends: the task left behind
   * loses its lease, and the task switched to starts read-only (a lease never moves between tasks).
   */
  switchTask(taskId: string, reason = "switched") {
    return switchTask(this.#c, taskId, reason);
  }

  /**
   * Host side: a new user message began. Advances the turn and revokes any lease; given the
   * message's id, a message that already began this turn (by turn.begin or task.resume) begins
   * no second one, and the task comes back unchanged.
   */
  beginTurn(reason = "turn began", messageId?: string) {
    return beginTurn(this.#c, reason, messageId);
  }

  /** Host side: the turn ended. Revokes any lease; the turn number stays. */
  endTurn(reason = "turn ended") {
    return endTurn(this.#c, reason);
  }

  /** Host side: grants a write lease for the current turn only. */
  enableWrites(input: GrantInput) {
    return enableWrites(this.#c, input);
  }

  /** Agent side: asks for a lease. Recorded for the host to see; it never grants anything. */
  requestWrites(reason: string, scope: readonly string[] | null, by: string) {
    return requestWrites(this.#c, reason, scope, by);
  }

  /**
   * I3 gate check. Answers from a lock-free read when nothing must change; a stale lease is
   * revoked (and a counted use recorded) under the lock, re-checked there.
   */
  requireWritable(action: string) {
    return requireWritable(this.#c, action);
  }

  /** The gate check answered at once from state known to be current, or undefined: then call `requireWritable`. */
  requireWritableNow(action: string) {
    return requireWritableNow(this.#c, action);
  }

  /**
   * A whitelisted status change; leaving in_progress revokes the lease. Leaving
   * waiting_verification is the verifier's decision: the host's, never the agent's.
   */
  transition(to: TaskStatus, reason: string, by: Actor = "host", taskId?: string) {
    return transition(this.#c, to, reason, by, taskId);
  }

  /**
   * I2, by construction: on a copy of the task, revoke the lease (unless it is a progress
   * checkpoint), render the text with its machine line, and save the memory record and the new
   * state in one commit; only then return the text. A checkpoint still pending from an earlier
   * failure goes to memory first, in that same commit. If the commit fails, nothing of it is
   * saved: the checkpoint goes to the pending file (the gate reads the root as read-only while it
   * waits), the live state's lease is revoked, and `CheckpointWriteError` names the file; no text
   * is returned.
   */
  checkpoint(input: CheckpointInput) {
    return checkpoint(this.#c, input);
  }

  /**
   * Starts a new turn, read-only, on the stored task: replays a pending checkpoint once (memory
   * dedupes it by checkpoint id, so a repeated or interrupted replay never makes a second
   * record), moves paused back to in_progress, and returns the task's recent memories.
   */
  resume(messageId?: string) {
    return resume(this.#c, messageId);
  }

  /**
   * Rebuilds the task from the newest checkpoint machine line in this root's memory: a new
   * turn, read-only. An unreadable state file is moved aside first, never deleted.
   */
  recoverFromMemory(options: { force?: boolean; by?: Actor; checkpoint_id?: string } = {}) {
    return recoverFromMemory(this.#c, options);
  }

  /** A task's checkpoints (the current task's, or another's by task_id), newest first, paged. */
  checkpoints(options: { task_id?: string; limit?: number; cursor?: string } = {}) {
    return listCheckpoints(this.#c, options);
  }

  /** One checkpoint whole (text, data), of a task of this root. */
  getCheckpoint(checkpointId: string) {
    return getCheckpoint(this.#c, checkpointId);
  }

  /** A new current task that begins where a checkpoint left off; no lease, turn 1, read-only. */
  fork(checkpointId: string, description?: string) {
    return forkTask(this.#c, checkpointId, description);
  }

  /**
   * Whether `finish` would be refused on the task's own merits (who asks, its status), checked
   * before anything else is done for it (a host's `cancel_runs`): throws the error `finish` would.
   */
  checkFinishable(by: Actor = "host", taskId?: string) {
    return checkFinishable(this.#c, by, taskId);
  }

  /** Completes the task: the outcome record and the completed state commit together. */
  finish(summary = "", by: Actor = "host", taskId?: string) {
    return finish(this.#c, summary, by, taskId);
  }
}
