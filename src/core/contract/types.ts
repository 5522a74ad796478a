/**
 * The task contract's own vocabulary: what it is built from (`ContractDeps`), what a checkpoint
 * takes, who asks, and the shapes it answers with. Re-exported by `../contract.ts`.
 */
import type { CheckpointData, CheckpointLang } from "../checkpoint.ts";
import type { Clock, CrashPoint, IdSource, MemoryStore, PendingStore, StateStore } from "../ports.ts";

export interface ContractDeps {
  state: StateStore;
  pending: PendingStore;
  memory: MemoryStore;
  clock: Clock;
  ids: IdSource;
  crash?: CrashPoint;
  /** The root's checkpoint language (its settings), when it has one; a request's `lang` wins. */
  checkpointLang?: () => CheckpointLang | null;
}

export interface CheckpointInput {
  summary: string;
  next_step: string;
  phase?: string;
  /**
   * A label for the record (`manual`, `stop`, …). `progress` makes a progress checkpoint: saved in
   * the same order with the same fallback, but the task keeps running and the lease stands.
   */
  kind?: string;
  /**
   * The host's own state (a JSON object, at most `LIMITS.checkpoint_data_chars` as compact JSON):
   * saved in the checkpoint's machine line and in the task's `last_checkpoint`, given back by
   * resume and recover, so a loop never parses its position back out of `next_step`. Omitted, the
   * last checkpoint's data is carried over; `{}` clears it.
   */
  data?: CheckpointData;
  /** The language of the text for people (`en`, `zh`, `ko`); default: the root's setting, else English. */
  lang?: CheckpointLang;
}

/** Who asks: the host speaks for the user (and verifies); the agent does the work. */
export type Actor = "host" | "agent";

/** The checkpoint kind that neither pauses the task nor revokes the lease. */
export const PROGRESS_KIND = "progress";

export interface PendingInfo {
  path: string;
  checkpoint_id: string;
  task_id: string;
  created_at: string;
  error: string | null;
  /** The checkpoint could not be kept at all (the file is an empty marker): nothing will be replayed. */
  lost?: true;
}

export interface ReplayInfo {
  checkpoint_id: string;
  memory_id: string;
  /** False when memory already held this checkpoint (an earlier replay got that far). */
  created: boolean;
}

/** How many memories task.start / task.resume return. */
export const CONTEXT_MEMORIES = 8;
