/**
 * The little a store needs from a SQL connection: rows out, and a write transaction. Two
 * connections implement it: libSQL (`@libsql/client`, the servers and anything that touches memory)
 * and the runtime's own SQLite (`bun:sqlite`, `node:sqlite` under Deno) for the per-call hook,
 * which must not load libSQL's native module. Both open the same `memory.db`.
 */
export type SqlRow = Record<string, unknown>;
export type SqlArg = string | number | bigint | null | Uint8Array;

export interface SqlExec {
  run(sql: string, args?: readonly SqlArg[]): Promise<SqlRow[]>;
}

export interface SqlConn extends SqlExec {
  /** `PRAGMA data_version` by the connection's cheapest path, where it has one. */
  dataVersion?(): Promise<number>;
  /** `dataVersion` when the connection can tell without waiting; null when it cannot. */
  dataVersionNow?(): number | null;
  /** Runs `fn` in one write transaction (BEGIN IMMEDIATE): committed when it returns, rolled back when it throws. */
  write<T>(fn: (tx: SqlExec) => Promise<T>): Promise<T>;
  /**
   * Statements known in advance in one write transaction, sent in one trip where the connection
   * has trips (a server: one request): each step's rows, or null when a `check` step found no
   * row, and then nothing of the batch was written. Absent where there is no such path.
   */
  batch?(steps: readonly SqlStep[]): Promise<SqlRow[][] | null>;
}

/** One statement of `SqlConn.batch`. */
export interface SqlStep {
  sql: string;
  args: readonly SqlArg[];
  /** A SELECT that must find a row (the condition of a compare-and-set): when it finds none, the whole batch is undone. */
  check?: boolean;
}

