/**
 * A root remembers that its memory exists. The first open gives the root an id, stored in
 * `memory.db` (`root_meta.root_id`) and then in `.longrun/root_id`. From then on a `memory.db` that
 * is missing, empty (truncated to 0 bytes) or another root's (replaced) is a `storage_error` with a
 * recovery path, never a silent fresh start that hands out `S_0001` again. Roots from before this
 * get their id on first open.
 *
 * `identityOf` is the file's identity (device and inode) at open, for a long-running server to see
 * the file removed or replaced under it (`RootRegistry`).
 */
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, renameSync, statSync, unlinkSync } from "node:fs";
import { StorageError } from "../core/errors.ts";
import { writeFileAtomic } from "./atomic.ts";
import type { SqlExec } from "../db/sql.ts";

export const ROOT_ID_KEY = "root_id";

export const RECOVERY =
  "restore memory.db from a backup (or move it back), or, to go on without it, run `longrun recover --accept-memory --root <dir>` " +
  "(the file that is there now is kept aside, and a new memory begins)";

export function rootIdFile(longrunDir: string): string {
  return `${longrunDir}/root_id`;
}

/** The id this root was given, or null for a root that has none yet. */
export function rememberedId(longrunDir: string): string | null {
  try {
    const id = readFileSync(rootIdFile(longrunDir), "utf8").trim();
    return id === "" ? null : id;
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return null;
    throw e;
  }
}

/** Before the database is opened (opening would create it): a remembered root whose file is gone or empty. */
export function checkPresent(longrunDir: string, dbPath: string): void {
  const id = rememberedId(longrunDir);
  if (id === null) return;
  let size: number;
  try {
    size = statSync(dbPath).size;
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOENT") throw e;
    throw new StorageError("missing", dbPath, `this root's memory (root id ${id}) is gone; ${RECOVERY}`);
  }
  if (size === 0) throw new StorageError("missing", dbPath, `this root's memory (root id ${id}) is empty: the file was truncated; ${RECOVERY}`);
}

/**
 * After migrations, in a write transaction: the database's id against the remembered one. A new
 * root (or one from before ids) gets one, in the database first, then (`remember`) in the file.
 */
export async function settleIdentity(longrunDir: string, dbPath: string, tx: SqlExec): Promise<string> {
  const remembered = rememberedId(longrunDir);
  const rows = await tx.run("SELECT value FROM root_meta WHERE key = ?", [ROOT_ID_KEY]);
  const stored = rows.length ? String(rows[0]!.value) : null;
  if (remembered !== null && stored !== remembered) {
    throw new StorageError(
      "missing",
      dbPath,
      `memory.db was replaced: it is ${stored === null ? "a database of no root" : `root ${stored}'s memory`}, and this root's (${remembered}) is not there; ${RECOVERY}`,
    );
  }
  if (stored !== null) return stored;
  await tx.run("INSERT INTO root_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING", [ROOT_ID_KEY, randomUUID()]);
  return String((await tx.run("SELECT value FROM root_meta WHERE key = ?", [ROOT_ID_KEY]))[0]!.value);
}

/** Writes `.longrun/root_id` once the database holds the id (a crash between the two leaves a root that gets it next time). */
export function remember(longrunDir: string, id: string): void {
  if (rememberedId(longrunDir) !== id) writeFileAtomic(rootIdFile(longrunDir), id + "\n", { mode: 0o600, label: "root_id" });
}

export interface FileIdentity {
  dev: number;
  ino: number;
}

export function identityOf(path: string): FileIdentity | null {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

/**
 * `longrun recover --accept-memory`, step one: this root forgets its id, and a memory.db that is
 * empty is moved aside (with its -wal and -shm), so the next open adopts what is there or begins
 * a new memory. Returns the names it was moved to.
 */
export function forgetIdentity(longrunDir: string, dbPath: string, now: Date, moveAside: boolean): string[] {
  const moved: string[] = [];
  let empty = false;
  try {
    empty = statSync(dbPath).size === 0;
  } catch {
    // missing: nothing to move
  }
  if (moveAside || empty) {
    const stamp = now.toISOString().replace(/[:.]/g, "-");
    for (const suffix of ["", "-wal", "-shm"]) {
      const from = dbPath + suffix;
      if (!existsSync(from)) continue;
      const to = `${dbPath}.set-aside-${stamp}${suffix}`;
      renameSync(from, to);
      moved.push(to);
    }
  }
  try {
    unlinkSync(rootIdFile(longrunDir));
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOENT") throw e;
  }
  return moved;
}
