/** Deno's `node:sqlite` behind the runtime-neutral `SyncSqlite` shape. */
import { DatabaseSync } from "node:sqlite";
import type { SyncSqlite } from "../types.ts";

export function open(path: string): SyncSqlite {
  const db = new DatabaseSync(path, { open: true });
  return {
    all: (sql, args) => db.prepare(sql).all(...(args as never[])) as Record<string, unknown>[],
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
  };
}
