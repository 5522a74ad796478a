/**
 * What Claude Code's Bash sandbox needs on this machine (bubblewrap that works and socat on
 * Linux; Seatbelt on macOS), and whether the executable the hooks run lies in a place that lasts.
 * Install and `longrun doctor` both ask.
 */
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sandboxStatus } from "../sandbox/status.ts";

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
