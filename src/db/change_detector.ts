/**
 * Whether a local `memory.db` (WAL mode) changed since the last look, without SQL: one `pread`
 * of the WAL-index header in `memory.db-shm`, the very bytes SQLite compares to decide that its
 * snapshot is out of date (wal.c, `walIndexTryHdr`). Every write transaction that commits, in
 * any process, rewrites that header (`iChange` counts commits; a checkpoint that restarts the
 * WAL changes `aSalt`), both copies, the second one first.
 *
 * Anything unexpected answers "unsure" and the caller falls back to `PRAGMA data_version`: the
 * file is missing, shorter than the header, unlinked since it was opened (deleted or replaced);
 * the two copies differ (a writer is between them), `isInit` is 0, the version is not SQLite's
 * 3007000, or the checksum does not match (a torn read). The caller asks for WAL first: a
 * leftover `-shm` beside a database in another journal mode would never change.
 *
 * The `-shm` stays open for the life of the process and is never closed: closing any descriptor
 * of a file drops every POSIX lock this process holds on it, SQLite's own shared-memory locks
 * (of this thread's connection and the writer Worker's) included.
 */
import { fstatSync, openSync, readSync } from "node:fs";

/** What a look at the header says: no commit since the last look, a commit (or the first look), or cannot tell. */
export type Seen = "same" | "changed" | "unsure";

/** Two copies of the 48-byte `WalIndexHdr` (12 words each), read as words in this machine's byte order, as SQLite writes them. */
const HEADERS = 96;
const WORDS = 12;
/** `WALINDEX_MAX_VERSION` in wal.c: the first word. */
const WALINDEX_VERSION = 3007000;
/** `isInit`: the byte at offset 12. */
const IS_INIT = 12;
/** `offsetof(WalIndexHdr, aCksum) / 4`: the checksum covers the words before it. */
const CKSUM_WORD = 10;

/**
 * Test seam, for tests only: when set, it may change the header bytes just read (to inject a
 * corrupt or half-written header); null in every real run.
 */
export const testSeamShmHeader: { corrupt: ((header: Uint8Array) => void) | null } = { corrupt: null };

/** Descriptors of `-shm` files by path, kept open for good (see the module comment). */
const OPEN = new Map<string, number>();

function openShm(path: string): number | null {
  const known = OPEN.get(path);
  if (known !== undefined && linked(known)) return known;
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return null;
  }
  // the unlinked one (if any) stays open too: closing it could drop locks another connection still holds on it
  OPEN.set(path, fd);
  return fd;
}

function linked(fd: number): boolean {
  try {
    return fstatSync(fd).nlink > 0;
  } catch {
    return false;
  }
}

/** The checksum of the WAL-index header (wal.c `walChecksumBytes` over its first 40 bytes, native byte order: the words as they are). */
function checksumOk(w: Uint32Array): boolean {
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < CKSUM_WORD; i += 2) {
    s1 = (s1 + w[i]! + s2) >>> 0;
    s2 = (s2 + w[i + 1]! + s1) >>> 0;
  }
  return s1 === w[CKSUM_WORD] && s2 === w[CKSUM_WORD + 1];
}

/**
 * Watches one database's WAL-index header. `look()` costs one `pread` and one `fstat`.
 *
 * @example
 * const w = new WalIndexWatch("/root/.longrun/memory.db");
 * if (w.look() !== "same") reloadFromSql();
 */
export class WalIndexWatch {
  readonly shmPath: string;
  #fd: number | null = null;
  readonly #buf = new Uint8Array(HEADERS);
  readonly #words = new Uint32Array(this.#buf.buffer);
  readonly #last = new Uint32Array(WORDS);
  #hasLast = false;

  constructor(dbPath: string) {
    this.shmPath = `${dbPath}-shm`;
  }

  look(): Seen {
    if (this.#fd === null) {
      this.#fd = openShm(this.shmPath);
      if (this.#fd === null) return this.#unsure();
    }
    let n: number;
    try {
      n = readSync(this.#fd, this.#buf, 0, HEADERS, 0);
    } catch {
      n = 0;
    }
    // deleted or replaced since it was opened: this descriptor no longer names the database's -shm
    if (n < HEADERS || !linked(this.#fd)) {
      this.#fd = null;
      return this.#unsure();
    }
    testSeamShmHeader.corrupt?.(this.#buf);
    const w = this.#words;
    if (w[0] !== WALINDEX_VERSION || this.#buf[IS_INIT] !== 1 || !checksumOk(w)) return this.#unsure();
    for (let i = 0; i < WORDS; i++) if (w[i] !== w[WORDS + i]) return this.#unsure();
    let same = this.#hasLast;
    for (let i = 0; same && i < WORDS; i++) same = w[i] === this.#last[i];
    if (same) return "same";
    this.#last.set(w.subarray(0, WORDS));
    this.#hasLast = true;
    return "changed";
  }

  /** Cannot tell; and the next good look counts as a change (nothing is known about the time in between). */
  #unsure(): Seen {
    this.#hasLast = false;
    return "unsure";
  }
}
