/** Test helpers that read and change a root's task state where it lives: the tasks table of memory.db. */
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { Database } from "../../src/db/database.ts";

/**
 * Where a test root's database is: `memory.db` in the directory, or (the suites run against a
 * libSQL server, tests/support/sqld.ts) the server the fixture wrote into `<dir>/test_store.json`.
 */
export function testStoreOf(root: string): { url: string; project: string } | null {
  try {
    return JSON.parse(readFileSync(join(root, TEST_STORE_FILE), "utf8"));
  } catch {
    return null;
  }
}

export const TEST_STORE_FILE = "test_store.json";

/** A test root's database, local or on its server: for tests that look at rows directly. */
export function openTestDb(root: string): Promise<Database> {
  const server = testStoreOf(root);
  return Database.open(server ? server.url : pathToFileURL(join(root, "memory.db")).href);
}

/** Where a test root keeps its local files (its pending checkpoint): `.longrun/`, or the state directory of a root on a server. */
export function localStateDir(root: string): string {
  return testStoreOf(root) ? root : join(root, ".longrun");
}

async function withDb<T>(root: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openTestDb(root);
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
