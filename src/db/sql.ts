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
}

