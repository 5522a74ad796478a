/**
 * The runtime's own SQLite (`bun:sqlite` on Bun, `node:sqlite` on Deno) as a `SqlConn`, for the
 * per-call hook: it reads and changes the task state in `memory.db` without loading libSQL's
 * native module. Synchronous underneath; the transaction is BEGIN IMMEDIATE with a busy timeout.
 */
import type { SqlArg, SqlConn, SqlExec, SqlRow } from "./sql.ts";
import { runtimeKey } from "../runtime/index.ts";

import type { SyncSqlite } from "../runtime/types.ts";
export type { SyncSqlite } from "../runtime/types.ts";

export async function openSyncSqlite(path: string, busyTimeoutMs: number): Promise<SyncSqlite> {
  const key = runtimeKey();
  const db = key === "bun" ? (await import("../runtime/bun/sqlite.ts")).open(path) : key === "deno" ? (await import("../runtime/deno/sqlite.ts")).open(path) : null;
  if (!db) throw new Error("longrun runs on Bun or Deno; this runtime has no SQLite adapter");
  db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  return db;
}

/** `db` as a `SqlConn`: statements in order, one write transaction at a time. */
export function syncConn(db: SyncSqlite): SqlConn {
  const exec: SqlExec = { run: (sql, args = []) => Promise.resolve(db.all(sql, args)) };
  let busy = false;
  return {
    run: exec.run,
    async write(fn) {
      if (busy) throw new Error("a write transaction is already open on this connection");
      busy = true;
      db.exec("BEGIN IMMEDIATE");
      try {
        const out = await fn(exec);
        db.exec("COMMIT");
        return out;
      } catch (e) {
        try {
          db.exec("ROLLBACK");
        } catch {
          // already rolled back; the original error matters
        }
        throw e;
      } finally {
        busy = false;
      }
    },
  };
}
