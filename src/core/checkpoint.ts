/**
 * Checkpoint text: a part for people and one machine line for programs, in the same record.
 * Recovery never guesses the status from prose; it parses the machine line.
 */
import type { TaskStatus } from "./status.ts";
import { isTaskStatus } from "./status.ts";
import type { TaskState } from "./task.ts";

export const MACHINE_LINE_PREFIX = "<!-- longrun-state: ";
const MACHINE_LINE_SUFFIX = " -->";

/** What the machine line carries: enough to rebuild the task without the state file. */
export interface MachineState {
  task_id: string;
  description: string;
  keywords: string[];
  status: TaskStatus;
  access_mode: "read_only";
  turn_index: number;
  phase: string;
  next_step: string;
  version: number;
  checkpoint_id: string;
  saved_at: string;
  created_at: string;
}

/** JSON that can sit inside an HTML comment: `<`, `>` and `&` are written as \u escapes. */
function commentSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

export function machineLine(state: TaskState, checkpointId: string, savedAt: string): string {
  const m: MachineState = {
    task_id: state.task_id,
    description: state.description,
    keywords: state.keywords,
    status: state.status,
    access_mode: "read_only",
    turn_index: state.turn_index,
    phase: state.phase,
    next_step: state.next_step,
    version: state.version,
    checkpoint_id: checkpointId,
    saved_at: savedAt,
    created_at: state.created_at,
  };
  return MACHINE_LINE_PREFIX + commentSafeJson(m) + MACHINE_LINE_SUFFIX;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

export interface CheckpointContent {
  summary: string;
  kind: string;
}

/** Renders the checkpoint record: human lines, then the machine line last. */
export function renderCheckpoint(state: TaskState, content: CheckpointContent, checkpointId: string, savedAt: string): string {
  const lines = [
    "[LongRun Checkpoint]",
    `task: ${state.task_id} · ${oneLine(state.description, 120)}`,
    `status: ${state.status} · gate: ${state.access_mode} · turn: ${state.turn_index}`,
    `phase: ${state.phase || "-"}`,
    `next step: ${state.next_step || "-"}`,
    `summary: ${content.summary}`,
    `kind: ${content.kind} · saved: ${savedAt}`,
    machineLine(state, checkpointId, savedAt),
  ];
  return lines.join("\n");
}

/** The newest machine line in `text`, or null when there is none or it does not parse. */
export function parseMachineLine(text: string): MachineState | null {
  const start = text.lastIndexOf(MACHINE_LINE_PREFIX);
  if (start < 0) return null;
  const end = text.indexOf(MACHINE_LINE_SUFFIX, start + MACHINE_LINE_PREFIX.length);
  if (end < 0) return null;
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start + MACHINE_LINE_PREFIX.length, end));
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  const str = (k: string) => (typeof v[k] === "string" ? (v[k] as string) : null);
  const taskId = str("task_id");
  const checkpointId = str("checkpoint_id");
  if (!taskId || !checkpointId || !isTaskStatus(v.status)) return null;
  if (typeof v.turn_index !== "number" || !Number.isInteger(v.turn_index) || v.turn_index < 0) return null;
  return {
    task_id: taskId,
    description: str("description") ?? "",
    keywords: Array.isArray(v.keywords) ? v.keywords.filter((k): k is string => typeof k === "string") : [],
    status: v.status,
    access_mode: "read_only",
    turn_index: v.turn_index,
    phase: str("phase") ?? "",
    next_step: str("next_step") ?? "",
    version: typeof v.version === "number" ? v.version : 0,
    checkpoint_id: checkpointId,
    saved_at: str("saved_at") ?? "",
    created_at: str("created_at") ?? str("saved_at") ?? "",
  };
}
