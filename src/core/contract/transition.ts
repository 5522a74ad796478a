/**
 * Status changes a caller asks for: task.transition (along the whitelist in `../status.ts`) and
 * task.finish, which saves the outcome record and the completed state in one commit. Both may
 * address the current task or another by id; leaving waiting_verification is the host's decision.
 */
import { machineLine } from "../checkpoint.ts";
import { ConflictError, describeCause, InternalError, LongrunError, NoActiveTaskError, NotFoundError, UnauthorizedError } from "../errors.ts";
import { revokeLease } from "../lease.ts";
import type { StateTx } from "../ports.ts";
import { assertTransition, isTerminal, type TaskStatus } from "../status.ts";
import { cloneState, type TaskState } from "../task.ts";
import { commit, type ContractContext, mustLoad, setStatus } from "./context.ts";
import type { Actor } from "./types.ts";

export function transition(c: ContractContext, to: TaskStatus, reason: string, by: Actor, taskId?: string): Promise<TaskState> {
  return c.d.state.transact(async (tx) => {
    const { live, current } = await target(tx, taskId);
    refuseSelfVerification(live, by, `task.transition to ${to}`);
    if (isTerminal(to)) await refuseOpenRuns(tx, live, `task.transition to ${to}`);
    const now = c.now();
    const next = cloneState(live);
    setStatus(next, to, reason, now);
    return commitTarget(tx, live, next, now, current);
  });
}

export async function checkFinishable(c: ContractContext, by: Actor, taskId?: string): Promise<void> {
  const live = taskId === undefined ? await mustLoad(c.d.state) : await c.d.state.loadTask(taskId);
  if (!live) throw new NotFoundError("task", taskId ?? "", "; task.list shows the tasks of this root");
  refuseSelfVerification(live, by, "task.finish");
  assertTransition(live.status, "completed");
}

export function finish(c: ContractContext, summary: string, by: Actor, taskId?: string): Promise<{ task: TaskState; memory_id: string }> {
  return c.d.state.transact(async (tx) => {
    const { live, current } = await target(tx, taskId);
    refuseSelfVerification(live, by, "task.finish");
    assertTransition(live.status, "completed");
    await refuseOpenRuns(tx, live, "task.finish");
    const now = c.now();
    const next = cloneState(live);
    setStatus(next, "completed", "finish", now);
    revokeLease(next, "finished", now);
    const content = [
      "[LongRun Outcome]",
      `task: ${live.task_id} · completed at turn ${live.turn_index}`,
      `description: ${live.description}`,
      `summary: ${summary || "-"}`,
      machineLine(next, `outcome-${live.task_id}`, now.toISOString(), { kind: "outcome", data: live.last_checkpoint?.data ?? {} }),
    ].join("\n");
    let memoryId: string;
    try {
      memoryId = (
        await tx.saveMemory({
          type: "outcome",
          title: `[LongRun Outcome] ${live.task_id}`,
          content,
          keywords: ["longrun", "outcome", live.task_id],
          task_id: live.task_id,
          dedupe_key: `outcome:${live.task_id}`,
        })
      ).record.id;
    } catch (cause) {
      if (cause instanceof LongrunError) throw cause;
      throw new InternalError(
        `Task not finished: the outcome record could not be saved to memory (${describeCause(cause)}); ` +
          `the task stays ${live.status}; fix the memory database and call task.finish again`,
        cause,
      );
    }
    await commitTarget(tx, live, next, now, current);
    return { task: next, memory_id: memoryId };
  });
}

/** The task a call addresses: the current one, or another by id (which must exist). */
async function target(tx: StateTx, taskId: string | undefined): Promise<{ live: TaskState; current: boolean }> {
  const current = await tx.load();
  if (taskId === undefined || current?.task_id === taskId) {
    if (!current) throw new NoActiveTaskError();
    return { live: current, current: true };
  }
  const live = await tx.loadTask(taskId);
  if (!live) throw new NotFoundError("task", taskId, "; task.list shows the tasks of this root");
  return { live, current: false };
}

/** Saves a change of the addressed task: the current one by `#commit`, another by its own version. */
async function commitTarget(tx: StateTx, live: TaskState, next: TaskState, now: Date, current: boolean): Promise<TaskState> {
  if (current) return commit(tx, live, next, now);
  next.version = live.version + 1;
  next.updated_at = now.toISOString();
  await tx.saveTask(next, live.version);
  return next;
}

/**
 * A task ends only when its runs have: a run left running under a finished task could go on
 * beginning effects. Checked in the transaction that ends the task (a run starts in one that
 * checks the task is open), so neither can slip past the other.
 */
async function refuseOpenRuns(tx: StateTx, live: TaskState, what: string): Promise<void> {
  const open = await tx.openRuns(live.task_id);
  if (!open.length) return;
  throw new ConflictError(
    `Refused: ${what}: task ${live.task_id} still has ${open.length === 1 ? "a run" : "runs"} running or parked (${open.join(", ")}); ` +
      `finish or cancel ${open.length === 1 ? "it" : "them"} first (run.finish, run.cancel), or call task.finish with cancel_runs: true`,
    { reason: "open_runs", task_id: live.task_id, runs: open },
  );
}

/** Leaving waiting_verification is the verifier's (the host's) decision, checked under the lock. */
function refuseSelfVerification(live: TaskState, by: Actor, what: string): void {
  if (by !== "agent" || live.status !== "waiting_verification") return;
  throw new UnauthorizedError(
    `Refused: task ${live.task_id} is waiting_verification, and only the host (the person verifying) decides what happens next (${what}); ` +
      `ask the user to accept it or send it back`,
    { method: what.split(" ")[0], side_required: "host", side: "agent", task_id: live.task_id },
  );
}
