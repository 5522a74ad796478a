/**
 * The task state in the root's database, beside memory and the run ledger: table `tasks` (one row
 * per task, its state as JSON and its version), the root's current task named in `root_meta`.
 * A checkpoint's memory record and its state change commit in one transaction: drafted from the
 * task as last seen and sent as one batch, checked at commit (state_batch.ts; on a server one
 * request), else under the lock like any other. Every state write
 * is a compare-and-swap on the current task's version inside a write transaction (BEGIN
 * IMMEDIATE: one writer at a time, across processes). Reads take no lock (WAL); on a libSQL
 * connection they are answered from a cache checked against the connection's `dataVersion`: for a
 * local file the WAL-index header of `memory.db-shm` (db/change_detector.ts, no SQL), else
 * `PRAGMA data_version`. It is read before the state, so a commit in between costs a reload,
 * never a stale answer.
 */
import { ConflictError, NotFoundError, StateCorruptError } from "../core/errors.ts";
import type { Clock, CrashPoint, NewMemory, SaveResult, StateStore, StateTx, TaskSummary, TransactOptions } from "../core/ports.ts";
import type { TaskState } from "../core/task.ts";
import { renameSync } from "node:fs";
import { RUN_ID } from "../core/ids.ts";
import { lockHolder } from "./lock_holder.ts";
import { isBusyError } from "../db/fault.ts";
import type { SqlConn, SqlExec, SqlStep } from "../db/sql.ts";
import { decodeState } from "./state_codec.ts";
import { type PlannedSave, runAsBatch, type SeenState } from "./state_batch.ts";

/** The schema version of memory.db that holds task state (older roots keep it in `.longrun/state.json`). */
export const STATE_IN_DB_VERSION = 3;

/** The schema version of the database `x` reads (0 when it has no schema yet, or cannot tell). */
export async function storedSchemaVersion(x: SqlExec): Promise<number> {
  try {
    return Number((await x.run("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations", []))[0]?.v ?? 0);
  } catch {
    return 0;
  }
}

export const CURRENT_TASK = "current_task";
/** Set when a root's legacy `state.json` could not be read: the state is corrupt until recovered. */
export const LEGACY_CORRUPT = "legacy_state_corrupt";

export interface DbStateStoreOptions {
  conn: SqlConn;
  /** The database file, named in errors. */
  path: string;
  clock: Clock;
  crash?: CrashPoint;
  /** Saves a memory record inside the state's transaction; absent where memory is not open (the gate). */
  saveMemory?: (tx: SqlExec, record: NewMemory) => Promise<{ result: SaveResult; discard: () => void }>;
  /** The `nth` memory save of an optimistic transaction's batch as statements (state_batch.ts); null when it cannot be planned. */
  planMemory?: (record: NewMemory, nth: number) => Promise<PlannedSave | null>;
  /** Cache reads against the connection's `dataVersion` (a long-lived connection); off for one-shot use. */
  cache?: boolean;
}

interface Row {
  task_id: string;
  state: string;
  version: number;
}

export class DbStateStore implements StateStore {
  readonly path: string;
  readonly #o: DbStateStoreOptions;
  #cache: { dv: number; state: TaskState | null; text: string } | null = null;
  /** The current task as this process last read or committed it, with its stored text. */
  #seen: SeenState | null = null;

  constructor(options: DbStateStoreOptions) {
    this.path = options.path;
    this.#o = options;
  }

  lastKnown(): TaskState | null {
    return this.#seen?.state ?? null;
  }

  async load(): Promise<TaskState | null> {
    if (!this.#o.cache) return (this.#seen = await this.#read(this.#o.conn))?.state ?? null;
    const conn = this.#o.conn;
    const dv = conn.dataVersion ? await conn.dataVersion() : Number((await conn.run("PRAGMA data_version"))[0]?.data_version ?? -1);
    if (this.#cache && this.#cache.dv === dv) return this.#cache.state;
    const seen = await this.#read(this.#o.conn);
    this.#cache = { dv, state: seen && deepFreeze(seen.state), text: seen?.text ?? "" };
    this.#seen = seen;
    return this.#cache.state;
  }

  /** The cached state when the connection says at once that nothing committed since it was read; else undefined. */
  peek(): TaskState | null | undefined {
    const cached = this.#cache;
    if (!cached) return undefined;
    const dv = this.#o.conn.dataVersionNow?.() ?? null;
    return dv !== null && dv === cached.dv ? cached.state : undefined;
  }

  /** The current task's row, in one statement (with the legacy-corruption mark, if any). */
  async #current(x: SqlExec): Promise<Row | null> {
    const rows = await x.run(
      `SELECT m.key, m.value, t.state, t.version FROM root_meta m LEFT JOIN tasks t ON m.key = ? AND t.task_id = m.value
       WHERE m.key IN (?, ?)`,
      [CURRENT_TASK, CURRENT_TASK, LEGACY_CORRUPT],
    );
    const legacy = rows.find((m) => m.key === LEGACY_CORRUPT);
    if (legacy) throw new StateCorruptError(String(legacy.value), "the state file from an earlier longrun could not be read; task.recover rebuilds the task from memory and keeps the file");
    const current = rows.find((m) => m.key === CURRENT_TASK);
    if (!current) return null;
    if (current.state === null || current.state === undefined) throw new StateCorruptError(this.path, `the current task ${String(current.value)} has no state row`);
    return { task_id: String(current.value), state: String(current.state), version: Number(current.version) };
  }

  loadTask(taskId: string): Promise<TaskState | null> {
    return this.#readTask(this.#o.conn, taskId);
  }

  async #readTask(x: SqlExec, taskId: string): Promise<TaskState | null> {
    const rows = await x.run("SELECT state FROM tasks WHERE task_id = ?", [taskId]);
    if (!rows[0]) return null;
    return decodeState(String(rows[0].state), `${this.path} (task ${taskId})`, this.#o.clock.now()).state;
  }

  async list(): Promise<TaskSummary[]> {
    const rows = await this.#o.conn.run(
      `SELECT t.task_id, t.state, t.status, t.updated_at, (t.task_id = (SELECT value FROM root_meta WHERE key = ?)) AS current
       FROM tasks t ORDER BY t.updated_at DESC, t.task_id DESC`,
      [CURRENT_TASK],
    );
    return rows.map((r) => {
      let state: TaskState | null = null;
      try {
        state = decodeState(String(r.state), `${this.path} (task ${String(r.task_id)})`, this.#o.clock.now()).state;
      } catch {
        // listed as it is stored; task.status names what is wrong with it
      }
      return {
        task_id: String(r.task_id),
        description: state?.description ?? "",
        status: (state?.status ?? String(r.status)) as TaskSummary["status"],
        turn_index: state?.turn_index ?? 0,
        access_mode: state?.access_mode ?? "read_only",
        current: Number(r.current) === 1,
        updated_at: String(r.updated_at),
      };
    });
  }

  /** Compare-and-swap of one task's row by its own version (the current task or another). */
  async #saveTask(x: SqlExec, state: TaskState, expected: number): Promise<void> {
    const at = this.#o.clock.now().toISOString();
    const done = await x.run(
      "UPDATE tasks SET state = ?, version = ?, status = ?, updated_at = ? WHERE task_id = ? AND version = ? RETURNING version",
      [JSON.stringify(state), state.version, state.status, at, state.task_id, expected],
    );
    if (done.length === 1) return;
    const found = await x.run("SELECT version FROM tasks WHERE task_id = ?", [state.task_id]);
    if (!found.length) throw new NotFoundError("task", state.task_id, "; task.list shows the tasks of this root");
    throw new ConflictError(`Task ${state.task_id} changed underneath: expected version ${expected}, found ${String(found[0]!.version)}; re-read it and retry`, {
      task_id: state.task_id,
      expected_version: expected,
      actual_version: Number(found[0]!.version),
    });
  }

  async #read(x: SqlExec): Promise<SeenState | null> {
    const row = await this.#current(x);
    if (!row) return null;
    return { state: decodeState(row.state, `${this.path} (task ${row.task_id})`, this.#o.clock.now()).state, text: row.state };
  }

  async transact<T>(fn: (tx: StateTx) => Promise<T>, options: TransactOptions = {}): Promise<T> {
    if (options.optimistic) {
      const done = await this.#asBatch(fn);
      if (done) return done.out;
    }
    const discards: (() => void)[] = [];
    let saved: SeenState | null = null;
    try {
      const out = await this.#o.conn.write((x) =>
        fn({
          load: async () => (await this.#read(x))?.state ?? null,
          save: async (state, expected) => {
            saved = { state, text: await this.#save(x, state, expected) };
          },
          quarantine: () => this.#quarantine(x),
          loadTask: (taskId) => this.#readTask(x, taskId),
          taskIdTaken: async (taskId) =>
            (await x.run("SELECT 1 FROM tasks WHERE task_id = ? UNION ALL SELECT 1 FROM task_tombstones WHERE task_id = ?", [taskId, taskId])).length > 0,
          saveTask: (state, expected) => this.#saveTask(x, state, expected),
          setCurrent: async (taskId) => {
            const found = await x.run("SELECT 1 FROM tasks WHERE task_id = ?", [taskId]);
            if (!found.length) throw new NotFoundError("task", taskId, "; task.list shows the tasks of this root");
            await x.run("INSERT INTO root_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [CURRENT_TASK, taskId]);
          },
          openRuns: async (taskId) =>
            (await x.run("SELECT seq FROM runs WHERE task_id = ? AND status IN ('running', 'parked') ORDER BY seq", [taskId])).map((r) => RUN_ID.format(Number(r.seq))),
          saveMemory: async (record) => {
            if (!this.#o.saveMemory) throw new Error("memory is not open on this path; open the root to save to memory");
            const { result, discard } = await this.#o.saveMemory(x, record);
            discards.push(discard);
            return result;
          },
        })
      );
      this.#cache = null; // this connection's own commit does not move data_version
      if (saved) this.#seen = saved;
      return out;
    } catch (e) {
      this.#cache = null;
      for (const d of discards) d();
      if (isBusyError(e)) throw this.#busy(e);
      throw e;
    }
  }

  /**
   * `fn` on the task as this process last saw it, what it saves in one batch that commits only if
   * that task is still the stored one (state_batch.ts); null when it must run as a plain
   * transaction (nothing written), also when this connection has no batch or memory no plan.
   */
  async #asBatch<T>(fn: (tx: StateTx) => Promise<T>): Promise<{ out: T } | null> {
    const { conn, planMemory } = this.#o;
    const seen = this.#seen;
    if (!conn.batch || !planMemory || !seen) return null;
    try {
      const done = await runAsBatch(fn, { batch: (steps) => conn.batch!(steps), seen, planMemory, casSteps: (state, text, from) => this.#casSteps(state, text, from) });
      this.#cache = null;
      this.#seen = done ? done.saved : null;
      return done;
    } catch (e) {
      this.#cache = null;
      this.#seen = null;
      if (isBusyError(e)) throw this.#busy(e);
      throw e;
    }
  }

  /** The current task replaced by `state` only if it is still stored as `from` (its text, byte for byte), current and readable. */
  #casSteps(state: TaskState, text: string, from: SeenState): SqlStep[] {
    return [
      {
        sql: `SELECT 1 FROM tasks WHERE task_id = ? AND version = ? AND state = ? AND task_id = (SELECT value FROM root_meta WHERE key = ?)
              AND NOT EXISTS (SELECT 1 FROM root_meta WHERE key = ?)`,
        args: [from.state.task_id, from.state.version, from.text, CURRENT_TASK, LEGACY_CORRUPT],
        check: true,
      },
      {
        sql: "UPDATE tasks SET state = ?, version = ?, status = ?, updated_at = ? WHERE task_id = ?",
        args: [text, state.version, state.status, this.#o.clock.now().toISOString(), state.task_id],
      },
    ];
  }

  /** Another process kept the database's write lock past the busy timeout: say who, if we can tell. */
  #busy(cause: unknown): ConflictError {
    const holder = lockHolder([this.path, `${this.path}-shm`, `${this.path}-wal`]);
    const who = holder ? `process ${holder.pid}${holder.command ? ` (${holder.command})` : ""}` : "another process";
    return new ConflictError(
      `Root is busy: ${who} holds the write lock of ${this.path} past the wait; retry, or stop the process that holds it (${describe(cause)})`,
      { reason: "lock_timeout", path: this.path, holder_pid: holder?.pid ?? null },
    );
  }

  /** Writes `state` as the current task if it is still at `expected`; returns the text stored. */
  async #save(x: SqlExec, state: TaskState, expected: number | null): Promise<string> {
    const at = this.#o.clock.now().toISOString();
    const text = JSON.stringify(state);
    if (expected !== null) {
      // the common case, one statement: the same task, compared and swapped on its version
      const done = await x.run(
        `UPDATE tasks SET state = ?, version = ?, status = ?, updated_at = ?
         WHERE task_id = ? AND version = ? AND task_id = (SELECT value FROM root_meta WHERE key = ?)
           AND NOT EXISTS (SELECT 1 FROM root_meta WHERE key = ?)
         RETURNING version`,
        [text, state.version, state.status, at, state.task_id, expected, CURRENT_TASK, LEGACY_CORRUPT],
      );
      if (done.length === 1) return text;
    }
    let current: Row | null;
    try {
      current = await this.#current(x);
    } catch (e) {
      if (!(e instanceof StateCorruptError)) throw e;
      current = { task_id: "", state: "", version: -1 }; // unreadable: only recovery (which quarantines first) may replace it
    }
    const actual = current ? current.version : null;
    if (actual !== expected) {
      throw new ConflictError(
        `State changed underneath: expected version ${expected ?? "none"} of the current task, found ${actual === -1 ? "an unreadable state" : actual ?? "none"}; ` +
          `re-read the task and retry`,
        { expected_version: expected, actual_version: actual === -1 ? null : actual },
      );
    }
    await x.run(
      `INSERT INTO tasks(task_id, state, version, status, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(task_id) DO UPDATE SET state = excluded.state, version = excluded.version, status = excluded.status, updated_at = excluded.updated_at`,
      [state.task_id, text, state.version, state.status, at],
    );
    if (current?.task_id !== state.task_id) {
      await x.run("INSERT INTO root_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [CURRENT_TASK, state.task_id]);
    }
    return text;
  }

  /** Moves an unreadable state aside, never deleting it; says where it went. */
  async #quarantine(x: SqlExec): Promise<string | null> {
    const at = this.#o.clock.now();
    const legacy = await x.run("SELECT value FROM root_meta WHERE key = ?", [LEGACY_CORRUPT]);
    if (legacy[0]) {
      const file = String(legacy[0].value);
      const aside = `${file}.corrupt-${at.toISOString().replace(/[:.]/g, "-")}`;
      try {
        renameSync(file, aside);
      } catch (e) {
        if ((e as { code?: string }).code !== "ENOENT") throw e;
      }
      await x.run("DELETE FROM root_meta WHERE key = ?", [LEGACY_CORRUPT]);
      return aside;
    }
    const current = await x.run("SELECT value FROM root_meta WHERE key = ?", [CURRENT_TASK]);
    if (!current[0]) return null;
    const id = String(current[0].value);
    const rows = await x.run("SELECT state FROM tasks WHERE task_id = ?", [id]);
    const kept = await x.run("INSERT INTO tasks_quarantine(task_id, state, reason, at) VALUES (?, ?, ?, ?) RETURNING seq", [
      id,
      rows[0] ? String(rows[0].state) : "",
      "unreadable state moved aside by task.recover",
      at.toISOString(),
    ]);
    await x.run("DELETE FROM tasks WHERE task_id = ?", [id]);
    await x.run("DELETE FROM root_meta WHERE key = ?", [CURRENT_TASK]);
    return `${this.path} (table tasks_quarantine, row ${String(kept[0]!.seq)})`;
  }
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}
