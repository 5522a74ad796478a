/** `bun:sqlite` behind the runtime-neutral `SyncSqlite` shape. */
import { Database } from "bun:sqlite";
import type { SyncSqlite } from "../types.ts";

export function open(path: string): SyncSqlite {
  const db = new Database(path, { create: false, readwrite: true, strict: true });
  return {
    all: (sql, args) => db.query(sql).all(...(args as never[])) as Record<string, unknown>[],
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
  };
}
