/**
 * Opening a root for an edge outside the root's own bundle (the per-call Claude Code hook):
 * `openRoot({ store, scope })`. Scope `"full"` is the whole root (memory, the run ledger:
 * `Root.openAt`, loaded on demand); scopes `"gate"` and `"state"` are the task state only, read
 * and written with the runtime's own SQLite (src/db/sqlite.ts) or, for a root on a libSQL server,
 * libSQL's web client: enough for gate checks, turns and grants. Both run the steps of
 * src/root/steps.ts. Nothing here imports libSQL's native module, the memory layer or the Worker
 * statically (tests/layering.test.ts "the per-event hook path").
 */
import { existsSync, mkdirSync } from "node:fs";
import { TaskContract } from "../core/contract.ts";
import { NoActiveTaskError } from "../core/errors.ts";
import type { MemoryStore, StateStore } from "../core/ports.ts";
import { openSyncSqlite, syncConn } from "../db/sqlite.ts";
import { loadOwn } from "../runtime/load.ts";
import { crashPointsFromEnv } from "../store/crash.ts";
import { FilePendingStore } from "../store/pending_file.ts";
import { requireStateDir, serverPendingPath, serverSessionPath } from "../store/server_config.ts";
import { DbStateStore, STATE_IN_DB_VERSION, storedSchemaVersion } from "../store/state_db.ts";
import { systemClock, systemIds } from "../store/system.ts";
import { ROOT_PATHS } from "./layout.ts";
import type { Root, RootOptions } from "./root.ts";
import { type OpenPlan, type RootStore, runPlan } from "./steps.ts";

/**
 * How much of a root to open: `"full"`, everything; `"state"`, the task state (laying out a
 * server root's state directory); `"gate"`, the task state for the gate, which lays out nothing:
 * a state directory moved away must be seen as missing, never made anew.
 */
export type OpenScope = "gate" | "state" | "full";

/** The contract over the task state only, and how to let go of its connection. */
export interface StateRoot {
  contract: TaskContract;
  state: StateStore;
  close: () => void;
}

export interface OpenRequest<S extends OpenScope> {
  store: RootStore;
  scope: S;
  /** For scope "full": the root's options. */
  options?: RootOptions;
  /** How long a write waits for another process's lock on the database (default 5 s). */
  lockTimeoutMs?: number;
}

/**
 * Opens a root as far as `scope` says.
 *
 * @example
 * const { contract, close } = await openRoot({ store: rootStore(dir, hookServerStore()), scope: "gate", lockTimeoutMs: 2_000 });
 */
export function openRoot(req: OpenRequest<"full">): Promise<Root>;
export function openRoot(req: OpenRequest<"gate" | "state">): Promise<StateRoot>;
export async function openRoot(req: OpenRequest<OpenScope>): Promise<Root | StateRoot> {
  if (req.scope === "full") {
    const { Root } = await loadOwn<typeof import("./root.ts")>("root/root");
    return Root.openAt(req.store, req.options);
  }
  const opened = await runPlan(req.store.kind === "server" ? SERVER_STATE : LOCAL_STATE, new StateOpening(req.store, req.scope, req.lockTimeoutMs ?? 5_000));
  return opened.compose();
}

/** A memory port for the paths that must never touch memory (the gate): it refuses to be used. */
const NO_MEMORY: MemoryStore = new Proxy({} as MemoryStore, {
  get: (_t, prop) => () => Promise.reject(new Error(`memory is not available on this path (${String(prop)})`)),
});

/** A root with no database yet holds no task. */
function noTaskStore(path: string): StateStore {
  return {
    path,
    load: () => Promise.resolve(null),
    loadTask: () => Promise.resolve(null),
    list: () => Promise.resolve([]),
    transact: () => Promise.reject(new NoActiveTaskError()),
  };
}

/** The task state being opened: what the steps of its plan have made so far. */
class StateOpening {
  readonly crash = crashPointsFromEnv();
  state: StateStore | null = null;
  pendingPath = "";
  #close: () => void = () => {};
  constructor(readonly store: RootStore, readonly scope: "gate" | "state", readonly lockTimeoutMs: number) {}

  /** The root's paths, computed without importing the memory layer (a directory only). */
  get paths() {
    const root = (this.store as Extract<RootStore, { kind: "local" }>).dir;
    return { db: `${root}/${ROOT_PATHS.memoryDb}`, legacyState: `${root}/${ROOT_PATHS.state}`, pending: `${root}/${ROOT_PATHS.pending}` };
  }

  get server() {
    return (this.store as Extract<RootStore, { kind: "server" }>).server;
  }

  opened(state: StateStore, pendingPath: string, close: () => void = () => {}): void {
    this.state = state;
    this.pendingPath = pendingPath;
    this.#close = close;
  }

  close(): void {
    this.#close();
  }

  compose(): StateRoot {
    const state = this.state!;
    const contract = new TaskContract({ state, pending: new FilePendingStore(this.pendingPath, this.crash), memory: NO_MEMORY, clock: systemClock, ids: systemIds, crash: this.crash });
    return { contract, state, close: () => this.close() };
  }
}

/**
 * A directory's task state: the hook lays out nothing itself. A root that still keeps its state in
 * `.longrun/state.json` (or has an older schema) is opened once in full, which lays it out,
 * migrates, reindexes, imports the state and settles its identity, and closed again, before the
 * runtime's SQLite opens it (never while libSQL holds the file: two SQLite libraries in one
 * process must not share a file's locks).
 */
const LOCAL_STATE: OpenPlan<StateOpening> = {
  layout: null,
  async database(o) {
    const p = o.paths;
    const behind = existsSync(p.legacyState) || (existsSync(p.db) && (await schemaOf(p.db, o.lockTimeoutMs)) < STATE_IN_DB_VERSION);
    if (behind) await (await openRoot({ store: o.store, scope: "full", options: { searchInWorker: false, lockTimeoutMs: o.lockTimeoutMs } })).close();
    if (!existsSync(p.db)) return o.opened(noTaskStore(p.db), p.pending);
    const db = await openSyncSqlite(p.db, o.lockTimeoutMs);
    o.opened(new DbStateStore({ conn: syncConn(db), path: p.db, clock: systemClock, crash: o.crash }), p.pending, () => db.close());
  },
  migrate: null, // done by the full open above, when the database was behind
  reindex: null,
  "legacy import": null,
  identity: null,
};

/**
 * A server's task state: the lease is read there, never from a cache; a server that cannot be
 * reached is an error, and the gate's caller denies (fails closed).
 */
const SERVER_STATE: OpenPlan<StateOpening> = {
  layout(o) {
    if (o.scope === "gate") requireStateDir(o.server);
    else mkdirSync(o.server.stateDir, { recursive: true, mode: 0o700 });
  },
  async database(o) {
    const server = o.server;
    // its own bundle (libSQL's web client): a hook on a local root never evaluates it
    const { openClient, remoteConn, RemoteSession } = await loadOwn<typeof import("../db/remote.ts")>("db/remote");
    const client = openClient(server.url, server.authToken);
    const session = new RemoteSession(client, serverSessionPath(server));
    const state = new DbStateStore({ conn: remoteConn(session, server.url), path: server.url, clock: systemClock, crash: o.crash });
    o.opened(state, serverPendingPath(server), () => client.close());
  },
  migrate: null, // a server's schema is brought up to date by the full open (the servers, a hook's memory paths)
  reindex: null,
  "legacy import": null,
  identity: null,
};

/** The schema version of the database file (its own connection, closed before anything else opens the file). */
async function schemaOf(db: string, wait: number): Promise<number> {
  const conn = await openSyncSqlite(db, wait);
  try {
    return await storedSchemaVersion(syncConn(conn));
  } finally {
    conn.close();
  }
}
