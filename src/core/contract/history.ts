/**
 * A task's checkpoint history: task.checkpoints (its checkpoints, newest first, paged),
 * checkpoint.get (one, whole) and task.fork (a new task that begins where an older checkpoint
 * left off). Checkpoints are the memory records task.checkpoint saved (never one memory.save
 * made: those cannot carry a checkpoint's key), read back through their machine line.
 * task.recover from a chosen checkpoint lives with recovery (`recover.ts`).
 */
import { type CheckpointData, type MachineState, parseMachineLine } from "../checkpoint.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import { LIMITS } from "../limits.ts";
import type { MemoryRecord } from "../ports.ts";
import { isTerminal, type TaskStatus } from "../status.ts";
import { newTaskState, type TaskState } from "../task.ts";
import { commit, type ContractContext, setStatus } from "./context.ts";
import { freeTaskId, leaveCurrent } from "./start.ts";

/** One line of a task's checkpoint list. */
export interface CheckpointEntry {
  checkpoint_id: string;
  task_id: string;
  /** `progress` (the task kept running) or `pause` (it paused, the lease ended); `label` is what was asked (`manual`, `stop`, …). */
  kind: "pause" | "progress";
  label: string;
  /** The summary, cut to `LIMITS.short_text_chars` in a list (`summary_truncated`); whole in checkpoint.get. */
  summary: string;
  summary_truncated: boolean;
  next_step: string;
  phase: string;
  status: TaskStatus;
  turn_index: number;
  saved_at: string;
  memory_id: string;
}

/** One checkpoint whole: its entry, its text and its data. */
export interface CheckpointFull extends CheckpointEntry {
  description: string;
  text: string;
  data: CheckpointData;
}

/** A checkpoint record and its machine line, checked to belong together. */
export interface FoundCheckpoint {
  record: MemoryRecord;
  machine: MachineState;
}

const notFound = (id: string) => new NotFoundError("checkpoint", id, "; task.checkpoints lists a task's checkpoints");

/** The checkpoint of that id in this root's memory, or not_found (also when its record does not read as one). */
export async function findCheckpoint(c: ContractContext, checkpointId: string): Promise<FoundCheckpoint> {
  const record = await c.d.memory.checkpointRecord(checkpointId);
  const machine = record && parseMachineLine(record.content);
  // the record's own task and id must be the machine line's: anything else is not this checkpoint
  if (!record || !machine || machine.checkpoint_id !== checkpointId || machine.task_id !== record.task_id) throw notFound(checkpointId);
  return { record, machine };
}

export async function listCheckpoints(c: ContractContext, options: { task_id?: string; limit?: number; cursor?: string }): Promise<{ task_id: string; checkpoints: CheckpointEntry[]; next_cursor: string | null }> {
  const task = options.task_id === undefined ? await c.d.state.load() : await c.d.state.loadTask(options.task_id);
  if (!task) {
    if (options.task_id === undefined) throw new NotFoundError("task", "", "", "No current task: give task_id (task.list shows the tasks of this root)");
    throw new NotFoundError("task", options.task_id, "; task.list shows the tasks of this root");
  }
  const limit = Math.min(options.limit ?? 20, LIMITS.checkpoints_page);
  const records = await c.d.memory.checkpointRecords(task.task_id, limit + 1, options.cursor);
  const page = records.slice(0, limit);
  const checkpoints: CheckpointEntry[] = [];
  for (const record of page) {
    const machine = parseMachineLine(record.content);
    if (machine && machine.task_id === task.task_id) checkpoints.push(entryOf(record, machine, LIMITS.short_text_chars));
  }
  return { task_id: task.task_id, checkpoints, next_cursor: records.length > limit ? page[page.length - 1]!.id : null };
}

export async function getCheckpoint(c: ContractContext, checkpointId: string): Promise<CheckpointFull> {
  const { record, machine } = await findCheckpoint(c, checkpointId);
  // only a checkpoint of a task this root holds
  if (!(await c.d.state.loadTask(machine.task_id))) throw notFound(checkpointId);
  return { ...entryOf(record, machine, Infinity), description: machine.description, text: record.content, data: machine.data };
}

/**
 * A new task from an older checkpoint: its description (or the one given), keywords, phase,
 * next step and data, its status as a recovered task's (paused goes on as in_progress), turn 1,
 * read-only. It inherits no lease, no run grants and no terms (those belong to the parent's id).
 * It becomes current as task.start's task does: an open current task goes on in the background
 * without its lease.
 */
export async function forkTask(c: ContractContext, checkpointId: string, description?: string): Promise<{ task: TaskState; previous_task: string | null; data: CheckpointData }> {
  const { record, machine } = await findCheckpoint(c, checkpointId);
  return c.d.state.transact(async (tx) => {
    if (!(await tx.loadTask(machine.task_id))) throw notFound(checkpointId);
    if (isTerminal(machine.status)) {
      throw new ConflictError(`Not forked: checkpoint ${checkpointId} holds a finished task (${machine.status})`, { reason: "task_finished", checkpoint_id: checkpointId });
    }
    const existing = await tx.load();
    const now = c.now();
    const at = now.toISOString();
    const taskId = await freeTaskId(c, tx, now, "forked");
    const reason = `forked from task ${machine.task_id} at checkpoint ${checkpointId} (memory ${record.id})`;
    const state = newTaskState(
      {
        task_id: taskId,
        description: description ?? machine.description,
        keywords: machine.keywords,
        status: machine.status,
        turn_index: 1,
        phase: machine.phase,
        next_step: machine.next_step,
        created_at: at,
        last_checkpoint: { checkpoint_id: machine.checkpoint_id, memory_id: record.id, at: machine.saved_at, kind: machine.kind, data: machine.data },
        history: [{ at, from: null, to: machine.status, reason, turn: 1 }],
        lease_log: [{ at, event: "revoked", turn: 1, reason: "fork" }],
        forked_from: { task_id: machine.task_id, checkpoint_id: checkpointId },
      },
      at,
    );
    if (state.status === "paused") setStatus(state, "in_progress", "fork", now);
    const open = existing && !isTerminal(existing.status);
    const previous = open ? await leaveCurrent(tx, existing, `task ${taskId} (a fork) became the current task`, now) : existing;
    await commit(tx, previous, state, now);
    return { task: state, previous_task: open ? existing.task_id : null, data: machine.data };
  });
}

function entryOf(record: MemoryRecord, m: MachineState, summaryMax: number): CheckpointEntry {
  const summary = summaryOf(record.content, m);
  const cut = summary.length > summaryMax;
  return {
    checkpoint_id: m.checkpoint_id,
    task_id: m.task_id,
    kind: m.kind === "progress" ? "progress" : "pause",
    label: m.kind,
    summary: cut ? summary.slice(0, summaryMax) : summary,
    summary_truncated: cut,
    next_step: m.next_step,
    phase: m.phase,
    status: m.status,
    turn_index: m.turn_index,
    saved_at: m.saved_at,
    memory_id: record.id,
  };
}

/**
 * The summary out of a checkpoint's text (it is not in the machine line): the lines after the
 * task, status, phase and next-step lines (phase and next step may span lines: their values are
 * known from the machine line), before the kind line and the machine line; its label dropped.
 */
export function summaryOf(text: string, m: MachineState): string {
  const lines = text.split("\n");
  const start = 3 + (m.phase || "-").split("\n").length + (m.next_step || "-").split("\n").length;
  const body = lines.slice(start, Math.max(start, lines.length - 2));
  if (body.length === 0) return "";
  const first = body[0]!;
  const colon = /^[^:：]*?(: |：)/.exec(first);
  body[0] = colon ? first.slice(colon[0].length) : first;
  return body.join("\n");
}
