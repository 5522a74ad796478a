/**
 * The queries a root runs on its own database, beyond its stores': the project a server database
 * holds, the blobs its rows name, the readiness probe, and folding the WAL into the file on a
 * clean close. The SQL lives here, in the store floor, so that the root (src/root/) and the edges
 * above it write none.
 */
import type { Database, Tx } from "../db/database.ts";

const PROJECT_KEY = "project";

/**
 * The project the database holds: the first runner names it (`project`), so the answer is
 * `project` on a new database and whatever an earlier runner named otherwise.
 */
export function claimProject(db: Database, project: string): Promise<string> {
  return db.write(async (tx: Tx) => {
    const rs = await tx.execute({ sql: "SELECT value FROM root_meta WHERE key = ?", args: [PROJECT_KEY] });
    if (rs.rows.length) return String(rs.rows[0]!.value);
    await tx.execute({ sql: "INSERT INTO root_meta(key, value) VALUES (?, ?)", args: [PROJECT_KEY, project] });
    return project;
  });
}

/** The first row of the task table and of memory: it needs the file, its schema and a read lock, nothing more. */
const PROBE = "SELECT (SELECT count(*) FROM (SELECT 1 FROM tasks LIMIT 1)), (SELECT count(*) FROM (SELECT 1 FROM memories LIMIT 1))";

/**
 * A trivial read of the task store and of memory on both of the database's connections (this
 * thread's, which the gate reads through, and the memory writer's, a Worker in servers).
 */
export async function probeRead(db: Database): Promise<void> {
  await Promise.all([db.values(PROBE), db.execute(PROBE)]);
}

/**
 * Folds the WAL into the database file, so the file alone is the whole memory (a copy of it is a
 * backup); best effort: another process reading keeps its part of the WAL.
 */
export async function foldWal(db: Database): Promise<void> {
  await db.execute("PRAGMA wal_checkpoint(TRUNCATE)").catch(() => {});
}
