/**
 * What a method answers when its root could not even be opened (memory.db gone, damaged, locked),
 * as a table: a method not named here gives the opening error as it is. A checkpoint still ends
 * the lease then (the empty pending marker), and answers as a failed checkpoint.
 */
import { checkpointWithoutRoot } from "../store/pending_file.ts";

/** Method name → the error to give, from the root's pending-checkpoint path (null: none) and the opening error. */
export const ROOT_UNAVAILABLE: Readonly<Record<string, (pendingPath: string | null, cause: unknown) => Error | null>> = {
  "task.checkpoint": checkpointWithoutRoot,
};
