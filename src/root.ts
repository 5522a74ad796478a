/**
 * A root binds everything of one project (invariant I4): its state file, pending checkpoint,
 * memory database and raw bodies all live under one absolute directory. Nothing here is module
 * global: open as many roots as you like in one process; each is fully isolated.
 */
import { mkdirSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { pathToFileURL } from "node:url";
import { TaskContract } from "./core/contract.ts";
import { Deliverables } from "./ledger/deliverables.ts";
import { EffectLedger } from "./ledger/effects.ts";
import type { Clock, CrashPoint, IdSource } from "./core/ports.ts";
import { Database } from "./memory/db.ts";
import { rebuildMemoryIndex } from "./memory/reindex.ts";
import { MIGRATIONS, migrate, schemaVersion } from "./memory/schema.ts";
import { searchMemories } from "./memory/search.ts";
import { SLICE_SIZE_SQL, sliceSizeOf } from "./memory/slices.ts";
import { LibsqlMemory, type Searcher } from "./memory/store.ts";
import { InProcessSearcher, WorkerSearcher } from "./memory/worker_client.ts";
import { removeOrphanTemps } from "./store/atomic.ts";
import { crashPointsFromEnv } from "./store/crash.ts";
import { FilePendingStore } from "./store/pending_file.ts";
import { importLegacyState } from "./store/legacy_state.ts";
import { libsqlConn } from "./store/sql.ts";
import { DbStateStore } from "./store/state_db.ts";
import { systemClock, systemIds } from "./store/system.ts";

/** The root a caller named is not an existing absolute directory. */
export class InvalidRootError extends Error {
  constructor(readonly root: string, detail: string) {
    super(`Invalid root ${JSON.stringify(root)}: ${detail}; pass the absolute path of an existing project directory`);
    this.name = "InvalidRootError";
  }
}

export interface RootPaths {
  dir: string;
  longrun: string;
  state: string;
  pending: string;
  lock: string;
  memoryDb: string;
  rawData: string;
}

export function rootPaths(dir: string): RootPaths {
  const longrun = join(dir, ".longrun");
  return {
    dir,
    longrun,
    state: join(longrun, "state.json"),
    pending: join(longrun, "pending_checkpoint.json"),
    lock: join(longrun, "lock"),
    memoryDb: join(dir, "memory.db"),
    rawData: join(dir, "raw_data"),
  };
}

/** Checks that `dir` is an existing absolute directory and returns its real path. */
export function resolveRoot(dir: string): string {
  if (typeof dir !== "string" || dir === "") throw new InvalidRootError(String(dir), "it is empty");
  if (dir.includes("\0")) throw new InvalidRootError(dir, "it contains a NUL byte");
  if (!isAbsolute(dir)) throw new InvalidRootError(dir, "it is not an absolute path");
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new InvalidRootError(dir, "it does not exist");
  }
  if (!st.isDirectory()) throw new InvalidRootError(dir, "it is not a directory");
  return realpathSync(dir);
}

export interface RootOptions {
  /** Run memory searches in a Worker (default true). One-shot commands may search in-process. */
  searchInWorker?: boolean;
  clock?: Clock;
  ids?: IdSource;
  crash?: CrashPoint;
  /** How long a write waits for another process's write lock on memory.db (default 10 s; hooks wait less). */
  lockTimeoutMs?: number;
  /** For tests of non-blocking gates only: every Worker search first blocks the Worker this long. */
  testOnlySearchBlockMs?: number;
  /** Test only, in-process search: rank this many newest matches instead of SEARCH_WINDOW (to reach the pages after it cheaply). */
  testOnlySearchWindow?: number;
}

export class Root {
  readonly paths: RootPaths;
  readonly contract: TaskContract;
  readonly memory: LibsqlMemory;
  readonly db: Database;
  readonly state: DbStateStore;
  readonly pending: FilePendingStore;
  /** The run ledger: runs, ownership, receipts, budgets (seed 003). */
  readonly runs: EffectLedger;
  /** Adjustments, staged artifacts and externalised context (seed 003). */
  readonly deliverables: Deliverables;
  readonly #searcher: Searcher;
  #closed = false;

  private constructor(paths: RootPaths, db: Database, searcher: Searcher, sliceSize: number, options: RootOptions) {
    const clock = options.clock ?? systemClock;
    const crash = options.crash ?? crashPointsFromEnv();
    this.paths = paths;
    this.db = db;
    this.#searcher = searcher;
    this.pending = new FilePendingStore(paths.pending, crash);
    this.memory = new LibsqlMemory({ db, rawDir: paths.rawData, searcher, sliceSize, crash });
    const memory = this.memory;
    this.state = new DbStateStore({ conn: libsqlConn(db), path: paths.memoryDb, clock, crash, saveMemory: (tx, rec) => memory.saveIn(tx, rec), cache: true });
    this.runs = new EffectLedger({ db, rawDir: paths.rawData, clock, crash });
    this.deliverables = new Deliverables({ db, rawDir: paths.rawData, clock, crash });
    this.contract = new TaskContract({
      state: this.state,
      pending: this.pending,
      memory: this.memory,
      clock,
      ids: options.ids ?? systemIds,
      crash,
    });
  }

  get dir(): string {
    return this.paths.dir;
  }

  /** Opens (and on first use lays out) the root at `dir`: `.longrun/`, `memory.db`, `raw_data/`. */
  static async open(dir: string, options: RootOptions = {}): Promise<Root> {
    const paths = rootPaths(resolveRoot(dir));
    mkdirSync(paths.longrun, { recursive: true, mode: 0o700 });
    mkdirSync(paths.rawData, { recursive: true, mode: 0o700 });
    removeOrphanTemps(paths.longrun);
    removeOrphanTemps(paths.rawData);
    const url = pathToFileURL(paths.memoryDb).href;
    // long-lived processes (the servers) write through the writer Worker; one-shot ones inline
    const db = await Database.open(url, { busyTimeoutMs: options.lockTimeoutMs, writes: options.searchInWorker === false ? "inline" : "worker" });
    let sliceSize: number;
    try {
      await migrate(db);
      const version = await schemaVersion(db);
      const known = MIGRATIONS[MIGRATIONS.length - 1]!.version;
      if (version > known) {
        throw new Error(`${paths.memoryDb} has schema version ${version}, newer than this longrun knows (${known}); upgrade longrun`);
      }
      await rebuildMemoryIndex(db, paths.rawData);
      sliceSize = sliceSizeOf((await db.execute(SLICE_SIZE_SQL)).rows);
      await importLegacyState(paths.state, libsqlConn(db), options.clock ?? systemClock);
    } catch (e) {
      await db.close();
      throw e;
    }
    const searcher: Searcher =
      options.searchInWorker === false
        ? new InProcessSearcher((q, o) => searchMemories(db, q, o, options.testOnlySearchWindow))
        : new WorkerSearcher(url, { testOnlyBlockMs: options.testOnlySearchBlockMs });
    return new Root(paths, db, searcher, sliceSize, options);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#searcher.close();
    await this.db.close();
  }
}
