/**
 * A state transaction without the lock (`StateStore.transact`'s `optimistic`, a checkpoint): its
 * function runs on the task as the store last saw it, what it saves is written as statements, and
 * those go in one batch (`SqlConn.batch`: one transaction, on a server one request) whose
 * compare-and-set commits them only if the stored task is still, to the byte, the one it ran on,
 * and whose memory inserts commit only under the numbers they were given. Anything else, and the
 * function runs again as a plain transaction: nothing of the batch was written.
 */
import { LongrunError, STORAGE_KINDS } from "../core/errors.ts";
import type { NewMemory, SaveResult, StateTx } from "../core/ports.ts";
import type { TaskState } from "../core/task.ts";
import type { SqlConn, SqlStep } from "../db/sql.ts";

/** The current task as stored: decoded, and its stored text (what the compare-and-set compares). */
export interface SeenState {
  state: TaskState;
  text: string;
}

/** A memory save as statements of a batch (`LibsqlMemory.planIn`), with the record it makes if they commit. */
export interface PlannedSave {
  steps: SqlStep[];
  result: SaveResult;
  /** Told once the batch committed. */
  committed(): void;
}

export interface BatchDeps {
  batch: NonNullable<SqlConn["batch"]>;
  seen: SeenState;
  /** The statements that replace `seen` with `state` (text `text`) only if `seen` is still stored as it was (a `check`, then the write). */
  casSteps(state: TaskState, text: string, seen: SeenState): SqlStep[];
  /** The `nth` memory save of this batch (0 first) as statements; null when it cannot be planned. */
  planMemory(record: NewMemory, nth: number): Promise<PlannedSave | null>;
}

const AGAIN = Symbol("run again as a plain transaction");
const again = (): never => {
  throw AGAIN;
};

/**
 * Runs `fn` on `deps.seen` and commits what it saved in one batch. Null when it has to run as a
 * plain transaction (nothing written): `fn` refused on the merits (it may have decided on a task
 * that is no longer current), read or wrote anything but the current task and memory, saved
 * nothing, or the batch's compare-and-set or a memory number did not hold. Any other failure of
 * `fn` (a storage error, an injected fault) and the batch's own are thrown, as a failing
 * transaction's would be: nothing was written.
 */
export async function runAsBatch<T>(fn: (tx: StateTx) => Promise<T>, deps: BatchDeps): Promise<{ out: T; saved: SeenState } | null> {
  const steps: SqlStep[] = [];
  const saves: PlannedSave[] = [];
  let saved: SeenState | null = null;
  let out: T;
  try {
    out = await fn({
      load: () => Promise.resolve(deps.seen.state),
      save: (state, expected) => {
        if (saved || expected !== deps.seen.state.version || state.task_id !== deps.seen.state.task_id) again();
        const text = JSON.stringify(state);
        steps.push(...deps.casSteps(state, text, deps.seen));
        saved = { state, text };
        return Promise.resolve();
      },
      saveMemory: async (record) => {
        const plan = (await deps.planMemory(record, saves.length)) ?? again();
        saves.push(plan);
        steps.push(...plan.steps);
        return plan.result;
      },
      quarantine: again,
      loadTask: again,
      taskIdTaken: again,
      saveTask: again,
      setCurrent: again,
      openRuns: again,
    });
  } catch (e) {
    if (e === AGAIN || (e instanceof LongrunError && !STORAGE_KINDS.has(e.kind))) return null;
    throw e;
  }
  const done = saved as SeenState | null;
  if (!done) return null;
  if ((await deps.batch(steps)) === null) return null;
  for (const s of saves) s.committed();
  return { out, saved: done };
}
