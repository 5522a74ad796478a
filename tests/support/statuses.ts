/**
 * The task status machine written out by hand: the oracle of tests/core/status.test.ts and of the
 * reference model (tests/model/model.ts). Never imported from src/: a change to the code's table
 * must be made here too, on purpose.
 */
export type Status = "pending" | "in_progress" | "paused" | "blocked" | "waiting_verification" | "completed" | "failed";

/** Where each status may go next. */
export const LEGAL_TRANSITIONS: Readonly<Record<Status, readonly Status[]>> = {
  pending: ["in_progress"],
  in_progress: ["paused", "blocked", "waiting_verification", "completed", "failed"],
  paused: ["in_progress", "failed"],
  blocked: ["in_progress", "failed"],
  waiting_verification: ["in_progress", "completed", "failed"],
  completed: [],
  failed: [],
};
