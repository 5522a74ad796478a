/**
 * Bodies kept under a root's `raw_data/`: generated names only (never a caller-chosen path),
 * written atomically, with size and sha256 recorded by whoever indexes them, and checked on read.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, unlinkSync } from "node:fs";
import { readdir, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { ContentMissingError } from "../core/errors.ts";
import type { CrashPoint } from "../core/ports.ts";
import { removeOrphanTemps, writeFileAtomic } from "./atomic.ts";
import type { SqlExec } from "../db/sql.ts";

/** How a blob's reference begins, as rows store it: the root's raw_data/ directory (src/root/layout.ts's rawData; tests/hooks/layout_table.test.ts checks they agree). */
export const RAW_REF_PREFIX = "raw_data/";

/** A blob file's name as `writeBlob` makes it (anything else in raw_data/ is not ours to remove). */
const BLOB_NAME = /^[a-z]+-[0-9a-f]{16}-[0-9a-f]{8}\.[a-z]+$/;

export interface Blob {
  /** `raw_data/<prefix>-<sha16>-<rand8>.<ext>`, relative to the root. */
  ref: string;
  size: number;
  sha256: string;
}

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Crash points (tests): `raw.after_temp_write`, `raw.after_temp_fsync`, `raw.after_rename`, `raw.after_dir_fsync`. */
export function writeBlob(rawDir: string, prefix: string, bytes: Uint8Array, crash?: CrashPoint, ext = "txt"): Blob {
  const sha256 = sha256Hex(bytes);
  const ref = blobRef(prefix, sha256, ext);
  writeFileAtomic(join(rawDir, ref.slice(RAW_REF_PREFIX.length)), bytes, { mode: 0o600, label: "raw", crash });
  return { ref, size: bytes.length, sha256 };
}

function pathOf(rawDir: string, ref: string): string {
  if (!ref.startsWith(RAW_REF_PREFIX) || !BLOB_NAME.test(ref.slice(RAW_REF_PREFIX.length))) throw new Error(`not a raw_data reference: ${JSON.stringify(ref)}`);
  return join(rawDir, ref.slice(RAW_REF_PREFIX.length));
}

/** Reads a blob back, refusing one that is missing or does not match its digest. */
export function readBlob(rawDir: string, ref: string, sha256: string, what: string): Uint8Array {
  const path = pathOf(rawDir, ref);
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") throw new ContentMissingError(path, what, "missing", e);
    throw e; // unreadable for now (permissions, I/O): a storage fault, classified at the edge
  }
  if (sha256Hex(bytes) !== sha256) throw new ContentMissingError(path, what, "mismatch");
  return bytes;
}

export function removeBlob(rawDir: string, ref: string): void {
  try {
    unlinkSync(pathOf(rawDir, ref));
  } catch {
    // already gone
  }
}

/** Which of the given references some row names (one indexed probe per reference: db_blobs.ts `blobsNamed`). */
export type NamedAmong = (refs: readonly string[]) => Promise<ReadonlySet<string>>;

/**
 * Temp files of writers since dead in `rawDir` (`removeOrphanTemps`), listed off this thread: the
 * directory holds every long body, so a root's opening runs this beside opening its database
 * rather than in line. Never rejects.
 */
export async function removeDeadTemps(rawDir: string): Promise<void> {
  try {
    if ((await readdir(rawDir)).some((n) => n.endsWith(".tmp"))) removeOrphanTemps(rawDir);
  } catch {
    // no directory: nothing to remove
  }
}

/** How orphan collection paces itself, so it never stands in a request's way. */
export interface CollectPace {
  /** Blobs looked at per step (default 64): one probe of the database per step. */
  batch?: number;
  /** Awaited before each step (default: a macrotask turn, so requests queued meanwhile go first); it may throw to stop the walk. Tests hold the collection here. */
  step?: () => Promise<void>;
}

export const COLLECT_BATCH = 64;
const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * Blobs no row refers to: written by a process that was killed before its commit (a blob is
 * written before the row that names it). Only files older than `graceMs` are removed, so a blob
 * another process has just written for a commit still in flight is never taken from it. Walks
 * `raw_data/` in small steps, each a stat per file and one indexed probe (`named`) for the old
 * ones, with a turn of the event loop between steps: its cost grows with the blobs, never with
 * the memories, and no step holds anything a request waits for. Returns the names removed.
 */
export async function removeOrphanBlobs(rawDir: string, named: NamedAmong, graceMs: number, pace: CollectPace = {}): Promise<string[]> {
  const removed: string[] = [];
  let all: string[];
  try {
    all = await readdir(rawDir);
  } catch {
    return removed;
  }
  const names = all.filter((n) => BLOB_NAME.test(n));
  const batch = pace.batch ?? COLLECT_BATCH;
  for (let i = 0; i < names.length; i += batch) {
    await (pace.step ?? nextTurn)();
    const now = Date.now();
    const old: string[] = [];
    for (const name of names.slice(i, i + batch)) {
      try {
        if (now - (await stat(join(rawDir, name))).mtimeMs >= graceMs) old.push(name);
      } catch {
        // gone already
      }
    }
    if (!old.length) continue;
    const kept = await named(old.map((n) => `${RAW_REF_PREFIX}${n}`));
    for (const name of old) {
      if (kept.has(`${RAW_REF_PREFIX}${name}`)) continue;
      try {
        await unlink(join(rawDir, name));
        removed.push(name);
      } catch {
        // gone already, or not ours to remove: left alone
      }
    }
  }
  return removed;
}

/**
 * Where a root's long bodies live: files under `raw_data/` (a local root) or rows of the `blobs`
 * table (a root on a libSQL server, so no runner keeps part of a project on its own disk). Either
 * way a blob is written before the row that names it, under a generated name, and checked
 * against its sha256 when read.
 */
export interface BlobStore {
  /**
   * Writes a new blob. `within`: the write transaction the blob's row will commit in — a blob
   * kept in the database goes into that same transaction (its connection is busy with it);
   * a file is written at once either way.
   */
  put(prefix: string, bytes: Uint8Array, crash?: CrashPoint, ext?: string, within?: SqlExec): Promise<Blob>;
  /** The bytes of `ref`; `ContentMissingError` when it is missing or does not match `sha256`. */
  get(ref: string, sha256: string, what: string): Promise<Uint8Array>;
  /** Removes a blob whose row did not commit (best effort). */
  remove(ref: string): Promise<void>;
  /** Removes blobs older than `graceMs` that no row names (`named` says which are), a few at a time; returns their names. */
  collectOrphans(named: NamedAmong, graceMs: number, pace?: CollectPace): Promise<string[]>;
}

/** Blobs as files in a root's `raw_data/`. */
export function fileBlobs(rawDir: string): BlobStore {
  return {
    put: (prefix, bytes, crash, ext) => Promise.resolve(writeBlob(rawDir, prefix, bytes, crash, ext)),
    get: (ref, sha256, what) => {
      try {
        return Promise.resolve(readBlob(rawDir, ref, sha256, what));
      } catch (e) {
        return Promise.reject(e);
      }
    },
    remove: (ref) => Promise.resolve(removeBlob(rawDir, ref)),
    collectOrphans: (named, graceMs, pace) => removeOrphanBlobs(rawDir, named, graceMs, pace),
  };
}

/** A new blob's reference: `raw_data/<prefix>-<sha16>-<rand8>.<ext>` (also the name of a blob row). */
export function blobRef(prefix: string, sha256: string, ext = "txt"): string {
  return `${RAW_REF_PREFIX}${prefix}-${sha256.slice(0, 16)}-${randomBytes(4).toString("hex")}.${ext}`;
}
