/**
 * Driver and file-system errors as kinds a caller can act on: disk full, read-only, I/O, missing
 * (`storage_error`), a damaged database (`memory_corrupt`), a lock held past the wait (`conflict`).
 * Anything else is left as it is (and reaches the wire as `internal`).
 */
import { ConflictError, LongrunError, MemoryCorruptError, StorageError } from "../core/errors.ts";
import { readdirSync, readFileSync } from "node:fs";
import { isBusyError } from "./sql.ts";

function codeOf(e: unknown): string {
  const err = e as { code?: unknown; errno?: unknown } | null;
  return typeof err?.code === "string" ? err.code : "";
}

export function classifyStorage(e: unknown, fallbackPath: string): LongrunError | null {
  if (e instanceof LongrunError || !(e instanceof Error)) return null;
  // a file-system error names its own file (state.json, the pending file, a blob); a driver error does not
  const own = (e as { path?: unknown }).path;
  const path = typeof own === "string" && own !== "" ? own : fallbackPath;
  const code = codeOf(e);
  const msg = e.message;
  const is = (codes: string[], pattern: RegExp) => codes.some((c) => code === c || code.startsWith(`${c}_`)) || pattern.test(msg);
  if (isBusyError(e)) {
    return new ConflictError(`Memory is busy: another process holds the write lock of ${path} past the wait; retry, or stop the process that holds it`, {
      reason: "lock_timeout",
      path,
    });
  }
  if (is(["SQLITE_FULL", "ENOSPC", "EDQUOT"], /database or disk is full|no space left/i)) return new StorageError("disk_full", path, msg, e);
  if (is(["SQLITE_READONLY", "EROFS", "EACCES", "EPERM"], /readonly database|read-only file system|permission denied/i)) return new StorageError("read_only", path, msg, e);
  if (is(["SQLITE_CORRUPT", "SQLITE_NOTADB"], /malformed|not a database|file is encrypted/i)) return new MemoryCorruptError(path, msg, e);
  if (is(["EMFILE", "ENFILE"], /too many open files/i) || (is(["SQLITE_CANTOPEN"], /unable to open database/i) && outOfDescriptors())) {
    return new StorageError("too_many_files", path, msg, e);
  }
  if (is(["ENOENT", "SQLITE_CANTOPEN"], /unable to open database|no such file/i)) return new StorageError("missing", path, msg, e);
  if (is(["SQLITE_IOERR", "EIO"], /disk I\/O error/i)) return new StorageError("io", path, msg, e);
  return null;
}

/**
 * SQLite says only "unable to open database file" when the process is out of file descriptors:
 * on Linux, this process's open descriptors against its soft limit tell the two apart.
 */
function outOfDescriptors(): boolean {
  try {
    const limit = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (!limit) return false;
    return readdirSync("/proc/self/fd").length >= Number(limit[1]) - 8;
  } catch (e) {
    const code = (e as { code?: string }).code;
    return code === "EMFILE" || code === "ENFILE"; // not even /proc could be opened: out of them indeed
  }
}
