/**
 * A libSQL server through `@libsql/client/web` (fetch and WebSocket: no native module, so the
 * per-call hook can use it too): the client, a write transaction, and the task state's `SqlConn`,
 * whose failures are classified by db/fault.ts (`classifyRemote`).
 */
import { type Client, createClient, type InStatement, type InValue, type ResultSet, type Row } from "@libsql/client/web";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { classifyRemote } from "./fault.ts";
import type { SqlArg, SqlConn, SqlRow, SqlStep } from "./sql.ts";

/** What a read or a write answers: the rows (by column name and by position), and what a write changed. */
export type Answer = Pick<ResultSet, "rows" | "rowsAffected" | "lastInsertRowid">;

export function openClient(url: string, authToken?: string): Client {
  return createClient({ url, authToken });
}

/** The database's write counter: every write transaction of longrun moves it on, in the same commit. */
const SEQ_TABLE = "CREATE TABLE IF NOT EXISTS write_seq (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)";
const SEQ_BUMP = "INSERT INTO write_seq(id, n) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET n = n + 1 RETURNING n";
const SEQ_READ = "SELECT COALESCE((SELECT n FROM write_seq WHERE id = 1), 0) AS n";
/**
 * A batch's `check` step (`SqlStep.check`) as a statement that fails when the check finds no row:
 * it inserts a row that write_seq's CHECK refuses, so the batch stops there and rolls back. (Not
 * `changes()` of the step before: a write after an FTS5 insert makes FTS5 flush first, which
 * changes it.)
 */
const stopUnless = (check: string) => `INSERT INTO write_seq(id, n) SELECT 0, 0 WHERE NOT EXISTS (${check})`;

/**
 * A plain SELECT (no ORDER BY, whose order a join would not keep) read in one statement with the
 * counter: every row of the query with `__row` set, or one row with `__row` NULL when it has none.
 */
const ONE_STATEMENT_READ = /^\s*SELECT\b/i;
const ORDERED = /\bORDER\s+BY\b/i;
const withSeq = (sql: string) =>
  `SELECT q.*, s.n AS __seq FROM (${SEQ_READ}) s LEFT JOIN (SELECT *, 1 AS __row FROM (${sql})) q`;

/** How long a read waits for a replica to catch up with this runner's own writes before asking the primary. */
const CATCH_UP_MS = 2_000;

const READ_SQL = /^\s*(SELECT|WITH|PRAGMA|EXPLAIN|VALUES)\b/i;

/**
 * A runner's session with a libSQL server: reads are never older than the runner's own writes,
 * also when the URL is a read replica (which forwards writes to its primary but answers reads
 * from what it has replicated so far). Every write transaction moves the database's `write_seq`
 * on in its own commit, and the runner remembers the highest value it wrote — in memory and in
 * `sessionFile` (shared by this runner's processes: a hook sees what the server before it wrote).
 * A read runs together with a read of `write_seq` in one read transaction; when the replica is
 * behind, the read is repeated until it has caught up, and after `CATCH_UP_MS` it is sent to the
 * primary (a write-mode batch is forwarded there).
 */
export class RemoteSession {
  #own = 0;
  #ready: Promise<void> | null = null;

  constructor(readonly client: Client, readonly sessionFile: string | null = null) {}

  /** Makes the counter exist (once per session; forwarded to the primary from a replica). */
  #prepare(): Promise<void> {
    return (this.#ready ??= this.client.execute(SEQ_TABLE).then(() => {}, (e) => {
      this.#ready = null;
      throw e;
    }));
  }

  #mine(): number {
    if (this.sessionFile) {
      try {
        const n = Number(readFileSync(this.sessionFile, "utf8"));
        if (Number.isSafeInteger(n) && n > this.#own) this.#own = n;
      } catch {
        // no file yet: nothing written by this runner
      }
    }
    return this.#own;
  }

  #wrote(n: number): void {
    if (n <= this.#own) return;
    this.#own = n;
    if (this.sessionFile) {
      try {
        writeFileSync(`${this.sessionFile}.tmp`, String(n), { mode: 0o600 });
        renameSync(`${this.sessionFile}.tmp`, this.sessionFile);
      } catch {
        // best effort: this process still knows; another one waits less
      }
    }
  }

  /** One statement: a read (never older than this runner's writes) or a write (in its own transaction). */
  execute(sql: string, args: readonly unknown[] = []): Promise<Answer> {
    return READ_SQL.test(sql) ? this.read(sql, args) : this.write((run) => run(sql, args));
  }

  /**
   * A read never older than this runner's writes, in one request: a plain SELECT as one statement
   * that also reads the counter (`withSeq`; the gate's read, as cheap as a statement gets), any
   * other read in a read transaction with the counter.
   */
  async read(sql: string, args: readonly unknown[] = []): Promise<Answer> {
    const want = this.#mine();
    if (want === 0) return this.client.execute({ sql, args: [...args] as InValue[] });
    const single = ONE_STATEMENT_READ.test(sql) && !ORDERED.test(sql);
    const deadline = Date.now() + CATCH_UP_MS;
    for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
      try {
        if (single) {
          const rs = await this.client.execute({ sql: withSeq(sql), args: [...args] as InValue[] });
          if (Number(rs.rows[0]?.__seq ?? 0) >= want) return withoutSeq(rs);
        } else {
          const [seq, rs] = await this.client.batch([SEQ_READ, { sql, args: [...args] as InValue[] }], "read");
          if (Number(seq!.rows[0]!.n) >= want) return rs!;
        }
      } catch (e) {
        // a replica that has not even replicated the counter yet is behind too
        if (!/no such table: write_seq/.test(String((e as Error)?.message))) throw e;
      }
      if (Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, wait));
    }
    // the replica is far behind: the primary answers (a write-mode batch is forwarded to it)
    const [, rs] = await this.client.batch([SEQ_READ, { sql, args: [...args] as InValue[] }], "write");
    return rs!;
  }

  /**
   * `SqlConn.batch`: the steps in one write transaction in one request (a write-mode batch: each
   * step runs only if the one before it succeeded, and the COMMIT only if the last did), with the
   * counter moved on; each step's answer, or null when a `check` step found no row (its
   * `stopUnless` failed, so nothing was written).
   */
  async batch(steps: readonly SqlStep[]): Promise<Answer[] | null> {
    await this.#prepare();
    const stmts: InStatement[] = [];
    const at: number[] = [];
    const stops = new Set<number>();
    for (const step of steps) {
      if (step.check) stops.add(stmts.length);
      at.push(stmts.length);
      stmts.push({ sql: step.check ? stopUnless(step.sql) : step.sql, args: [...step.args] as InValue[] });
    }
    stmts.push(SEQ_BUMP);
    let out: ResultSet[];
    try {
      out = await this.client.batch(stmts, "write");
    } catch (e) {
      const failed = e as { statementIndex?: unknown; code?: unknown };
      if (typeof failed.statementIndex === "number" && stops.has(failed.statementIndex) && /CONSTRAINT/.test(String(failed.code))) return null;
      throw e;
    }
    this.#wrote(Number(out[out.length - 1]!.rows[0]!.n));
    return at.map((i) => out[i]!);
  }

  /** Runs `fn` in one write transaction: committed (with the counter moved on) when it returns, rolled back when it throws. */
  async write<T>(fn: (run: (sql: string, args: readonly unknown[]) => Promise<ResultSet>) => Promise<T>): Promise<T> {
    await this.#prepare();
    const tx = await this.client.transaction("write");
    try {
      const out = await fn((sql, args) => tx.execute({ sql, args: [...args] as InValue[] }));
      const seq = Number((await tx.execute(SEQ_BUMP)).rows[0]!.n);
      await tx.commit();
      this.#wrote(seq);
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
  }
}

/**
 * The task state's connection to a server, every failure classified (`classifyRemote`): what a
 * hook process reads the lease through when the root is on a server. It never answers from a
 * cache, so it can never let a write through on a lease the server no longer holds.
 */
export function remoteConn(session: RemoteSession, url: string): SqlConn {
  const rows = (rs: Answer) => rs.rows as unknown as SqlRow[];
  const guard = async <T>(op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (e) {
      throw classifyRemote(e, url);
    }
  };
  return {
    run: (sql: string, args: readonly SqlArg[] = []) => guard(async () => rows(await session.execute(sql, args))),
    write: (fn) => guard(() => session.write((run) => fn({ run: async (sql, args = []) => rows(await run(sql, args)) }))),
    batch: (steps) => guard(async () => (await session.batch(steps))?.map(rows) ?? null),
  };
}

/** `withSeq`'s answer as the query's own: its rows without `__row` and `__seq` (none when `__row` is NULL). */
function withoutSeq(rs: ResultSet): Answer {
  const columns = rs.columns.slice(0, -2);
  const out: Row[] = [];
  for (const r of rs.rows) {
    if (r.__row === null || r.__row === undefined) continue;
    const row = {} as Row;
    Object.defineProperty(row, "length", { value: columns.length });
    columns.forEach((name, i) => {
      // as @libsql/client makes its rows: positions hidden, the first column of a name by name
      Object.defineProperty(row, i, { value: r[i] });
      if (!Object.hasOwn(row, name)) Object.defineProperty(row, name, { value: r[i], enumerable: true, configurable: true, writable: true });
    });
    out.push(row);
  }
  return { rows: out, rowsAffected: 0, lastInsertRowid: undefined };
}
