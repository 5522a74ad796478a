/** Test helpers that read and change a root's task state where it lives: the tasks table of memory.db. */
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { Database } from "../src/memory/db.ts";

async function withDb<T>(root: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await Database.open(pathToFileURL(join(root, "memory.db")).href);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** The current task's state as stored (parsed JSON), or null. */
export function readTask(root: string): Promise<any> {
  return withDb(root, async (db) => {
    const rs = await db.execute("SELECT t.state FROM root_meta m JOIN tasks t ON t.task_id = m.value WHERE m.key = 'current_task'");
    return rs.rows[0] ? JSON.parse(String(rs.rows[0].state)) : null;
  });
}

/** Overwrites the current task's stored state (the way a stray writer would), version included. */
export function writeTask(root: string, state: Record<string, unknown>): Promise<void> {
  return withDb(root, async (db) => {
    await db.execute({ sql: "UPDATE tasks SET state = ?, version = ? WHERE task_id = ?", args: [JSON.stringify(state), Number(state.version), String(state.task_id)] });
  });
}

/** Stores `text` as the current task's state: an unreadable state. */
export function corruptTask(root: string, text: string): Promise<void> {
  return withDb(root, async (db) => {
    await db.execute({ sql: "UPDATE tasks SET state = ? WHERE task_id = (SELECT value FROM root_meta WHERE key = 'current_task')", args: [text] });
  });
}

/** Removes the task state altogether (memory stays): a lost state. */
export function loseTask(root: string): Promise<void> {
  return withDb(root, async (db) => {
    await db.execute("DELETE FROM tasks");
    await db.execute("DELETE FROM root_meta WHERE key = 'current_task'");
  });
}
