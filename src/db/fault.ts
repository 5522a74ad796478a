/**
 * Driver and file-system errors as kinds a caller can act on: disk full, read-only, I/O, missing
 * (`storage_error`), a damaged database (`memory_corrupt`), a lock held past the wait (`conflict`),
 * a libSQL server that cannot be reached or refused the runner. Anything else is left as it is
 * (and reaches the wire as `internal`). The one place that reads drivers' codes and messages:
 * every layer above sees kinds (`classifyDriver`, `classifyStorage`, `classifyRemote`, `isBusyError`).
 */
import { ConflictError, LongrunError, MemoryCorruptError, StorageError, type StorageFault } from "../core/errors.ts";
import { readdirSync, readFileSync } from "node:fs";

function codeOf(e: unknown): string {
  const err = e as { code?: unknown; errno?: unknown } | null;
  return typeof err?.code === "string" ? err.code : "";
}

/** SQLite's "database is locked" from any of the drivers (libSQL, bun:sqlite, node:sqlite), raw or classified. */
export function isBusyError(e: unknown): boolean {
  const err = e as { code?: unknown; rawCode?: unknown; errcode?: unknown; errno?: unknown; message?: unknown; kind?: unknown; data?: { reason?: unknown } } | null;
  // already classified (classifyStorage below): a lock held past the wait
  if (err?.kind === "conflict" && err.data?.reason === "lock_timeout") return true;
  const code = typeof err?.code === "string" ? err.code : "";
  if (code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_") || code === "SQLITE_LOCKED") return true;
  if (err?.rawCode === 5 || err?.rawCode === 6 || err?.errcode === 5 || err?.errno === 5) return true;
  return typeof err?.message === "string" && /database is locked|database table is locked|SQLITE_BUSY/i.test(err.message);
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

/**
 * A server's failure as what it is: an SQL error stays as it is (classified like a local one); a
 * connection refused, reset or timed out, a WebSocket closed, a 5xx — the server is unreachable; a
 * 401/403 — it refused this runner.
 */
export function classifyRemote(e: unknown, url: string): unknown {
  // longrun's own refusals (thrown inside a transaction) are what they say, whatever words they use
  if (e instanceof LongrunError) return e;
  const err = e as { code?: unknown; message?: unknown; name?: unknown } | null;
  const code = typeof err?.code === "string" ? err.code : "";
  const msg = typeof err?.message === "string" ? err.message : String(e);
  if (code.startsWith("SQLITE_") && !/SQLITE_(IOERR|CANTOPEN)/.test(code)) return e;
  if (/HTTP status 40[13]\b|AUTH_|unauthorized|forbidden/i.test(msg + " " + code)) return new StorageError("refused", url, msg, e);
  if (/EPROTO|TLS|SSL|certificate|CERT_/i.test(msg + " " + code)) {
    const plain = /^(libsql|https|wss):/.test(url) ? " (libsql://, https:// and wss:// speak TLS; a server without TLS is http:// or ws://)" : "";
    return new StorageError("unreachable", url, `${msg}${plain}`, e);
  }
  if (
    /fetch failed|ECONNREFUSED|ECONNRESET|ConnectionRefused|ConnectionClosed|Unable to connect|socket|network|WebSocket|HRANA_(WEBSOCKET|CLOSED)|HTTP status 5\d\d|timed? ?out|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|dns|STREAM_EXPIRED|closed/i
      .test(msg + " " + code + " " + String(err?.name ?? ""))
  ) return new StorageError("unreachable", url, msg, e);
  return e;
}

/**
 * A failure of the database at `path` (a file, or a server's URL when `remote`) as a kind the
 * caller can act on, or the error as it is: what every operation of `Database` throws.
 */
export function classifyDriver(e: unknown, path: string, remote: boolean): unknown {
  const seen = remote ? classifyRemote(e, path) : e;
  return classifyStorage(seen, path) ?? seen;
}
