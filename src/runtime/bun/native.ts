/**
 * Loads libSQL's native module in the compiled executable (scripts/compile.ts routes libsql's
 * `require` of its platform package here; the sources under Bun or Deno load it from node_modules
 * and never come here).
 *
 * A native module can only be loaded from a file the system can map executable. Left to itself,
 * Bun writes an embedded `.node` into $TMPDIR (`.bun-*.node`), which fails when /tmp is read-only
 * or mounted noexec (as in hardened containers) and leaves the file there. Instead it is written
 * once, by content, where it can stay and be reused, and loaded from there. In order:
 *
 *   1. $LONGRUN_NATIVE_DIR/<version>-<hash>/libsql.node   when set: only there, or a clear error
 *   2. the user's cache: $XDG_CACHE_HOME (else ~/.cache), ~/Library/Caches on macOS,
 *      %LOCALAPPDATA% on Windows, then longrun/<version>-<hash>/libsql.node
 *   3. Linux: an anonymous memory file (memfd), nothing written to any file system
 *   4. $TMPDIR/longrun-<uid>/<version>-<hash>/libsql.node (kept for the next start)
 *
 * A place that fails (cannot be created or written, or the file written there cannot be mapped:
 * noexec) is cleaned of what this start wrote and the next is tried. When none works, start-up
 * fails with an error naming LONGRUN_NATIVE_DIR. Every thread of a process (the memory Workers
 * load it too) ends up with the same file, so the process has one copy of SQLite.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, renameSync, rmdirSync, rmSync, statSync, writeSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { VERSION } from "../../version.ts";

export const NATIVE_DIR_ENV = "LONGRUN_NATIVE_DIR";

export interface EmbeddedNative {
  /** The module inside the executable (`/$bunfs/root/…` or `B:/~BUN/root/…`). */
  embedded: string;
  /** Its SHA-256 (hex) and size, computed when the executable was built. */
  sha256: string;
  size: number;
}

type Exports = Record<string, unknown>;

const FILE = "libsql.node";

function dlopen(path: string): Exports {
  const module = { exports: {} as Exports };
  process.dlopen(module, path);
  return module.exports;
}

/** One line on why a place failed, with what it most likely means. */
function short(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const text = String(err?.message ?? e).split("\n")[0]!;
  const hint = /failed to map segment|operation not permitted/i.test(text)
    ? " (its file system does not allow executing: mounted noexec?)"
    : err?.code === "EROFS"
      ? " (read-only file system)"
      : err?.code === "EACCES" || err?.code === "EPERM"
        ? " (no permission)"
        : "";
  return text + hint;
}

/** The per-user cache directories to try, most preferred first. */
export function userCacheBases(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string[] {
  const home = env.HOME || env.USERPROFILE || safeHomedir();
  const out: string[] = [];
  if (platform === "win32") {
    if (env.LOCALAPPDATA && isAbsolute(env.LOCALAPPDATA)) out.push(env.LOCALAPPDATA);
  } else if (platform === "darwin") {
    if (home && isAbsolute(home)) out.push(join(home, "Library", "Caches"));
  } else {
    // the XDG base directory spec: a relative $XDG_CACHE_HOME is ignored
    if (env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)) out.push(env.XDG_CACHE_HOME);
    else if (home && isAbsolute(home)) out.push(join(home, ".cache"));
  }
  return out.map((b) => join(b, "longrun"));
}

function safeHomedir(): string {
  try {
    return homedir();
  } catch {
    return "";
  }
}

function uid(): number | null {
  return typeof process.getuid === "function" ? process.getuid() : null;
}

/** Only its owner (us, or root) can change it. */
function private_(st: { uid: number; mode: number }): boolean {
  const me = uid();
  return me === null || ((st.uid === me || st.uid === 0) && (st.mode & 0o022) === 0);
}

/** A file already there is used if it is whole (its size) and only its owner (us, or root) can change it. */
function usable(path: string, size: number): boolean {
  try {
    const st = statSync(path);
    return st.isFile() && st.size === size && private_(st);
  } catch {
    return false;
  }
}

/** Throws unless each of `dirs` is a directory only its owner (us, or root) can change. */
function guard(dirs: string[]): void {
  for (const d of dirs) {
    const st = statSync(d);
    if (!st.isDirectory() || !private_(st)) throw new Error(`${d} is not a directory only its owner can change (owner uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)})`);
  }
}

/**
 * Loads the module from `dir`, writing it there first (the directories made 0700) unless it is
 * there already. `guarded`: directories that must be private to us (a shared /tmp).
 */
function fromDir(dir: string, native: EmbeddedNative, bytes: () => Uint8Array, guarded: string[] = [dir]): Exports {
  const file = join(dir, FILE);
  let created: string | undefined;
  let wrote = false;
  const tmp = join(dir, `.${FILE}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`);
  try {
    created = mkdirSync(dir, { recursive: true, mode: 0o700 });
    guard(guarded);
    if (usable(file, native.size)) return dlopen(file);
    const fd = openSync(tmp, "wx", 0o700);
    try {
      const buf = bytes();
      for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      renameSync(tmp, file);
      wrote = true;
    } catch (e) {
      // another process put it there first (Windows refuses to replace a loaded file)
      if (!usable(file, native.size)) throw e;
      rmSync(tmp, { force: true });
    }
    return dlopen(file);
  } catch (e) {
    // leave nothing behind in a place that does not work
    rmSync(tmp, { force: true });
    if (wrote) rmSync(file, { force: true });
    if (created !== undefined) {
      for (let d = dir; d.length >= created.length; d = dirname(d)) {
        try {
          rmdirSync(d);
        } catch {
          break;
        }
      }
    }
    throw e;
  }
}

/**
 * Linux: the module in an anonymous memory file, loaded through /proc/self/fd. Another thread of
 * this process that already made one is reused (found by its name), so SQLite is loaded once.
 */
function fromMemfd(native: EmbeddedNative, bytes: () => Uint8Array): Exports {
  const name = `longrun-libsql-${VERSION}-${native.sha256.slice(0, 16)}`;
  for (const entry of readdirSync("/proc/self/fd")) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${entry}`);
    } catch {
      continue;
    }
    if (target === `/memfd:${name} (deleted)`) return dlopen(`/proc/self/fd/${entry}`);
  }
  const ffi = require("bun:ffi") as typeof import("bun:ffi");
  let libc: { symbols: { memfd_create: (name: Uint8Array, flags: number) => number } } | undefined;
  let lastError: unknown;
  for (const lib of ["libc.so.6", "libc.so"]) {
    try {
      libc = ffi.dlopen(lib, { memfd_create: { args: [ffi.FFIType.ptr, ffi.FFIType.u32], returns: ffi.FFIType.i32 } }) as never;
      break;
    } catch (e) {
      lastError = e;
    }
  }
  if (!libc) throw lastError;
  const cname = new TextEncoder().encode(name + "\0");
  // MFD_CLOEXEC | MFD_EXEC (kernels with vm.memfd_noexec), then MFD_CLOEXEC alone (older kernels)
  let fd = libc.symbols.memfd_create(cname, 0x1 | 0x10);
  if (fd < 0) fd = libc.symbols.memfd_create(cname, 0x1);
  if (fd < 0) throw new Error("memfd_create failed");
  try {
    const buf = bytes();
    for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off);
    return dlopen(`/proc/self/fd/${fd}`);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** The shared library the module needs and the system lacks, when that is why loading failed. */
export function missingLibrary(e: unknown): string | null {
  const m = /(?:^|: )([^\s:/]+\.so(?:\.[\w.]+)?): cannot open shared object file/.exec(String((e as Error)?.message ?? e));
  return m ? m[1]! : null;
}

/** The error start-up fails with when no place works. */
export class NativeModuleError extends Error {
  constructor(tried: string[], explicit: boolean, missing: string | null = null) {
    const lines = missing
      ? [
          `cannot load libSQL's native module: it needs the shared library ${missing}, which this system does not have.`,
          `Install it (Debian/Ubuntu: libgcc-s1 for libgcc_s.so.1, libstdc++6; Alpine: libgcc, libstdc++; a distroless image: the cc variant).`,
        ]
      : [
      explicit
        ? `cannot load libSQL's native module from ${NATIVE_DIR_ENV}:`
        : "cannot load libSQL's native module: it must be written once to a directory that is writable and not on a noexec file system, and none of these was:",
      ...tried.map((t) => `  ${t}`),
      `Set ${NATIVE_DIR_ENV} to an absolute path of such a directory (it is created if missing; a copy`,
      `written there by this version beforehand is used without writing), e.g. ${NATIVE_DIR_ENV}=$HOME/.cache/longrun`,
        ];
    super(lines.join("\n"));
    this.name = "NativeModuleError";
    // src/main.ts prints the stack of a start-up failure: this message is all there is to say
    this.stack = this.message;
  }
}

/** libSQL's native module's exports; throws NativeModuleError when it cannot be loaded anywhere. */
export function loadEmbeddedNative(native: EmbeddedNative): Exports {
  const key = `${VERSION}-${native.sha256.slice(0, 16)}`;
  let cached: Uint8Array | undefined;
  const bytes = () => (cached ??= readFileSync(native.embedded));
  const tried: string[] = [];
  const explicit = process.env[NATIVE_DIR_ENV];
  if (explicit) {
    if (!isAbsolute(explicit)) throw new NativeModuleError([`${NATIVE_DIR_ENV}=${explicit}: not an absolute path`], true);
    const dir = join(explicit, key);
    try {
      return fromDir(dir, native, bytes);
    } catch (e) {
      throw new NativeModuleError([`${dir}: ${short(e)}`], true, missingLibrary(e));
    }
  }
  for (const base of userCacheBases()) {
    const dir = join(base, key);
    try {
      return fromDir(dir, native, bytes);
    } catch (e) {
      if (missingLibrary(e)) throw new NativeModuleError([], false, missingLibrary(e));
      tried.push(`${dir}: ${short(e)}`);
    }
  }
  if (process.platform === "linux") {
    try {
      return fromMemfd(native, bytes);
    } catch (e) {
      if (missingLibrary(e)) throw new NativeModuleError([], false, missingLibrary(e));
      tried.push(`an anonymous memory file (memfd, through /proc/self/fd): ${short(e)}`);
    }
  }
  const me = uid();
  const dir = join(tmpdir(), me === null ? "longrun" : `longrun-${me}`, key);
  try {
    return fromDir(dir, native, bytes, [dirname(dir), dir]);
  } catch (e) {
    if (missingLibrary(e)) throw new NativeModuleError([], false, missingLibrary(e));
    tried.push(`${dir}: ${short(e)}`);
  }
  throw new NativeModuleError(tried, false);
}
