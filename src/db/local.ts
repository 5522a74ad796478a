/**
 * One local libSQL connection through the synchronous `libsql` driver (the engine under
 * `@libsql/client`'s local mode, without its per-statement preparation): prepared statements are
 * cached, rows come back with both column names and positions (like `@libsql/client`'s rows).
 * Write transactions are BEGIN IMMEDIATE; where `asyncBusy` is set the busy wait is done by
 * retrying with timers rather than inside SQLite, so the thread keeps serving other work.
 */
import Libsql from "libsql";
import type { InArgs } from "./types.ts";
import { type ResultRows, type Row, busyError } from "./types.ts";

type Stmt = ReturnType<InstanceType<typeof Libsql>["prepare"]>;

/**
 * libsql-js's prepared statements hold their connection: after `close()` the file stays open (its
 * descriptors, locks and shared memory) until they are garbage-collected. A root that is closed
 * to be opened again (a file replaced, a file system read-only and then writable) must really let
 * go, so the statements are collected at once where the runtime allows it (Bun). Under Deno they
 * go at its next collection.
 */
export function releaseStatements(): Promise<void> {
  const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
  if (!bun) return Promise.resolve();
  // after the current stack is gone (the collector also looks at it for references)
  return new Promise((resolve) => setTimeout(() => (bun.gc(true), resolve()), 0));
}

interface Prepared {
  stmt: Stmt;
  reader: boolean;
  columns: string[];
}

/** How many prepared statements a connection keeps (the code has a few dozen distinct ones). */
const CACHE = 256;

export interface SyncDbOptions {
  busyTimeoutMs: number;
  /** Wait for a busy lock with timers (the writer Worker) instead of blocking in SQLite. */
  asyncBusy?: boolean;
  /** Per-connection settings, applied on open and again whenever the connection is reopened. */
  pragmas?: readonly string[];
}

/**
 * A statement that SQLite answered "busy" stays in progress until it is run again to the end, and
 * while it is, this connection cannot commit ("SQL statements in progress"). So a busy statement is
 * retried as the same statement; one given up on marks the connection poisoned, and a poisoned
 * connection is closed and opened afresh before its next use. A failed statement never poisons
 * the connection for what comes after.
 */
export class SyncDb {
  readonly path: string;
  #db: InstanceType<typeof Libsql>;
  readonly #stmts = new Map<string, Prepared>();
  readonly #o: SyncDbOptions;
  #inTx = false;
  #poisoned = false;

  constructor(path: string, options: SyncDbOptions) {
    this.path = path;
    this.#o = options;
    this.#db = this.#connect();
  }

  #connect(): InstanceType<typeof Libsql> {
    // SQLite's own busy wait while settings are applied (another process may be creating the file),
    // then, with `asyncBusy`, none: this class waits with timers instead
    const db = new Libsql(this.path, { timeout: this.#o.busyTimeoutMs });
    for (const p of this.#o.pragmas ?? []) db.exec(p);
    if (this.#o.asyncBusy) db.exec("PRAGMA busy_timeout = 0");
    return db;
  }

  /** A fresh connection in place of a poisoned one (outside a transaction only). */
  #heal(): void {
    if (!this.#poisoned || this.#inTx) return;
    this.#stmts.clear();
    try {
      this.#db.close();
    } catch {
      // closing a poisoned connection may itself complain; it is dropped either way
    }
    void releaseStatements();
    this.#db = this.#connect();
    this.#poisoned = false;
  }

  #prepare(sql: string): Prepared {
    let p = this.#stmts.get(sql);
    if (p) {
      this.#stmts.delete(sql); // most recently used last
      this.#stmts.set(sql, p);
      return p;
    }
    const stmt = this.#db.prepare(sql);
    const reader = stmt.reader;
    if (reader) stmt.raw(true);
    p = { stmt, reader, columns: reader ? stmt.columns().map((c) => c.name) : [] };
    this.#stmts.set(sql, p);
    if (this.#stmts.size > CACHE) this.#stmts.delete(this.#stmts.keys().next().value!);
    return p;
  }

  /** Runs one statement now. */
  runSync(sql: string, args: InArgs = []): ResultRows {
    this.#heal();
    const p = this.#prepare(sql);
    try {
      if (!p.reader) {
        const info = (p.stmt.run as (...a: unknown[]) => { changes: number; lastInsertRowid: number | bigint })(...args);
        return { rows: [], rowsAffected: Number(info.changes), lastInsertRowid: info.lastInsertRowid };
      }
      const raw = (p.stmt.all as (...a: unknown[]) => unknown[][])(...args);
      const rows: Row[] = new Array(raw.length);
      for (let i = 0; i < raw.length; i++) {
        const values = raw[i]!;
        const row: Row = {};
        for (let k = 0; k < p.columns.length; k++) {
          row[p.columns[k]!] = values[k];
          row[k] = values[k];
        }
        rows[i] = row;
      }
      return { rows, rowsAffected: 0, lastInsertRowid: undefined };
    } catch (e) {
      // a busy statement is kept, to be run again to the end; any other failed one is dropped
      if (!busyError(e)) this.#stmts.delete(sql);
      throw e;
    }
  }

  /**
   * `PRAGMA data_version` now: it changes when another connection commits (this connection's
   * own commits leave it). The cheapest read there is: one row, read with `get`, no objects.
   */
  dataVersionSync(): number {
    this.#heal();
    const p = this.#prepare("PRAGMA data_version");
    return Number((p.stmt.get as () => unknown[])()[0]);
  }

  /** Runs one reading statement now; its rows as arrays of values, in column order (no objects made: for hot paths). */
  valuesSync(sql: string, args: InArgs = []): unknown[][] {
    this.#heal();
    const p = this.#prepare(sql);
    if (!p.reader) throw new Error("valuesSync is for statements that return rows");
    try {
      return (p.stmt.all as (...a: unknown[]) => unknown[][])(...args);
    } catch (e) {
      if (!busyError(e)) this.#stmts.delete(sql);
      throw e;
    }
  }

  /** Runs one statement, retrying a busy answer until the busy timeout (with timers when `asyncBusy`). */
  run(sql: string, args: InArgs = []): Promise<ResultRows> {
    return this.#withBusy(() => this.runSync(sql, args));
  }

  /** `dataVersionSync`, retrying a busy answer like `run`. */
  dataVersion(): Promise<number> {
    return this.#withBusy(() => this.dataVersionSync());
  }

  /** `valuesSync`, retrying a busy answer like `run`. */
  values(sql: string, args: InArgs = []): Promise<unknown[][]> {
    return this.#withBusy(() => this.valuesSync(sql, args));
  }

  async #withBusy<T>(op: () => T): Promise<T> {
    if (!this.#o.asyncBusy || this.#inTx) return this.#giveUpPoisons(op);
    return this.#retryBusy(op);
  }

  async begin(): Promise<void> {
    if (this.#inTx) throw new Error("a transaction is already open on this connection");
    this.#heal();
    await this.#retryBusy(() => this.#db.exec("BEGIN IMMEDIATE"));
    this.#inTx = true;
  }

  commit(): void {
    try {
      this.#db.exec("COMMIT");
      this.#inTx = false;
    } catch (e) {
      if (busyError(e)) this.#poisoned = true;
      throw e;
    }
  }

  rollback(): void {
    this.#inTx = false;
    try {
      this.#db.exec("ROLLBACK");
    } catch {
      // already rolled back by SQLite (a failed COMMIT, say); the original error matters
    }
  }

  /** A busy answer nobody will retry leaves a statement in progress: the connection is reopened before its next use. */
  #giveUpPoisons<T>(op: () => T): T {
    try {
      return op();
    } catch (e) {
      if (busyError(e)) this.#poisoned = true;
      throw e;
    }
  }

  get inTransaction(): boolean {
    return this.#inTx;
  }

  async #retryBusy<T>(op: () => T): Promise<T> {
    const deadline = Date.now() + this.#o.busyTimeoutMs;
    let wait = 1;
    for (;;) {
      try {
        return op();
      } catch (e) {
        if (!busyError(e)) throw e;
        if (Date.now() >= deadline) {
          this.#poisoned = true;
          throw e;
        }
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(wait * 2, 25);
      }
    }
  }

  close(): void {
    this.#stmts.clear();
    this.#db.close();
    void releaseStatements();
  }
}
