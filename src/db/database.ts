/**
 * One database of a root: `memory.db` (local) or a libSQL server URL. WAL and `synchronous=FULL`
 * (acknowledged writes survive power loss), a busy timeout so SQLITE_BUSY never reaches a caller,
 * write transactions as `BEGIN IMMEDIATE`, and this handle's operations in order.
 *
 * A local database in a long-lived process has two connections. The writer Worker's runs
 * `execute`, `batch` and `write`: memory saves, FTS maintenance, the run ledger, whose commits,
 * fsyncs and lock waits never hold up the main thread. The main thread's own runs `read` and
 * `writeHere`: the task state, whose reads the gate needs at once and whose few transactions
 * (a checkpoint is one) are short; it never waits behind the Worker's queue (in WAL a reader does
 * not wait for a writer). One-shot processes (a hook, the CLI) and the search Worker use one
 * connection on their own thread. A server URL goes through `@libsql/client`.
 */
import { openClient, RemoteSession } from "./remote.ts";
import { busyError, CONNECTION_PRAGMAS, type InArgs, type ResultRows, type Row, runScript, type ScriptStep } from "./types.ts";
import { classifyDriver, classifyStorage } from "./fault.ts";
import { releaseStatements, SyncDb } from "./local.ts";
import { WriterClient } from "./writer_client.ts";
import { WalIndexWatch } from "./change_detector.ts";
import type { SqlStep } from "./sql.ts";

export type { InArgs, ResultRows, Row, ScriptStep } from "./types.ts";

export const BUSY_TIMEOUT_MS = 10_000;

export interface Stmt {
  sql: string;
  args?: InArgs;
}

/** Inside `Database.write`: statements of that one transaction. */
export interface Tx {
  execute(stmt: Stmt | string): Promise<ResultRows>;
}

export function isBusy(e: unknown): boolean {
  return busyError(e);
}

/** Where a database's statements go. */
interface Backend {
  run(sql: string, args: InArgs): Promise<ResultRows>;
  read(sql: string, args: InArgs): Promise<ResultRows>;
  /** A read whose rows come as arrays of values (this thread's connection where there are two). */
  values(sql: string, args: InArgs): Promise<unknown[][]>;
  /** `PRAGMA data_version` of this thread's connection. */
  dataVersion(): Promise<number>;
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** A transaction on this thread's connection. */
  writeHere<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Statements known in advance, in one write transaction, in one trip. */
  script(steps: ScriptStep[]): Promise<ResultRows[]>;
  /** `SqlConn.batch` on this thread's connection: null when a `check` step found no row (nothing written). */
  batchHere(steps: readonly SqlStep[]): Promise<ResultRows[] | null>;
  /** Whether `run`/`write` and `read`/`writeHere` use different connections (and so two queues). */
  readonly split: boolean;
  close(): Promise<void>;
}

/** A write transaction on a connection of this thread. */
async function inlineWrite<T>(db: SyncDb, fn: (tx: Tx) => Promise<T>): Promise<T> {
  await db.begin();
  try {
    const out = await fn({ execute: (s) => db.run(norm(s).sql, norm(s).args ?? []) });
    db.commit();
    return out;
  } catch (e) {
    db.rollback();
    throw e;
  }
}

const norm = (stmt: Stmt | string): Stmt => (typeof stmt === "string" ? { sql: stmt } : stmt);

const UNCHANGED = Symbol("a check step found no row");

/** `SqlConn.batch` on a connection of this thread: the steps in one transaction, rolled back at a `check` step that finds no row. */
async function guardedBatch(db: SyncDb, steps: readonly SqlStep[]): Promise<ResultRows[] | null> {
  try {
    return await inlineWrite(db, async (tx) => {
      const out: ResultRows[] = [];
      for (const step of steps) {
        const rs = await tx.execute({ sql: step.sql, args: step.args });
        if (step.check && rs.rows.length === 0) throw UNCHANGED;
        out.push(rs);
      }
      return out;
    });
  } catch (e) {
    if (e === UNCHANGED) return null;
    throw e;
  }
}

/** A local database on this thread (one-shot processes, the search Worker). */
class InlineBackend implements Backend {
  readonly split = false;
  constructor(readonly db: SyncDb) {}
  run(sql: string, args: InArgs) {
    return this.db.run(sql, args);
  }
  read(sql: string, args: InArgs) {
    return this.db.run(sql, args);
  }
  values(sql: string, args: InArgs) {
    return this.db.values(sql, args);
  }
  dataVersion() {
    return this.db.dataVersion();
  }
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return inlineWrite(this.db, fn);
  }
  writeHere<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return inlineWrite(this.db, fn);
  }
  script(steps: ScriptStep[]): Promise<ResultRows[]> {
    return inlineWrite(this.db, (tx) => runScript(steps, (sql, args) => tx.execute({ sql, args })));
  }
  batchHere(steps: readonly SqlStep[]) {
    return guardedBatch(this.db, steps);
  }
  close() {
    this.db.close();
    return Promise.resolve();
  }
}

/** A local database whose writes run in the writer Worker and whose reads run here. */
class WorkerBackend implements Backend {
  readonly split = true;
  constructor(readonly writer: WriterClient, readonly conn: number, readonly reader: SyncDb) {}
  writeHere<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return inlineWrite(this.reader, fn);
  }
  script(steps: ScriptStep[]): Promise<ResultRows[]> {
    return this.writer.script(this.conn, steps);
  }
  batchHere(steps: readonly SqlStep[]) {
    return guardedBatch(this.reader, steps);
  }
  run(sql: string, args: InArgs) {
    return this.writer.run(this.conn, sql, args);
  }
  read(sql: string, args: InArgs) {
    return this.reader.run(sql, args);
  }
  values(sql: string, args: InArgs) {
    return this.reader.values(sql, args);
  }
  dataVersion() {
    return this.reader.dataVersion();
  }
  async write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    await this.writer.request({ op: "begin", conn: this.conn });
    try {
      const out = await fn({ execute: (s) => this.writer.run(this.conn, norm(s).sql, norm(s).args ?? []) });
      await this.writer.request({ op: "commit", conn: this.conn });
      return out;
    } catch (e) {
      await this.writer.request({ op: "rollback", conn: this.conn }).catch(() => {});
      throw e;
    }
  }
  async close() {
    await this.writer.request({ op: "close", conn: this.conn }).catch(() => {});
    this.reader.close();
  }
}

/** A libSQL server. */
class RemoteBackend implements Backend {
  readonly split = false;
  constructor(readonly session: RemoteSession) {}
  writeHere<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.write(fn);
  }
  script(steps: ScriptStep[]): Promise<ResultRows[]> {
    return this.write((tx) => runScript(steps, (sql, args) => tx.execute({ sql, args })));
  }
  async batchHere(steps: readonly SqlStep[]): Promise<ResultRows[] | null> {
    return (await this.session.batch(steps))?.map(toRows) ?? null;
  }
  async run(sql: string, args: InArgs): Promise<ResultRows> {
    return toRows(await this.session.execute(sql, args));
  }
  async read(sql: string, args: InArgs): Promise<ResultRows> {
    return toRows(await this.session.read(sql, args));
  }
  async values(sql: string, args: InArgs): Promise<unknown[][]> {
    const rs = await this.session.read(sql, args);
    return rs.rows.map((r) => Array.from(r as ArrayLike<unknown>));
  }
  async dataVersion(): Promise<number> {
    return Number((await this.session.read("PRAGMA data_version")).rows[0]?.[0] ?? -1);
  }
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.session.write((run) => fn({ execute: async (s) => toRows(await run(norm(s).sql, norm(s).args ?? [])) }));
  }
  close() {
    this.session.client.close();
    return Promise.resolve();
  }
}

function toRows(rs: { rows: unknown[]; rowsAffected: number; lastInsertRowid: bigint | undefined }): ResultRows {
  return { rows: rs.rows as Row[], rowsAffected: rs.rowsAffected, lastInsertRowid: rs.lastInsertRowid };
}

export interface OpenOptions {
  authToken?: string;
  /** A server: where this runner's processes share the highest write they made (reads are never older; db/remote.ts). */
  sessionFile?: string;
  busyTimeoutMs?: number;
  /** Local databases: write through the writer Worker (long-lived processes) or on this thread. */
  writes?: "worker" | "inline";
}

export class Database {
  readonly url: string;
  readonly #backend: Backend;
  /** The file (local) or the URL, as errors name it. */
  readonly #path: string;
  /** Operations of the (Worker's) writing connection, in order. */
  #queue: Promise<unknown> = Promise.resolve();
  /** Operations of this thread's connection, in order (the same queue when there is one connection). */
  #here: Promise<unknown> = Promise.resolve();
  #closed = false;
  #needsReopen = false;
  /** The WAL-index header's watch: undefined before the first look, null where there is none (a server, not WAL). */
  #watch: WalIndexWatch | null | undefined = undefined;
  /** What `dataVersion` answers: moved on every change either detector saw. */
  #changes = 0;
  /** The last `PRAGMA data_version` this thread's connection answered. */
  #pragmaDv: number | null = null;

  private constructor(url: string, backend: Backend) {
    this.url = url;
    this.#backend = backend;
    this.#path = url.startsWith("file:") ? decodeURIComponent(new URL(url).pathname) : url;
  }

  /** Opens `url` (`file:/abs/path.db`, `http://…`, `ws://…`). Local files get WAL and synchronous=FULL. */
  static async open(url: string, options: OpenOptions = {}): Promise<Database> {
    const busy = options.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
    if (!url.startsWith("file:")) {
      return new Database(url, new RemoteBackend(new RemoteSession(openClient(url, options.authToken), options.sessionFile ?? null)));
    }
    const path = decodeURIComponent(new URL(url).pathname);
    let local: SyncDb;
    try {
      local = new SyncDb(path, { busyTimeoutMs: busy, asyncBusy: true, pragmas: CONNECTION_PRAGMAS });
    } catch (e) {
      throw classifyStorage(e, path) ?? e;
    }
    let backend: Backend;
    try {
      // Switching a new file to WAL takes an exclusive lock (SQLite answers busy at once, without its handler): retried.
      await local.run("PRAGMA journal_mode=WAL");
      if (options.writes === "worker") {
        const writer = WriterClient.shared();
        const conn = await writer.open(path, busy);
        backend = new WorkerBackend(writer, conn, local);
      } else backend = new InlineBackend(local);
    } catch (e) {
      local.close();
      throw classifyStorage(e, path) ?? e;
    }
    return new Database(url, backend);
  }

  /** Retries `op` while it fails with SQLITE_BUSY, for up to the busy timeout. */
  async retryBusy<T>(op: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + BUSY_TIMEOUT_MS;
    let wait = 2;
    for (;;) {
      try {
        return await op();
      } catch (e) {
        if (!isBusy(e) || Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(wait * 2, 50);
      }
    }
  }

  /** A driver or file-system failure as a kind the caller can act on (db/fault.ts), naming the file. */
  #classified<T>(op: () => Promise<T>): () => Promise<T> {
    return () =>
      op().catch((e: unknown) => {
        const known = classifyDriver(e, this.#path, !this.url.startsWith("file:"));
        // SQLite keeps a file it could only open read-only read-only for good: this handle must be replaced
        if ((known as { data?: { reason?: unknown } }).data?.reason === "read_only") this.#needsReopen = true;
        throw known;
      });
  }

  /** Whether a failure showed this handle cannot recover by itself (opened read-only): open a new one. */
  get needsReopen(): boolean {
    return this.#needsReopen;
  }

  #enqueue<T>(op: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error(`Database ${this.url} is closed`));
    const run = this.#queue.then(this.#classified(op));
    this.#queue = run.catch(() => {});
    return run;
  }

  #enqueueHere<T>(op: () => Promise<T>): Promise<T> {
    if (!this.#backend.split) return this.#enqueue(op);
    if (this.#closed) return Promise.reject(new Error(`Database ${this.url} is closed`));
    const run = this.#here.then(this.#classified(op));
    this.#here = run.catch(() => {});
    return run;
  }

  /** One statement, in order with this handle's other operations. */
  execute(stmt: Stmt | string): Promise<ResultRows> {
    const s = norm(stmt);
    return this.#enqueue(() => this.#backend.run(s.sql, s.args ?? []));
  }

  /**
   * A read on this thread's connection: it never waits for the Worker's writes in flight (it sees
   * the last committed state), only for this thread's own short transactions. For the gate.
   */
  read(stmt: Stmt | string): Promise<ResultRows> {
    const s = norm(stmt);
    return this.#enqueueHere(() => this.#backend.read(s.sql, s.args ?? []));
  }

  /**
   * A number that stays the same only while nothing committed to the database (the state cache's
   * check, on every gate call). On a local file in WAL mode it comes from the WAL-index header
   * (db/change_detector.ts: one `pread`, no SQL); whenever that cannot tell, from `PRAGMA
   * data_version` on this thread's connection. Unlike the pragma it may also move on this
   * connection's own commits (a needless reload, never a missed one).
   */
  dataVersion(): Promise<number> {
    const now = this.dataVersionNow();
    if (now !== null) return Promise.resolve(now);
    return this.#enqueueHere(async () => {
      if (this.#watch === undefined) this.#watch = await this.#watchFor();
      return this.#backend.dataVersion();
    }).then((dv) => {
      if (dv !== this.#pragmaDv) {
        this.#pragmaDv = dv;
        this.#changes++;
      }
      return this.#changes;
    });
  }

  /**
   * `dataVersion` when the WAL-index header can tell at once (one `pread`, no SQL, no wait); null
   * when it cannot (no watch yet, not WAL, a server, or the header unsure): then ask `dataVersion`.
   */
  dataVersionNow(): number | null {
    const seen = this.#watch && !this.#closed ? this.#watch.look() : "unsure";
    if (seen === "same") return this.#changes;
    if (seen === "changed") return ++this.#changes;
    return null;
  }

  /** A watch of the WAL-index header, once this connection says WAL (a leftover `-shm` beside another journal mode never changes); null where there is none. */
  async #watchFor(): Promise<WalIndexWatch | null | undefined> {
    if (!this.url.startsWith("file:")) return null;
    try {
      const row = (await this.#backend.read("PRAGMA journal_mode", [])).rows[0];
      return String(row?.[0] ?? "").toLowerCase() === "wal" ? new WalIndexWatch(this.#path) : null;
    } catch {
      return undefined; // asked again next time
    }
  }

  /** A read whose rows come as arrays of values in column order (hot paths: no object per row). */
  values(stmt: Stmt | string): Promise<unknown[][]> {
    const s = norm(stmt);
    return this.#enqueueHere(() => this.#backend.values(s.sql, s.args ?? []));
  }

  /** A write transaction on this thread's connection (the task state: short, and read at once by the gate). */
  writeHere<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#enqueueHere(() => this.#backend.writeHere(fn));
  }

  /**
   * Statements known in advance in one write transaction on this thread's connection (on a
   * server: one request), each step's rows; null when a `check` step found no row, and then
   * nothing of it was written (`SqlConn.batch`).
   */
  batchHere(steps: readonly SqlStep[]): Promise<ResultRows[] | null> {
    return this.#enqueueHere(() => this.#backend.batchHere(steps));
  }

  /** Runs statements in one write transaction, all or nothing. */
  batch(stmts: Stmt[]): Promise<ResultRows[]> {
    return this.write(async (tx) => {
      const out: ResultRows[] = [];
      for (const s of stmts) out.push(await tx.execute(s));
      return out;
    });
  }

  /** Statements known in advance, in one write transaction, sent in one trip (see `ScriptStep`). */
  script(steps: ScriptStep[]): Promise<ResultRows[]> {
    return this.#enqueue(() => this.#backend.script(steps));
  }

  /** Runs `fn` in a write transaction (`BEGIN IMMEDIATE`): committed when it returns, rolled back when it throws. */
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#enqueue(() => this.#backend.write(fn));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#queue;
    await this.#here;
    this.#closed = true;
    await this.#backend.close();
    await releaseStatements(); // the file really closed before anyone opens it again
  }
}
