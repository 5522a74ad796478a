/**
 * task.recover: rebuilds the task from the newest checkpoint machine line in this root's memory
 * (a new turn, read-only), when the task state is lost or unreadable. An unreadable state file is
 * moved aside first, never deleted.
 */
import { type CheckpointData, parseMachineLine } from "../checkpoint.ts";
import { ConflictError, NotFoundError, StateCorruptError, UnauthorizedError } from "../errors.ts";
import { isTerminal } from "../status.ts";
import { newTaskState, pushBounded, type TaskState } from "../task.ts";
import { checkpointDataOf, type ContractContext, setStatus } from "./context.ts";
import { findCheckpoint } from "./history.ts";
import type { Actor } from "./types.ts";

export async function recoverFromMemory(c: ContractContext, options: { force?: boolean; by?: Actor; checkpoint_id?: string }): Promise<{ task: TaskState | null; memory_id: string | null; quarantined: string | null; data: CheckpointData | null }> {
  if (options.force && options.by === "agent") {
    throw new UnauthorizedError("Refused: only the host may force task.recover over a readable state", { method: "task.recover", side_required: "host", side: "agent" });
  }
  if (options.checkpoint_id !== undefined && options.by === "agent") {
    throw new UnauthorizedError("Refused: task.recover from a chosen checkpoint (checkpoint_id) is the host's: it takes the task back in time", { method: "task.recover", side_required: "host", side: "agent" });
  }
  // read before the transaction: memory is not read inside a state transaction
  // a chosen checkpoint (host only) takes the task back over a readable state, as force does
  const chosen = options.checkpoint_id !== undefined;
  const found = chosen ? await findCheckpoint(c, options.checkpoint_id!) : await newestMachineState(c);
  const force = options.force || chosen;
  return c.d.state.transact(async (tx) => {
    let live: TaskState | null = null;
    let corrupt = false;
    try {
      live = await tx.load();
    } catch (e) {
      if (!(e instanceof StateCorruptError)) throw e;
      corrupt = true;
    }
    let quarantined: string | null = null;
    if (corrupt) {
      // an unreadable state never blocks the root for ever: it is moved aside (kept) first
      quarantined = await tx.quarantine();
      try {
        live = await tx.load();
      } catch (e) {
        if (!(e instanceof StateCorruptError)) throw e;
        // a stray file went aside and the task's own state is unreadable too
        quarantined = [quarantined, await tx.quarantine()].filter((q) => q !== null).join("; ") || null;
        live = null;
      }
      // only a stray file was unreadable: the task's state reads, and stays as it is
      if (live) return { task: live, memory_id: null, quarantined, data: checkpointDataOf(live) };
      // nothing to rebuild from: the root has no task; task.start begins one
      if (!found) return { task: null, memory_id: null, quarantined, data: null };
    }
    if (!found) {
      throw new NotFoundError(
        "checkpoint",
        "",
        "",
        "Nothing to recover: this root's memory holds no checkpoint with a machine line; start a task with task.start",
      );
    }
    const { record, machine } = found;
    if (live && !force && live.task_id === machine.task_id && !isTerminal(live.status)) {
      throw new ConflictError(
        `Not recovered: the task state is readable and holds task ${live.task_id} (${live.status}); recovery rebuilds a lost or corrupt state. ` +
          `Use task.resume to continue it; the host may force recovery from the last checkpoint`,
        { reason: "state_readable", task_id: live.task_id, status: live.status, checkpoint_task_id: machine.task_id },
      );
    }
    if (live && (live.task_id !== machine.task_id || isTerminal(live.status))) {
      throw new ConflictError(
        `Not recovered: the task state is readable and holds task ${live.task_id} (${live.status}); recovery rebuilds a lost or ` +
          `corrupt state, or the same task in progress, and would ${live.task_id !== machine.task_id ? `replace it with task ${machine.task_id}${chosen ? " (task.switch to it first)" : ""}` : "bring a finished task back"}`,
        { reason: "state_readable", task_id: live.task_id, status: live.status, checkpoint_task_id: machine.task_id },
      );
    }
    const now = c.now();
    const at = now.toISOString();
    const kept = live !== null && live.task_id === machine.task_id ? live : null;
    const turn = Math.max(machine.turn_index, live?.task_id === machine.task_id ? live.turn_index : 0) + 1;
    const next = newTaskState(
      {
        task_id: machine.task_id,
        description: machine.description,
        keywords: machine.keywords,
        status: machine.status,
        turn_index: turn,
        phase: machine.phase,
        next_step: machine.next_step,
        created_at: machine.created_at || at,
        last_checkpoint: { checkpoint_id: machine.checkpoint_id, memory_id: record.id, at: machine.saved_at, kind: machine.kind, data: machine.data },
        // recovered over the same task's readable state: its history and lease log go on
        history: pushBounded(kept?.history ?? [], { at, from: kept?.status ?? null, to: machine.status, reason: `recovered from ${chosen ? `checkpoint ${machine.checkpoint_id}, ` : ""}memory ${record.id}`, turn }),
        lease_log: pushBounded(kept?.lease_log ?? [], { at, event: "revoked", turn, reason: "recover" }),
        ...(kept?.forked_from ? { forked_from: kept.forked_from } : {}),
      },
      at,
    );
    if (next.status === "paused") setStatus(next, "in_progress", "recover", now);
    next.version = Math.max(live?.version ?? 0, machine.version) + 1;
    await tx.save(next, live ? live.version : null);
    return { task: next, memory_id: record.id, quarantined, data: machine.data };
  });
}

async function newestMachineState(c: ContractContext) {
  for (const record of await c.d.memory.stateRecords(20)) {
    const machine = parseMachineLine(record.content);
    if (machine) return { record, machine };
  }
  return null;
}
