/**
 * `<root>/.longrun/pending_checkpoint.json`: a checkpoint whose commit failed, so memory does not
 * hold it yet. Written atomically when that commit fails (the seed's fallback) and removed after
 * a later commit has saved it (replayed once: memory dedupes by checkpoint id). While it exists the
 * gate answers read-only: the failed checkpoint ended the turn's lease even if the database could
 * not record that. When the disk is so full that the checkpoint cannot be written here either, the
 * file is left empty (a marker that needs no data blocks): the gate still reads read-only, and the
 * next resume removes it; that checkpoint is lost, and its caller was told so.
 */
import { closeSync, existsSync, openSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import { CheckpointWriteError, describeCause, STORAGE_KINDS, StateCorruptError } from "../core/errors.ts";
import type { CrashPoint, PendingCheckpoint, PendingStore } from "../core/ports.ts";
import { decodeState } from "./state_codec.ts";
import { fsyncDir, writeFileAtomic } from "./atomic.ts";

/**
 * A checkpoint that failed before its root could be opened (memory.db gone, damaged, locked): it
 * cannot be drafted, but it still ends the lease. The empty marker at `path` makes every process's
 * gate refuse until task.resume; the answer is the checkpoint's own error. Null for a failure
 * that is not the storage's (a bad root name), or when there is no pending path.
 */
export function checkpointWithoutRoot(path: string | null, cause: unknown): CheckpointWriteError | null {
  const kind = (cause as { kind?: unknown } | null)?.kind;
  if (path === null || !STORAGE_KINDS.has(kind as string)) return null;
  const pending = new FilePendingStore(path);
  const waiting = pending.exists() && !pending.lost();
  const marked = waiting || pending.markLost();
  return new CheckpointWriteError(path, cause, {
    pendingError: waiting ? null : `the root could not be opened to draft it${marked ? `; ${path} marks it` : ", and the pending marker could not be created either"}`,
    revokeError: describeCause(cause),
  });
}

export class FilePendingStore implements PendingStore {
  readonly path: string;
  readonly #crash: CrashPoint;

  constructor(path: string, crash?: CrashPoint) {
    this.path = path;
    this.#crash = crash ?? (() => {});
  }

  /**
   * Whether it is there; a path the process cannot look at (permissions, a link loop, a file in
   * place of a directory) counts as there: the gate then reads read-only. One `stat` on every gate
   * check, on purpose: this file is written exactly when memory.db could not take the
   * checkpoint, so no mark inside the database (or its `-shm`, which the state cache watches)
   * could stand for it, and a cached answer could miss another process's failed checkpoint.
   */
  exists(): boolean {
    try {
      return statSync(this.path, { throwIfNoEntry: false }) !== undefined;
    } catch {
      return true;
    }
  }

  read(): Promise<PendingCheckpoint | null> {
    if (!existsSync(this.path)) return Promise.resolve(null); // the common case, without an exception
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (e) {
      if ((e as { code?: string }).code === "ENOENT") return Promise.resolve(null);
      throw e;
    }
    if (text === "") return Promise.resolve(null); // the marker of a checkpoint that could not be kept (markLost)
    let raw: Record<string, unknown>;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new StateCorruptError(this.path, `pending checkpoint is not valid JSON (${(e as Error).message})`, e);
    }
    const rec = raw?.record as Record<string, unknown> | undefined;
    if (
      raw?.format !== 1 ||
      typeof raw.checkpoint_id !== "string" ||
      typeof raw.task_id !== "string" ||
      typeof rec?.content !== "string" ||
      typeof rec?.title !== "string" ||
      typeof rec?.type !== "string"
    ) {
      throw new StateCorruptError(this.path, "pending checkpoint lacks checkpoint_id, task_id or record");
    }
    const state = decodeState(JSON.stringify(raw.state), this.path, new Date()).state;
    return Promise.resolve({ ...(raw as unknown as PendingCheckpoint), state });
  }

  write(pending: PendingCheckpoint): Promise<void> {
    writeFileAtomic(this.path, JSON.stringify(pending, null, 2) + "\n", { mode: 0o600, label: "pending", crash: this.#crash });
    return Promise.resolve();
  }

  markLost(): boolean {
    try {
      closeSync(openSync(this.path, "a", 0o600)); // creates it empty, or leaves a pending checkpoint as it is
      return true;
    } catch {
      return false;
    }
  }

  lost(): boolean {
    try {
      return statSync(this.path, { throwIfNoEntry: false })?.size === 0;
    } catch {
      return false;
    }
  }

  clear(): Promise<void> {
    try {
      unlinkSync(this.path);
    } catch (e) {
      if ((e as { code?: string }).code === "ENOENT") return Promise.resolve();
      throw e;
    }
    fsyncDir(dirname(this.path));
    return Promise.resolve();
  }
}
