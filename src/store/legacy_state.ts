/**
 * Roots made by an earlier longrun keep their task in `.longrun/state.json`. On first open the
 * state moves into the database, once, safely: in one transaction (a newer row is never
 * overwritten), then the file is renamed, kept for people to read. A legacy state that said
 * writable arrives read-only (the codec revokes it). An unreadable file is never "no task": the
 * root is marked corrupt, the file stays where it is, and `task.recover` rebuilds the task from
 * memory and keeps the file aside.
 *
 * Once means once: a root whose state already lives in memory.db (it holds a task, or a legacy
 * state was imported: `legacy_state_checked` in root_meta) never reads a `state.json` again. One that turns up there later (copied back, a directory made by hand, a
 * torn file) is ignored and left where it is; it neither becomes the current task nor locks the root.
 */
import { readFileSync, renameSync } from "node:fs";
import { dirname } from "node:path";
import { StateCorruptError } from "../core/errors.ts";
import type { Clock } from "../core/ports.ts";
import type { TaskState } from "../core/task.ts";
import { fsyncDir } from "./atomic.ts";
import type { SqlConn, SqlExec } from "../db/sql.ts";
import { decodeState } from "./state_codec.ts";
import { CURRENT_TASK, LEGACY_CORRUPT } from "./state_db.ts";

/** Set in root_meta once a root's open has looked for a legacy state file: it is never looked for again. */
export const LEGACY_CHECKED = "legacy_state_checked";

/** Whether this root's state already lives in the database (so a legacy file is never imported). */
async function migrated(x: SqlExec): Promise<boolean> {
  const rows = await x.run("SELECT (SELECT 1 FROM root_meta WHERE key = ?) AS checked, (SELECT 1 FROM tasks LIMIT 1) AS tasks", [LEGACY_CHECKED]);
  return Boolean(rows[0]?.checked) || Boolean(rows[0]?.tasks);
}

/**
 * Moves `<root>/.longrun/state.json` into the database, on the root's first open only; a no-op
 * when there is none, and for a root already migrated. A mark an earlier longrun set by mistake
 * for a stray file in a root with tasks is cleared.
 */
export async function importLegacyState(statePath: string, conn: SqlConn, clock: Clock): Promise<void> {
  // (statements in a write transaction: the open's own connection, as the identity check uses)
  const skip = await conn.write(async (x) => {
    await x.run("DELETE FROM root_meta WHERE key = ? AND EXISTS (SELECT 1 FROM tasks)", [LEGACY_CORRUPT]);
    return migrated(x);
  });
  if (skip) return;
  await importOnce(statePath, conn, clock);
}

async function importOnce(statePath: string, conn: SqlConn, clock: Clock): Promise<void> {
  let text: string | null;
  try {
    text = readFileSync(statePath, "utf8");
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT") return;
    if (code !== "EISDIR") throw e; // unreadable for now (permissions, I/O): reported, nothing marked
    text = null; // a directory where the file should be: as unreadable as a torn file
  }
  let state: TaskState | null = null;
  try {
    if (text !== null) state = decodeState(text, statePath, clock.now()).state;
  } catch (e) {
    if (!(e instanceof StateCorruptError)) throw e;
  }
  await conn.write(async (x) => {
    if (!state) {
      await x.run("INSERT INTO root_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [LEGACY_CORRUPT, statePath]);
      return;
    }
    const have = await x.run("SELECT version FROM tasks WHERE task_id = ?", [state.task_id]);
    if (have[0] && Number(have[0].version) >= state.version) return; // already moved (another process got here first)
    await x.run(
      `INSERT INTO tasks(task_id, state, version, status, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(task_id) DO UPDATE SET state = excluded.state, version = excluded.version, status = excluded.status, updated_at = excluded.updated_at`,
      [state.task_id, JSON.stringify(state), state.version, state.status, clock.now().toISOString()],
    );
    await x.run("INSERT INTO root_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [CURRENT_TASK, state.task_id]);
    await x.run("INSERT INTO root_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING", [LEGACY_CHECKED, clock.now().toISOString()]);
  });
  if (!state) return;
  try {
    renameSync(statePath, `${statePath}.migrated-${clock.now().toISOString().replace(/[:.]/g, "-")}`);
    fsyncDir(dirname(statePath));
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOENT") throw e; // another process renamed it
  }
}
