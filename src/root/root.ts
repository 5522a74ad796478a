/**
 * A root binds everything of one project (invariant I4): its state file, pending checkpoint,
 * memory database and raw bodies all live under one absolute directory. Nothing here is module
 * global: open as many roots as you like in one process; each is fully isolated.
 */
import { Approvals } from "../ledger/approvals.ts";
import { EventLog } from "./events.ts";
import { accessSync, constants, mkdirSync } from "node:fs";
import { StorageError } from "../core/errors.ts";
import { pathToFileURL } from "node:url";
import { TaskContract } from "../core/contract.ts";
import { Deliverables } from "../ledger/deliverables.ts";
import { RunLedger } from "../ledger/ledger.ts";
import type { Clock, CrashPoint, IdSource } from "../core/ports.ts";
import { Database } from "../db/database.ts";
import { rebuildMemoryIndex } from "../memory/reindex.ts";
import { MIGRATIONS, migrate, schemaVersion } from "../db/schema.ts";
import { searchMemories } from "../memory/search.ts";
import { SLICE_SIZE_SQL, sliceSizeOf } from "../memory/slices.ts";
import { claimProject, foldWal, probeRead } from "../store/root_db.ts";
import { LibsqlMemory, type Searcher } from "../memory/store.ts";
import { InProcessSearcher, WorkerSearcher } from "../memory/worker_client.ts";
import { removeOrphanTemps } from "../store/atomic.ts";
import { type BlobStore, type CollectPace, fileBlobs, removeDeadTemps } from "../store/blobs.ts";
import { blobsNamed, dbBlobs } from "../store/db_blobs.ts";
import { type ServerStore, serverSessionPath, storeName } from "../store/server_config.ts";
import { InvalidRootError, resolveRoot, type RootPaths, rootPaths, serverPaths } from "./paths.ts";
export { InvalidRootError, ProtectedRootError, resolveRoot, type RootPaths, rootPaths, serverPaths } from "./paths.ts";
import { crashPointsFromEnv } from "../store/crash.ts";
import { WebhookDelivery } from "./webhooks.ts";
import { deleteTask, type TaskDeleteInput, type TaskDeleteResult } from "./task_delete.ts";
import { FilePendingStore } from "../store/pending_file.ts";
import { readCheckpointLang, readRetention, type RetentionRule } from "../store/root_settings.ts";
import { importLegacyState } from "../store/legacy_state.ts";
import { checkPresent, type FileIdentity, identityOf, remember, settleIdentity } from "../store/root_identity.ts";
import { libsqlConn } from "../db/libsql_conn.ts";
import { DbStateStore } from "../store/state_db.ts";
import { type OpenPlan, type RootStore, runPlan } from "./steps.ts";
import { systemClock, systemIds } from "../store/system.ts";

/**
 * A root whose files cannot be written is refused before SQLite opens it: SQLite would open it
 * read-only for good (and share that with every later connection of this process to the file),
 * so the root could not write again even once the file system is writable. A server tries again
 * on the next call.
 */
function checkWritable(paths: string[]): void {
  for (const p of paths) {
    try {
      accessSync(p, constants.W_OK);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === "ENOENT") continue;
      if (code === "EROFS" || code === "EACCES" || code === "EPERM") throw new StorageError("read_only", p, `${code}: longrun needs to write its root`, e);
      throw e;
    }
  }
}

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** How long after a server opens a root its orphan collection starts: the requests of its start go first. */
export const ORPHAN_START_DELAY_MS = 1000;

/** A blob younger than this may belong to a commit still in flight in another process. */
export const ORPHAN_GRACE_MS = 15 * 60_000;

/** How often a running process applies the root's retention rules, and who the forgetting is recorded as. */
export const RETENTION_EVERY_MS = 60 * 60_000;
/** How often a running process looks for events to deliver to the root's webhooks. */
export const WEBHOOK_IDLE_MS = 250;
export const RETENTION_BY = "longrun:retention";

export interface RootOptions {
  /** Run memory searches in a Worker (default true). One-shot commands may search in-process. */
  searchInWorker?: boolean;
  clock?: Clock;
  ids?: IdSource;
  crash?: CrashPoint;
  /** How long a write waits for another process's write lock on memory.db (default 10 s; hooks wait less). */
  lockTimeoutMs?: number;
  /** For tests of non-blocking gates only: every Worker search first blocks the Worker while element 0 of this buffer is 0. */
  testOnlySearchHold?: SharedArrayBuffer;
  /** Test only, in-process search: rank this many newest matches instead of SEARCH_WINDOW (to reach the pages after it cheaply). */
  testOnlySearchWindow?: number;
}

/** Brings the database's schema up to date; a database from a newer longrun is refused, naming it. */
async function migrateKnown(db: Database, name: string): Promise<void> {
  await migrate(db);
  const version = await schemaVersion(db);
  const known = MIGRATIONS[MIGRATIONS.length - 1]!.version;
  if (version > known) throw new Error(`${name} has schema version ${version}, newer than this longrun knows (${known}); upgrade longrun`);
}

/** The first runner names the database's project; any other project key is refused, naming both. */
async function checkProject(db: Database, store: ServerStore): Promise<void> {
  const held = await claimProject(db, store.project);
  if (held !== store.project) {
    throw new InvalidRootError(
      storeName(store),
      `the database at ${store.url} holds project ${JSON.stringify(held)}, not ${JSON.stringify(store.project)}; one database holds one project ` +
        `(give each project its own database: a sqld namespace or another server), or pass --project ${held} if that is the project you meant`,
      "",
    );
  }
}

/** A root being opened: what the steps of its plan (`PLANS`) have made so far. */
class Opening {
  paths!: RootPaths;
  #db: Database | null = null;
  sliceSize = 0;
  /** Temp files of dead writers in raw_data/ being removed (a local root), awaited by its last step. */
  rawTemps: Promise<void> = Promise.resolve();
  constructor(readonly store: RootStore, readonly options: RootOptions) {}
  get db(): Database {
    if (!this.#db) throw new Error("the database is not open yet");
    return this.#db;
  }
  set db(db: Database) {
    this.#db = db;
  }
  async close(): Promise<void> {
    await this.#db?.close();
  }
}

/** The directory or the server's project being opened (each plan knows which it has). */
const dirOf = (o: Opening) => (o.store as Extract<RootStore, { kind: "local" }>).dir;
const serverOf = (o: Opening) => (o.store as Extract<RootStore, { kind: "server" }>).server;

/** The schema up to date, and the slice size memory is indexed by. */
async function migrateStep(o: Opening): Promise<void> {
  await migrateKnown(o.db, o.paths.memoryDb);
  o.sliceSize = sliceSizeOf((await o.db.execute(SLICE_SIZE_SQL)).rows);
}

/** What opening the whole root does at each step (src/root/steps.ts), for a directory and for a server's project. */
const PLANS: Readonly<Record<RootStore["kind"], OpenPlan<Opening>>> = {
  local: {
    layout(o) {
      const paths = (o.paths = rootPaths(resolveRoot(dirOf(o))));
      mkdirSync(paths.longrun, { recursive: true, mode: 0o700 });
      mkdirSync(paths.rawData, { recursive: true, mode: 0o700 });
      removeOrphanTemps(paths.longrun);
      // raw_data/ holds every long body, so listing it grows with the memory: listed off this
      // thread while the database opens, done before the root is (the identity step waits for it)
      o.rawTemps = removeDeadTemps(paths.rawData);
      checkPresent(paths.longrun, paths.memoryDb); // before opening, which would create an empty one
      checkWritable([paths.dir, paths.longrun, paths.memoryDb]);
    },
    async database(o) {
      // long-lived processes (the servers) write through the writer Worker; one-shot ones inline
      const writes = o.options.searchInWorker === false ? "inline" : "worker";
      o.db = await Database.open(pathToFileURL(o.paths.memoryDb).href, { busyTimeoutMs: o.options.lockTimeoutMs, writes });
    },
    migrate: migrateStep,
    reindex: (o) => rebuildMemoryIndex(o.db, fileBlobs(o.paths.rawData)),
    "legacy import": (o) => importLegacyState(o.paths.state, libsqlConn(o.db), o.options.clock ?? systemClock),
    async identity(o) {
      await o.rawTemps;
      remember(o.paths.longrun, await libsqlConn(o.db).write((tx) => settleIdentity(o.paths.longrun, o.paths.memoryDb, tx)));
    },
  },
  server: {
    layout(o) {
      mkdirSync(serverOf(o).stateDir, { recursive: true, mode: 0o700 });
      removeOrphanTemps(serverOf(o).stateDir);
      o.paths = serverPaths(serverOf(o));
    },
    async database(o) {
      const store = serverOf(o);
      o.db = await Database.open(store.url, { authToken: store.authToken, sessionFile: serverSessionPath(store) });
    },
    migrate: migrateStep,
    reindex: null, // bodies live in the database, indexed as they are saved
    "legacy import": null, // a root on a server never kept its state in a file
    identity: (o) => checkProject(o.db, serverOf(o)),
  },
};

export class Root {
  readonly paths: RootPaths;
  readonly contract: TaskContract;
  readonly memory: LibsqlMemory;
  readonly db: Database;
  readonly state: DbStateStore;
  readonly pending: FilePendingStore;
  /** The run ledger: runs, ownership, receipts, budgets (seed 003). */
  readonly runs: RunLedger;
  /** Adjustments, staged artifacts and externalised context (seed 003). */
  readonly deliverables: Deliverables;
  /** The root's event log: what happened to its tasks and runs, in order (src/root/events.ts). */
  readonly events: EventLog;
  /** The agent's requests before one action and the host's answers (src/ledger/approvals.ts). */
  readonly approvals: Approvals;
  /** Where long bodies live: files in `raw_data/`, or the database's `blobs` table for a root on a server. */
  readonly blobs: BlobStore;
  /** The server and project, for a root on a libSQL server; null for a local directory. */
  readonly server: ServerStore | null;
  readonly #searcher: Searcher;
  #identity: FileIdentity | null = null;
  #closed = false;
  /** Orphan collections in flight (close waits for each to reach its next step). */
  readonly #collecting = new Set<Promise<void>>();
  readonly #onClose = new Set<() => void>();
  /** Stops the timer of this root's runs (wakes, time budgets, stale owners), once started. */
  #stopWaker: (() => Promise<void>) | null = null;
  #retaining = false;
  #delivering = false;
  readonly #clock: Clock;

  private constructor(paths: RootPaths, db: Database, searcher: Searcher, sliceSize: number, options: RootOptions, server: ServerStore | null = null) {
    const clock = options.clock ?? systemClock;
    this.#clock = clock;
    const crash = options.crash ?? crashPointsFromEnv();
    this.paths = paths;
    this.db = db;
    this.#searcher = searcher;
    this.pending = new FilePendingStore(paths.pending, crash);
    this.server = server;
    const blobs = server ? dbBlobs(db, paths.memoryDb) : fileBlobs(paths.rawData);
    this.blobs = blobs;
    this.memory = new LibsqlMemory({ db, blobs, searcher, sliceSize, crash, clock });
    const memory = this.memory;
    // a server's `PRAGMA data_version` belongs to whichever of its connections answers, so the
    // state of a root on a server is read afresh each time (one round trip), never from a cache
    this.state = new DbStateStore({ conn: libsqlConn(db), path: paths.memoryDb, clock, crash, saveMemory: (tx, rec) => memory.saveIn(tx, rec), planMemory: (rec, nth) => memory.planIn(rec, nth), cache: !server });
    this.runs = new RunLedger({ db, blobs, clock, crash });
    this.deliverables = new Deliverables({ db, blobs, clock, crash });
    this.events = new EventLog(db);
    this.approvals = new Approvals({ db, clock });
    this.contract = new TaskContract({
      state: this.state,
      pending: this.pending,
      memory: this.memory,
      clock,
      ids: options.ids ?? systemIds,
      crash,
      checkpointLang: () => readCheckpointLang(paths.settings),
    });
  }

  get dir(): string {
    return this.paths.dir;
  }

  /**
   * Opens (and on first use lays out) a root: the steps of src/root/steps.ts, as `PLANS` says for
   * its store. A directory gets `.longrun/`, `memory.db` and `raw_data/`. A project on a libSQL
   * server is in the database at `store.url`, which holds one project: a database that already
   * holds another is refused (memory of two projects is never mixed), so two projects need two
   * databases (two sqld namespaces, or two servers). The server need not be reachable for the
   * runner to start serving calls: a root that cannot be opened now is opened on a later call.
   */
  static async openAt(store: RootStore, options: RootOptions = {}): Promise<Root> {
    const o = await runPlan(PLANS[store.kind], new Opening(store, options));
    const db = o.db;
    if (store.kind === "server") {
      const searcher = new InProcessSearcher((q, opts) => searchMemories(db, q, opts, options.testOnlySearchWindow));
      return new Root(o.paths, db, searcher, o.sliceSize, options, store.server);
    }
    const searcher: Searcher =
      options.searchInWorker === false
        ? new InProcessSearcher((q, opts) => searchMemories(db, q, opts, options.testOnlySearchWindow))
        : new WorkerSearcher(pathToFileURL(o.paths.memoryDb).href, { testOnlyHold: options.testOnlySearchHold });
    const root = new Root(o.paths, db, searcher, o.sliceSize, options);
    root.#identity = identityOf(o.paths.memoryDb);
    return root;
  }

  /** Opens (and on first use lays out) the root at `dir`: `.longrun/`, `memory.db`, `raw_data/`. */
  static open(dir: string, options: RootOptions = {}): Promise<Root> {
    return Root.openAt({ kind: "local", dir }, options);
  }

  /** Opens (and on first use lays out) the project `store.project` on the libSQL server at `store.url` (see `openAt`). */
  static openServer(store: ServerStore, options: RootOptions = {}): Promise<Root> {
    return Root.openAt({ kind: "server", server: store }, options);
  }

  /**
   * Removes blobs in `raw_data/` that no row names and that are older than `graceMs` (left by a
   * process killed between writing a body and committing its row). Servers run it once after opening a root, in the background: it starts
   * `pace.afterMs` after it is called (default ORPHAN_START_DELAY_MS, so the requests of the
   * start are answered first; at once when the root closes sooner), then goes a few blobs a step,
   * each step an indexed probe on the writing connection (the Worker's), with a turn of the event
   * loop between steps, so no request waits for it, whatever the size of the memory. It stops at
   * the next step once the root closes. `pace.step` is the tests' seam to hold it between steps.
   * Returns the file names removed.
   */
  collectOrphanBlobs(graceMs = ORPHAN_GRACE_MS, pace: CollectPace & { afterMs?: number } = {}): Promise<string[]> {
    if (this.#closed) return Promise.resolve([]);
    const db = this.db;
    const closed = new Error("the root closed");
    const step = async () => {
      if (this.#closed) throw closed;
      await (pace.step ?? nextTurn)();
      if (this.#closed) throw closed;
    };
    const named = (refs: readonly string[]) => (this.#closed ? Promise.resolve(new Set(refs)) : blobsNamed(db, refs));
    const run = this.#afterOrClose(pace.afterMs ?? ORPHAN_START_DELAY_MS)
      .then(() => this.blobs.collectOrphans(named, graceMs, { batch: pace.batch, step }))
      .catch((e: unknown) => (e === closed ? [] : Promise.reject(e)));
    const done = run.then(() => {}, () => {});
    this.#collecting.add(done);
    void done.then(() => this.#collecting.delete(done));
    return run;
  }

  /**
   * Acts on time for this root's runs while it is open (src/ledger/waker.ts): wakes parked runs
   * whose wake_at came, acts on time budgets, records stale owners; what fell due while no process
   * ran happens now. Servers call it once a root is open; closing the root stops it.
   */
  wakeRuns(): void {
    if (this.#closed || this.#stopWaker) return;
    this.#stopWaker = this.runs.startWaker();
  }

  /**
   * Applies the root's retention rules (`.longrun/settings.json` `retention`) while it is open: a
   * first pass soon after the start, then one every `RETENTION_EVERY_MS`; each pass reads the
   * settings again (a rule added or removed applies at the next pass; an unreadable file forgets
   * nothing) and forgets what a rule names (never a checkpoint or outcome); each pass also bounds
   * the event log (`LIMITS.events_kept`). Closing stops it.
   */
  keepRetention(pace: { firstMs?: number; everyMs?: number } = {}): void {
    if (this.#closed || this.#retaining) return;
    this.#retaining = true;
    const loop = async () => {
      await this.#afterOrClose(pace.firstMs ?? ORPHAN_START_DELAY_MS);
      while (!this.#closed) {
        await this.applyRetention().catch(() => []);
        await this.events.prune().catch(() => 0);
        await this.#afterOrClose(pace.everyMs ?? RETENTION_EVERY_MS);
      }
    };
    const done = loop().catch(() => {});
    this.#collecting.add(done);
    void done.then(() => this.#collecting.delete(done));
  }

  /**
   * Delivers the root's event log to the webhooks its settings name (`.longrun/settings.json`
   * `webhooks`; src/root/webhooks.ts) while it is open: the settings read every `idleMs` (default
   * WEBHOOK_IDLE_MS), one loop per webhook. Servers call it (the registry's `webhooks` option), never
   * a one-off command. Closing stops it and gives up its leases.
   */
  keepWebhooks(pace: { idleMs?: number } = {}): void {
    if (this.#closed || this.#delivering) return;
    this.#delivering = true;
    const stop = new AbortController();
    this.#onClose.add(() => stop.abort());
    const hooks = new WebhookDelivery({
      db: this.db,
      settingsPath: this.paths.settings,
      root: this.server ? this.server.project : this.dir,
      now: () => this.#clock.now(),
      signal: stop.signal,
      sleep: (ms) => this.#afterOrClose(ms),
    });
    const done = hooks.run(pace.idleMs ?? WEBHOOK_IDLE_MS).catch(() => {});
    this.#collecting.add(done);
    void done.then(() => this.#collecting.delete(done));
  }

  /** One pass of the retention rules now; the ids forgotten. Unreadable settings forget nothing (and say why). */
  async applyRetention(): Promise<string[]> {
    let rules: RetentionRule[];
    try {
      rules = readRetention(this.paths.settings);
    } catch (e) {
      throw new Error(`retention not applied: ${e instanceof Error ? e.message : String(e)}`);
    }
    const out: string[] = [];
    for (const rule of rules) {
      if (this.#closed) break;
      const before = new Date(this.#clock.now().getTime() - rule.older_than_days * 86_400_000);
      out.push(...(await this.memory.forgetOlderThan(rule.types, before, RETENTION_BY, `retention: ${rule.types.join(", ")} older than ${rule.older_than_days} days`)));
    }
    return out;
  }

  /** task.delete (the host's): the task and what it holds go, a tombstone stays (src/root/task_delete.ts). */
  deleteTask(input: TaskDeleteInput): Promise<TaskDeleteResult> {
    const pending = this.pending;
    const pendingTask = async (): Promise<string | null> => {
      if (!pending.exists() || pending.lost()) return null;
      try {
        return (await pending.read())?.task_id ?? null;
      } catch {
        return "unreadable";
      }
    };
    return deleteTask({ db: this.db, memory: this.memory, blobs: this.blobs, pendingTask, now: () => this.#clock.now() }, input);
  }

  /** Resolves after `ms`, or as soon as the root closes. */
  #afterOrClose(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const go = () => {
        clearTimeout(timer);
        this.#onClose.delete(go);
        resolve();
      };
      const timer = setTimeout(go, ms);
      this.#onClose.add(go);
    });
  }

  /** A trivial read of the task store and of memory on each of the database's connections (`GET /ready`). */
  probe(): Promise<void> {
    return probeRead(this.db);
  }

  /**
   * Whether `memory.db` is still the file this root opened (not removed, moved or replaced since)
   * and its handle still able to write: a server checks it before each call and reopens the root
   * when it is not (one stat).
   */
  stillOpenOnDisk(): boolean {
    if (this.server) return true;
    if (this.db.needsReopen) return false;
    const now = identityOf(this.paths.memoryDb);
    return now !== null && this.#identity !== null && now.dev === this.#identity.dev && now.ino === this.#identity.ino;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.events.close();
    // a collection waiting to start starts now and, like one in flight, stops at its next step
    for (const go of [...this.#onClose]) go();
    await Promise.all(this.#collecting);
    await this.#stopWaker?.();
    await this.#searcher.close();
    if (this.server) return this.db.close();
    // fold the WAL into memory.db on a clean close, so the file alone is the whole memory
    await foldWal(this.db);
    await this.db.close();
  }
}
