/**
 * The schema of `memory.db`, created and versioned by the project: numbered migrations recorded
 * in `schema_migrations`, each applied once, in order, inside one write transaction (so two
 * processes opening a new root at once cannot both apply one).
 */
import type { Database } from "./db.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string[];
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "memories with a CJK-aware full-text index",
    sql: [
      `CREATE TABLE memories (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        type TEXT NOT NULL,
        title TEXT NOT NULL,
        content TEXT NOT NULL,
        keywords TEXT NOT NULL,
        task_id TEXT,
        dedupe_key TEXT UNIQUE,
        raw_ref TEXT,
        sha256 TEXT NOT NULL,
        size INTEGER NOT NULL,
        created_at TEXT NOT NULL
      )`,
      `CREATE INDEX memories_by_task ON memories(task_id, seq)`,
      `CREATE VIRTUAL TABLE memories_fts USING fts5(
        title, body, keywords,
        content='', contentless_delete=1,
        tokenize='porter unicode61 remove_diacritics 2'
      )`,
    ],
  },
];

/** Brings `db` to the newest schema version; a no-op when it is there already. */
export async function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): Promise<number> {
  await db.retryBusy(() =>
    db.execute(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at TEXT NOT NULL
      )`,
    )
  );
  let applied = 0;
  for (const m of migrations) {
    const done = await db.write(async (tx) => {
      const rs = await tx.execute({ sql: "SELECT 1 FROM schema_migrations WHERE version = ?", args: [m.version] });
      if (rs.rows.length) return false;
      for (const sql of m.sql) await tx.execute(sql);
      await tx.execute({
        sql: "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
        args: [m.version, m.name, new Date().toISOString()],
      });
      return true;
    });
    if (done) applied++;
  }
  return applied;
}

export async function schemaVersion(db: Database): Promise<number> {
  const rs = await db.execute("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations");
  return Number(rs.rows[0]?.v ?? 0);
}
