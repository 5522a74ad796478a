/**
 * What Claude Code's Bash sandbox needs on this machine (bubblewrap that works and socat on
 * Linux; Seatbelt on macOS), and whether the executable the hooks run lies in a place that lasts,
 * with the lasting place install copies it to when it does not. Install and `longrun doctor` both ask.
 */
import { accessSync, chmodSync, closeSync, constants, copyFileSync, fsyncSync, mkdirSync, openSync, readSync, realpathSync, renameSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { sandboxStatus } from "../sandbox/status.ts";
import { VERSION } from "../version.ts";

/** The executable `program` on `path` (the first one, as a shell finds it), or null. */
export function onPath(program: string, path = process.env.PATH ?? ""): string | null {
  for (const d of path.split(":")) {
    if (!d.startsWith("/")) continue;
    const p = join(d, program);
    try {
      if (statSync(p).isFile()) {
        accessSync(p, constants.X_OK);
        return p;
      }
    } catch {
      // not here
    }
  }
  return null;
}

/** What Claude Code's sandbox needs on this machine, as found. */
export interface OsSandboxFacts {
  platform: string;
  /** bubblewrap on PATH (Linux), or null. */
  bwrap: string | null;
  /** A probe with the sandbox's namespaces ran and exited 0 (a kernel or container may forbid them). */
  bwrapWorks: boolean;
  /** Why it did not work, in a few words. */
  bwrapError: string | null;
  socat: string | null;
}

/**
 * Looks for the sandbox's prerequisites: on Linux a bubblewrap that can set up its namespaces
 * (`sandboxStatus()`, the probe `longrun sandbox` uses, src/sandbox/status.ts) and `socat` on PATH;
 * macOS has Seatbelt built in.
 */
export function osSandboxFacts(env: Record<string, string | undefined> = process.env, platform: string = process.platform): OsSandboxFacts {
  const facts: OsSandboxFacts = { platform, bwrap: null, bwrapWorks: false, bwrapError: null, socat: null };
  if (platform !== "linux") return facts;
  const status = sandboxStatus(env);
  facts.bwrap = status.path;
  facts.bwrapWorks = status.available;
  facts.bwrapError = status.available ? null : status.reason;
  facts.socat = onPath("socat", env.PATH);
  return facts;
}

/** What the sandbox lacks on this machine, one phrase each; empty when Claude Code can sandbox Bash. */
export function osSandboxMissing(f: OsSandboxFacts): string[] {
  if (f.platform === "darwin") return [];
  if (f.platform !== "linux") return [`Claude Code has no command sandbox on ${f.platform}`];
  const missing: string[] = [];
  if (!f.bwrap) missing.push("bwrap (bubblewrap) is not on PATH");
  else if (!f.bwrapWorks) missing.push(`${f.bwrap} cannot create its sandbox (${f.bwrapError})`);
  if (!f.socat) missing.push("socat is not on PATH");
  return missing;
}

/** The packages to install where they are missing. */
export const INSTALL_HINT = "apt-get install bubblewrap socat";

/**
 * Why the executable the hooks will run is in a place that may not last (a temporary, virtual
 * environment or build directory), or null. A hook whose program is gone fails, and Claude Code
 * then blocks every tool call.
 */
export function unstableExeReason(exe: string, tmp = tmpdir()): string | null {
  let tmpReal = tmp;
  try {
    tmpReal = realpathSync(tmp);
  } catch {
    // as given
  }
  for (const t of new Set([tmp, tmpReal, "/tmp", "/var/tmp", "/dev/shm"])) if (exe.startsWith(t.replace(/\/+$/, "") + "/")) return "a temporary directory";
  const segs = exe.split("/");
  if (segs.some((s) => s === "site-packages" || s === "dist-packages" || s === ".venv" || s === "venv" || s === "virtualenvs")) return "a Python virtual environment";
  if (segs.some((s) => s === "node_modules")) return "node_modules";
  if (segs.slice(0, -1).some((s) => s === "dist" || s === "build" || s === "target" || s === "out" || s === "_build")) return "a build directory";
  return null;
}

/**
 * The lasting per-user place for longrun's executable when install runs from a place that does not
 * last: `$XDG_DATA_HOME/longrun/bin/<version>/longrun` (an absolute XDG_DATA_HOME), else
 * `~/.local/share/longrun/bin/<version>/longrun`.
 */
export function stableExePath(env: Record<string, string | undefined> = process.env, home = env.HOME || homedir()): string {
  const data = env.XDG_DATA_HOME && env.XDG_DATA_HOME.startsWith("/") ? env.XDG_DATA_HOME : join(home, ".local", "share");
  return join(data, "longrun", "bin", VERSION, "longrun");
}

/** Whether two files hold the same bytes (read in 1 MiB pieces). */
function sameBytes(a: string, b: string): boolean {
  let fa = -1;
  let fb = -1;
  try {
    if (statSync(a).size !== statSync(b).size) return false;
    fa = openSync(a, "r");
    fb = openSync(b, "r");
    const ba = Buffer.alloc(1 << 20);
    const bb = Buffer.alloc(1 << 20);
    for (;;) {
      const na = readSync(fa, ba, 0, ba.length, null);
      const nb = readSync(fb, bb, 0, bb.length, null);
      if (na !== nb || !ba.subarray(0, na).equals(bb.subarray(0, nb))) return false;
      if (na === 0) return true;
    }
  } catch {
    return false;
  } finally {
    if (fa >= 0) closeSync(fa);
    if (fb >= 0) closeSync(fb);
  }
}

/**
 * Copies `exe` to `dest` (its directory made as needed), written atomically (a temporary file in
 * the same directory, synced, mode 0755, renamed over): a hook starting meanwhile runs the old copy
 * or the new one, never half of one. A copy that already holds the same bytes is kept as it is.
 * Returns whether it copied; throws the file system's error.
 */
export function placeExe(exe: string, dest: string): boolean {
  if (sameBytes(exe, dest)) {
    chmodSync(dest, 0o755);
    return false;
  }
  mkdirSync(dirname(dest), { recursive: true, mode: 0o755 });
  const tmp = `${dest}.tmp-${process.pid}`;
  try {
    copyFileSync(exe, tmp);
    chmodSync(tmp, 0o755);
    const fd = openSync(tmp, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, dest);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  return true;
}
