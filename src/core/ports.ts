/**
 * The small interfaces the core talks to. The core does no I/O itself: a state store, a store
 * for pending checkpoints, a memory store, a clock and an id source are handed to it.
 */
import type { TaskState } from "./task.ts";

export interface Clock {
  now(): Date;
}

export interface IdSource {
  /** A new task id, e.g. `T_20261129_211700_9f3a`. */
  taskId(now: Date): string;
  /** A random id for one checkpoint, used as its idempotency key in memory. */
  checkpointId(): string;
}

/** Inside `StateStore.transact`: reads and compare-and-swap writes under the root's lock. */
export interface StateTx {
  /** The current state, `null` when there is none. Throws `StateCorruptError` on an unreadable file. */
  load(): Promise<TaskState | null>;
  /**
   * Writes `state` atomically if the stored version is still `expectedVersion` (`null`: no state
   * may exist yet); otherwise throws `ConflictError` and writes nothing.
   */
  save(state: TaskState, expectedVersion: number | null): Promise<void>;
  /** Moves an unreadable state aside (never deletes it); returns where it went. */
  quarantine(): Promise<string | null>;
  /**
   * Saves a memory record in this same transaction: it commits with the state, or neither does
   * (a checkpoint is one commit). Throws where memory is not open.
   */
  saveMemory(record: NewMemory): Promise<SaveResult>;
  /** Any task of the root by id (the current one included), `null` when there is none. */
  loadTask(taskId: string): Promise<TaskState | null>;
  /** Whether a task has this id, or had it (a deleted task's tombstone keeps its id from being drawn again). */
  taskIdTaken(taskId: string): Promise<boolean>;
  /** Writes a task that need not be the current one, if its stored version is still `expectedVersion`; it does not change which task is current. */
  saveTask(state: TaskState, expectedVersion: number): Promise<void>;
  /** Makes an existing task the root's current task. */
  setCurrent(taskId: string): Promise<void>;
  /** The runs of a task that are still running or parked (their ids). */
  openRuns(taskId: string): Promise<string[]>;
}

export interface StateStore {
  readonly path: string;
  /** A lock-free read of the current task (never torn). */
  load(): Promise<TaskState | null>;
  /**
   * The current task as `load` would answer it, when the store knows at once (without I/O beyond
   * a look that nothing changed) that what it holds is current; undefined when it must read.
   */
  peek?(): TaskState | null | undefined;
  /**
   * Runs `fn` as one write transaction, one writer at a time across processes: everything it
   * saves commits together when it returns, or nothing does when it (or the commit) throws.
   */
  transact<T>(fn: (tx: StateTx) => Promise<T>, options?: TransactOptions): Promise<T>;
  /** Any task of the root by id, `null` when there is none. */
  loadTask(taskId: string): Promise<TaskState | null>;
  /** Every task of the root, newest first, with which one is current. */
  list(): Promise<TaskSummary[]>;
  /**
   * The current task as this process last read or committed it, without reading the store: what
   * a checkpoint is drafted from when the store cannot be read at all (a server unreachable), so
   * the checkpoint still goes to the pending file. Null when this process has seen none.
   */
  lastKnown?(): TaskState | null;
}

export interface TransactOptions {
  /**
   * `fn` only loads the current task, saves it once and saves memory records with it (a
   * checkpoint): the store may run it on the task as it last saw it, without waiting for the
   * lock, and commit what it saved in one step only if that task is still the stored one,
   * unchanged (on a server: one request instead of one per statement). When it is not, when `fn`
   * refuses on the merits (it saw a task that may no longer be current) or does anything else,
   * nothing is written and `fn` runs again as a plain transaction; any other failure is thrown as
   * the transaction's. So the outcome is always a transaction's.
   */
  optimistic?: boolean;
}

export interface TaskSummary {
  task_id: string;
  description: string;
  status: TaskState["status"];
  turn_index: number;
  access_mode: TaskState["access_mode"];
  current: boolean;
  updated_at: string;
}

/** A memory record to save. `dedupe_key` makes the save idempotent: a second save returns the first record. */
export interface NewMemory {
  type: string;
  title: string;
  content: string;
  keywords: string[];
  task_id?: string | null;
  dedupe_key?: string | null;
}

export interface MemoryRecord {
  id: string;
  type: string;
  title: string;
  content: string;
  keywords: string[];
  task_id: string | null;
  created_at: string;
  /** Where a long body lives under `raw_data/` (generated name), or null when it is stored inline. */
  raw_ref: string | null;
  sha256: string;
  size: number;
  /** memory.update: the record this version replaces, and the newer version that replaced this one. */
  supersedes?: string | null;
  superseded_by?: string | null;
}

export interface MemoryHit {
  id: string;
  type: string;
  title: string;
  snippet: string;
  score: number;
  task_id: string | null;
  created_at: string;
}

export interface SearchOptions {
  limit?: number;
  type?: string;
  cursor?: string;
}

export interface SearchPage {
  hits: MemoryHit[];
  next_cursor: string | null;
}

export interface SaveResult {
  record: MemoryRecord;
  /** False when `dedupe_key` matched an existing record and nothing new was written. */
  created: boolean;
}

export interface MemoryStore {
  /** A string is split into terms on white space; an array is taken as terms. Terms are OR'ed, ranked by bm25. */
  search(query: string | readonly string[], options?: SearchOptions): Promise<SearchPage>;
  save(record: NewMemory): Promise<SaveResult>;
  get(id: string): Promise<MemoryRecord | null>;
  /** The host's: removes records' text from the index, the row and raw_data, leaving a tombstone (src/memory/forget.ts). */
  /** `skipState`: checkpoint and outcome records are left (listed in `skipped`) instead of refusing the call. */
  forget(ids: readonly string[], by: string, reason: string | null, skipState?: boolean): Promise<{ forgotten: string[]; already: string[]; skipped: string[] }>;
  /** A new version of a record, linked to the old (`supersedes`); search finds the newest only. */
  update(id: string, change: { content: string; title?: string; keywords?: string[] }): Promise<SaveResult>;
  /** Newest records of a task, newest first. */
  recent(taskId: string, limit: number): Promise<MemoryHit[]>;
  /** Newest records that carry a machine line (checkpoints and outcomes), newest first, bodies included. */
  stateRecords(limit: number): Promise<MemoryRecord[]>;
  /**
   * A task's checkpoint records (saved by task.checkpoint, never by memory.save), newest first,
   * bodies included; `below`: only records older than that memory id (the next page).
   */
  checkpointRecords(taskId: string, limit: number, below?: string): Promise<MemoryRecord[]>;
  /** The record of one checkpoint, by its checkpoint id, or null. */
  checkpointRecord(checkpointId: string): Promise<MemoryRecord | null>;
}

export interface PendingCheckpoint {
  format: 1;
  checkpoint_id: string;
  task_id: string;
  created_at: string;
  /** Why the checkpoint's commit failed. */
  error: string | null;
  record: NewMemory;
  /** The task as the checkpoint leaves it (paused, read-only). */
  state: TaskState;
}

export interface PendingStore {
  readonly path: string;
  /** Cheap: whether a pending checkpoint waits (the gate reads this on every check). */
  exists(): boolean;
  read(): Promise<PendingCheckpoint | null>;
  write(pending: PendingCheckpoint): Promise<void>;
  /**
   * When even `write` failed (the disk full): leaves an empty file at `path` (it needs no data
   * blocks), so every process's gate reads the root as read-only until a resume commits. Returns
   * whether it could.
   */
  markLost(): boolean;
  /** Whether the file at `path` is such an empty marker (no checkpoint to replay in it). */
  lost(): boolean;
  clear(): Promise<void>;
}

/** Named points where tests may kill the process (`LONGRUN_CRASH_AT`); a no-op otherwise. */
export type CrashPoint = (point: string) => void;
