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
  /** Runs `fn` in one write transaction (BEGIN IMMEDIATE): committed when it returns, rolled back when it throws. */
  write<T>(fn: (tx: SqlExec) => Promise<T>): Promise<T>;
}

/** SQLite's "database is locked" from any of the drivers (libSQL, bun:sqlite, node:sqlite), raw or classified. */
export function isBusyError(e: unknown): boolean {
  const err = e as { code?: unknown; rawCode?: unknown; errcode?: unknown; errno?: unknown; message?: unknown; kind?: unknown; data?: { reason?: unknown } } | null;
  // already classified (db/fault.ts): a lock held past the wait
  if (err?.kind === "conflict" && err.data?.reason === "lock_timeout") return true;
  const code = typeof err?.code === "string" ? err.code : "";
  if (code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_") || code === "SQLITE_LOCKED") return true;
  if (err?.rawCode === 5 || err?.rawCode === 6 || err?.errcode === 5 || err?.errno === 5) return true;
  return typeof err?.message === "string" && /database is locked|database table is locked|SQLITE_BUSY/i.test(err.message);
}

