/**
 * One libSQL database handle (`memory.db` of a root, or a libSQL server URL): WAL,
 * `synchronous=FULL` (acknowledged writes survive power loss), a busy timeout so SQLITE_BUSY never
 * reaches a caller, and every operation queued on one connection so a write transaction
 * (`BEGIN IMMEDIATE`) never interleaves with another call of this process.
 */
import { type Client, createClient, type InArgs, type ResultSet, type Transaction } from "@libsql/client";

export const BUSY_TIMEOUT_MS = 10_000;

export interface Stmt {
  sql: string;
  args?: InArgs;
}

export function isBusy(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code ?? "";
  return code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_") || code === "SQLITE_LOCKED";
}

export class Database {
  readonly url: string;
  readonly #client: Client;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  private constructor(url: string, client: Client) {
    this.url = url;
    this.#client = client;
  }

  /** Opens `url` (`file:/abs/path.db`, `http://…`, `ws://…`). Local files get WAL and synchronous=FULL. */
  static async open(url: string, options: { authToken?: string; busyTimeoutMs?: number } = {}): Promise<Database> {
    const local = url.startsWith("file:");
    const client = createClient({
      url,
      authToken: options.authToken,
      concurrency: local ? 1 : undefined,
      timeout: local ? (options.busyTimeoutMs ?? BUSY_TIMEOUT_MS) : undefined,
    });
    const db = new Database(url, client);
    if (local) {
      // Switching a new file to WAL takes an exclusive lock, and SQLite answers SQLITE_BUSY at
      // once (without its busy handler) when another process is doing the same: retry it.
      await db.retryBusy(() => db.execute({ sql: "PRAGMA journal_mode=WAL" }));
      await db.execute({ sql: "PRAGMA synchronous=FULL" });
      await db.execute({ sql: "PRAGMA foreign_keys=ON" });
    }
    return db;
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

  #enqueue<T>(op: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error(`Database ${this.url} is closed`));
    const run = this.#queue.then(op);
    this.#queue = run.catch(() => {});
    return run;
  }

  execute(stmt: Stmt | string): Promise<ResultSet> {
    const s = typeof stmt === "string" ? { sql: stmt } : stmt;
    return this.#enqueue(() => this.#client.execute({ sql: s.sql, args: s.args ?? [] }));
  }

  /** Runs statements in one write transaction, all or nothing. */
  batch(stmts: Stmt[]): Promise<ResultSet[]> {
    return this.#enqueue(() => this.#client.batch(stmts.map((s) => ({ sql: s.sql, args: s.args ?? [] })), "write"));
  }

  /** Runs `fn` in a write transaction (`BEGIN IMMEDIATE`): committed when it returns, rolled back when it throws. */
  write<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.#enqueue(async () => {
      const tx = await this.#client.transaction("write");
      try {
        const out = await fn(tx);
        await tx.commit();
        return out;
      } catch (e) {
        try {
          await tx.rollback();
        } catch {
          // the transaction is already gone; the original error matters
        }
        throw e;
      } finally {
        tx.close();
      }
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#queue;
    this.#closed = true;
    this.#client.close();
  }
}
