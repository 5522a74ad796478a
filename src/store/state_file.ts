/**
 * `<root>/.longrun/state.json`, replaced atomically, with compare-and-swap on `version` under a
 * root-wide lock (`<root>/.longrun/lock`, flock) so that two processes on one root never lose an
 * update. Reads take no lock: a rename is atomic, so a reader sees the old file or the new one.
 */
import { closeSync, fstatSync, openSync, readFileSync, renameSync, statSync } from "node:fs";
import { ConflictError } from "../core/errors.ts";
import type { Clock, CrashPoint, StateStore, StateTx } from "../core/ports.ts";
import type { TaskState } from "../core/task.ts";
import { fileLocker, type FileLock } from "../runtime/index.ts";
import { fsyncDir, writeFileAtomic } from "./atomic.ts";
import { lockHolder } from "./lock_holder.ts";
import { decodeState, encodeState } from "./state_codec.ts";
import { dirname } from "node:path";

export interface FileStateStoreOptions {
  path: string;
  lockPath: string;
  clock: Clock;
  crash?: CrashPoint;
  /** How long `transact` waits for another process's lock before giving up with `conflict`. */
  lockTimeoutMs?: number;
}

export class FileStateStore implements StateStore {
  readonly path: string;
  readonly #lockPath: string;
  readonly #clock: Clock;
  readonly #crash: CrashPoint;
  readonly #lockTimeoutMs: number;
  /** In-process queue: flock is per open file, so this process must not race itself for it. */
  #queue: Promise<unknown> = Promise.resolve();
  /**
   * The last state read, keyed by the file's identity (inode, size, mtime and ctime, sub-ms). Every
   * write is a rename of a new file, so any change of content changes the key; a hit costs one
   * stat instead of a read, a parse and a decode. The cached state is deeply frozen: callers
   * copy before they change anything (cloneState), and a slip would throw, not corrupt.
   */
  #cache: { key: string; state: TaskState } | null = null;

  constructor(options: FileStateStoreOptions) {
    this.path = options.path;
    this.#lockPath = options.lockPath;
    this.#clock = options.clock;
    this.#crash = options.crash ?? (() => {});
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
  }

  load(): Promise<TaskState | null> {
    return Promise.resolve(this.#read()?.state ?? null);
  }

  #read(): { state: TaskState; version: number } | null {
    let key: string;
    try {
      key = identity(statSync(this.path));
    } catch (e) {
      if ((e as { code?: string }).code === "ENOENT") return null;
      throw e;
    }
    if (this.#cache?.key === key) return { state: this.#cache.state, version: this.#cache.state.version };
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch (e) {
      if ((e as { code?: string }).code === "ENOENT") return null;
      throw e;
    }
    let text: string;
    try {
      key = identity(fstatSync(fd));
      text = readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
    const { state } = decodeState(text, this.path, this.#clock.now());
    deepFreeze(state);
    this.#cache = { key, state };
    return { state, version: state.version };
  }

  transact<T>(fn: (tx: StateTx) => Promise<T>): Promise<T> {
    const run = this.#queue.then(() => this.#locked(fn));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #locked<T>(fn: (tx: StateTx) => Promise<T>): Promise<T> {
    const lock = await this.#acquire();
    try {
      const tx: StateTx = {
        load: () => this.load(),
        save: (state, expected) => this.#save(state, expected),
        quarantine: () => Promise.resolve(this.#quarantine()),
      };
      return await fn(tx);
    } finally {
      await lock.release();
    }
  }

  async #acquire(): Promise<FileLock> {
    const locker = await fileLocker();
    const deadline = Date.now() + this.#lockTimeoutMs;
    let wait = 1;
    for (;;) {
      const lock = await locker.tryLock(this.#lockPath);
      if (lock) return lock;
      if (Date.now() >= deadline) {
        const holder = lockHolder(this.#lockPath);
        throw new ConflictError(
          `Root is busy: ${holder ? `process ${holder.pid}${holder.command ? ` (${holder.command})` : ""}` : "another process"} has held ${this.#lockPath} ` +
            `for over ${this.#lockTimeoutMs} ms; retry, or stop the process that holds it`,
          { reason: "lock_timeout", lock_path: this.#lockPath, holder_pid: holder?.pid ?? null },
        );
      }
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 25);
    }
  }

  #save(state: TaskState, expected: number | null): Promise<void> {
    let current: number | null;
    try {
      current = this.#read()?.version ?? null;
    } catch {
      current = -1; // unreadable: only recovery (which quarantines it first) may replace it
    }
    if (current !== expected) {
      throw new ConflictError(
        `State changed underneath: expected version ${expected ?? "none"} of ${this.path}, found ${current === -1 ? "an unreadable file" : current ?? "none"}; ` +
          `re-read the task and retry`,
        { expected_version: expected, actual_version: current === -1 ? null : current },
      );
    }
    writeFileAtomic(this.path, encodeState(state), { mode: 0o600, label: "state", crash: this.#crash });
    return Promise.resolve();
  }

  #quarantine(): string | null {
    const aside = `${this.path}.corrupt-${this.#clock.now().toISOString().replace(/[:.]/g, "-")}`;
    try {
      renameSync(this.path, aside);
    } catch (e) {
      if ((e as { code?: string }).code === "ENOENT") return null;
      throw e;
    }
    fsyncDir(dirname(this.path));
    return aside;
  }
}

function identity(st: { ino: number; size: number; mtimeMs: number; ctimeMs: number }): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}
