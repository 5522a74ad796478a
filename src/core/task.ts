/**
 * The task state: what `state.json` holds and what every result carries (snake_case on purpose,
 * so the same object is the file format, the wire format and the checkpoint's machine line).
 */
import type { TaskStatus } from "./status.ts";

export type AccessMode = "read_only" | "writable";

/** Current state-file format. Files without it (or without `write_lease_turn`) are legacy. */
export const STATE_FORMAT = 3;

/** A write lease: who granted it, for which turn, why, and its optional tighter bounds. */
export interface Lease {
  turn: number;
  reason: string;
  granted_by: string;
  granted_at: string;
  scope: string[] | null;
  expires_at: string | null;
  max_uses: number | null;
  uses: number;
}

/** One line of the lease log: grants, revocations and requests, newest last, bounded. */
export interface LeaseEvent {
  at: string;
  event: "granted" | "revoked" | "requested";
  turn: number;
  reason: string;
  by?: string;
  scope?: string[] | null;
}

export interface StatusChange {
  at: string;
  from: TaskStatus | null;
  to: TaskStatus;
  reason: string;
  turn: number;
}

export interface CheckpointRef {
  checkpoint_id: string;
  memory_id: string;
  at: string;
  /** The checkpoint's kind (`manual`, `progress`, …); absent in states saved before it was kept. */
  kind?: string;
  /** The host's own state saved with the checkpoint (a JSON object); absent in older states. */
  data?: Record<string, unknown>;
}

export interface TaskState {
  format: number;
  task_id: string;
  /** The user's words, verbatim. Never rewritten by a summary. */
  description: string;
  keywords: string[];
  status: TaskStatus;
  access_mode: AccessMode;
  turn_index: number;
  /**
   * The host's id of the user message that began this turn (`turn.begin`, `task.resume`), when it
   * gave one: the same id again begins no second turn. Absent in older states.
   */
  turn_message_id?: string | null;
  /** The turn the write lease was granted for; the lease is valid only while it equals `turn_index`. */
  write_lease_turn: number | null;
  lease: Lease | null;
  phase: string;
  next_step: string;
  created_at: string;
  updated_at: string;
  /** Increases by one on every save; writers compare-and-swap on it. */
  version: number;
  last_checkpoint: CheckpointRef | null;
  history: StatusChange[];
  lease_log: LeaseEvent[];
  /** A task made by task.fork: the task and checkpoint it began from. Absent otherwise. */
  forked_from?: { task_id: string; checkpoint_id: string } | null;
}

/** How many history and lease-log entries a state keeps (older ones are dropped, newest kept). */
export const LOG_LIMIT = 100;

export function pushBounded<T>(list: T[], item: T, limit = LOG_LIMIT): T[] {
  const next = [...list, item];
  return next.length > limit ? next.slice(next.length - limit) : next;
}

/** A read-only task with no lease, no checkpoint and empty logs; `fields` fill in the rest. */
export function newTaskState(
  fields: Pick<TaskState, "task_id" | "description" | "keywords" | "status" | "turn_index"> & Partial<TaskState>,
  at: string,
): TaskState {
  return {
    format: STATE_FORMAT,
    access_mode: "read_only",
    write_lease_turn: null,
    lease: null,
    phase: "",
    next_step: "",
    created_at: at,
    updated_at: at,
    version: 0,
    last_checkpoint: null,
    history: [],
    lease_log: [],
    ...fields,
  };
}

/** A deep copy, so a failed operation never leaves a half-changed state behind. */
export function cloneState(state: TaskState): TaskState {
  return JSON.parse(JSON.stringify(state)) as TaskState; // a state is JSON (it is stored as JSON); a third of structuredClone's time here
}
