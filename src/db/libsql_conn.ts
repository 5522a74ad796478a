import type { Database } from "./database.ts";
import type { SqlConn, SqlRow } from "./sql.ts";

/**
 * A libSQL database as a `SqlConn` for the task state: reads and transactions on the calling
 * thread's connection, never queued behind the writer Worker's memory and ledger writes.
 */
export function libsqlConn(db: Database): SqlConn {
  return {
    run: async (sql, args = []) => (await db.read({ sql, args: [...args] })).rows as unknown as SqlRow[],
    dataVersion: () => db.dataVersion(),
    dataVersionNow: () => db.dataVersionNow(),
    write: (fn) => db.writeHere((tx) => fn({ run: async (sql, args = []) => (await tx.execute({ sql, args: [...args] })).rows as unknown as SqlRow[] })),
    batch: async (steps) => (await db.batchHere(steps))?.map((rs) => rs.rows as unknown as SqlRow[]) ?? null,
  };
}
