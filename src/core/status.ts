/**
 * The seven task statuses and the only legal transitions between them (seed 002, section 四).
 * "Stopped" has three meanings kept apart: paused (progress saved, waiting to resume), blocked
 * (an external condition) and waiting_verification (done, waiting for a person to accept).
 */
import { TransitionError } from "./errors.ts";

export const TASK_STATUSES = [
  "pending",
  "in_progress",
  "paused",
  "blocked",
  "waiting_verification",
  "completed",
  "failed",
] as const;

export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  pending: ["in_progress"],
  in_progress: ["paused", "blocked", "waiting_verification", "completed", "failed"],
  paused: ["in_progress", "failed"],
  blocked: ["in_progress", "failed"],
  waiting_verification: ["in_progress", "completed", "failed"],
  completed: [],
  failed: [],
};

export function isTaskStatus(value: unknown): value is TaskStatus {
  return typeof value === "string" && (TASK_STATUSES as readonly string[]).includes(value);
}

export function isTerminal(status: TaskStatus): boolean {
  return TRANSITIONS[status].length === 0;
}

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Throws `TransitionError` (from, to, allowed) unless `from -> to` is in the whitelist. */
export function assertTransition(from: TaskStatus, to: TaskStatus): void {
  if (!canTransition(from, to)) throw new TransitionError(from, to, TRANSITIONS[from]);
}
