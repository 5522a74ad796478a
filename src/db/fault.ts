/**
 * Driver and file-system errors as kinds a caller can act on: disk full, read-only, I/O, missing
 * (`storage_error`), a damaged database (`memory_corrupt`), a lock held past the wait (`conflict`).
 * Anything else is left as it is (and reaches the wire as `internal`).
 */
import { ConflictError, LongrunError, MemoryCorruptError, StorageError, type StorageFault } from "../core/errors.ts";
import { readdirSync, readFileSync } from "node:fs";
import { isBusyError } from "./sql.ts";

function codeOf(e: unknown): string {
  const err = e as { code?: unknown; errno?: unknown } | null;
  return typeof err?.code === "string" ? err.code : "";
}

/**
 * What a driver or file-system error is, tried in this order; the first row whose codes (or a
 * code with `_` and more, e.g. SQLITE_IOERR_WRITE) or message pattern match, and whose `when`
 * holds, decides. `fault` is a `StorageError` reason, or `memory_corrupt`; every row makes one of
 * the storage kinds of core/errors.ts (ERRORS' `storage` column), as does the busy lock before them.
 */
const FAULTS: readonly { fault: StorageFault | "memory_corrupt"; codes: readonly string[]; pattern: RegExp; when?: () => boolean }[] = [
  { fault: "disk_full", codes: ["SQLITE_FULL", "ENOSPC", "EDQUOT"], pattern: /database or disk is full|no space left/i },
  { fault: "read_only", codes: ["SQLITE_READONLY", "EROFS", "EACCES", "EPERM"], pattern: /readonly database|read-only file system|permission denied/i },
  { fault: "memory_corrupt", codes: ["SQLITE_CORRUPT", "SQLITE_NOTADB"], pattern: /malformed|not a database|file is encrypted/i },
  { fault: "too_many_files", codes: ["EMFILE", "ENFILE"], pattern: /too many open files/i },
  // SQLite's "unable to open database file" is also what running out of descriptors looks like
  { fault: "too_many_files", codes: ["SQLITE_CANTOPEN"], pattern: /unable to open database/i, when: outOfDescriptors },
  { fault: "missing", codes: ["ENOENT", "SQLITE_CANTOPEN"], pattern: /unable to open database|no such file/i },
  { fault: "io", codes: ["SQLITE_IOERR", "EIO"], pattern: /disk I\/O error/i },
];

export function classifyStorage(e: unknown, fallbackPath: string): LongrunError | null {
  if (e instanceof LongrunError || !(e instanceof Error)) return null;
  // a file-system error names its own file (state.json, the pending file, a blob); a driver error does not
  const own = (e as { path?: unknown }).path;
  const path = typeof own === "string" && own !== "" ? own : fallbackPath;
  const code = codeOf(e);
  const msg = e.message;
  if (isBusyError(e)) {
    return new ConflictError(`Memory is busy: another process holds the write lock of ${path} past the wait; retry, or stop the process that holds it`, {
      reason: "lock_timeout",
      path,
    });
  }
  for (const row of FAULTS) {
    const matches = row.codes.some((c) => code === c || code.startsWith(`${c}_`)) || row.pattern.test(msg);
    if (!matches || (row.when && !row.when())) continue;
    return row.fault === "memory_corrupt" ? new MemoryCorruptError(path, msg, e) : new StorageError(row.fault, path, msg, e);
  }
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
