/**
 * Atomic file replacement done right: write a temp file in the same directory, fsync it, rename it
 * over the target, fsync the directory, and only then report success. A crash at any point leaves
 * either the old file or the new one, never a torn one. Temp files carry the writer's pid so a
 * later start can remove only those whose writer is gone.
 */
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { CrashPoint } from "../core/ports.ts";

const TMP_RE = /^\.(.+)\.(\d+)\.[0-9a-f]+\.tmp$/;

export interface AtomicWriteOptions {
  mode?: number;
  /** Crash points are named `<label>.after_temp_write`, `.after_temp_fsync`, `.after_rename`, `.after_dir_fsync`. */
  label?: string;
  crash?: CrashPoint;
}

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const dir = dirname(path);
  const rand = Math.floor(Math.random() * 0xffffffff).toString(16);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${rand}.tmp`);
  const crash = options.crash ?? (() => {});
  const label = options.label ?? "file";
  const fd = openSync(tmp, "wx", options.mode ?? 0o644);
  try {
    try {
      const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      crash(`${label}.after_temp_write`);
      fsyncSync(fd);
      crash(`${label}.after_temp_fsync`);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
    throw e;
  }
  crash(`${label}.after_rename`);
  fsyncDir(dir);
  crash(`${label}.after_dir_fsync`);
}

function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
}

/** Removes temp files in `dir` left by writers that are no longer running. Returns what it removed. */
export function removeOrphanTemps(dir: string): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const m = TMP_RE.exec(name);
    if (!m || processAlive(Number(m[2]))) continue;
    try {
      unlinkSync(join(dir, name));
      removed.push(name);
    } catch {
      // another process removed it first
    }
  }
  return removed;
}
