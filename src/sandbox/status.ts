/**
 * Whether this machine can run commands inside longrun's sandbox. A stable export for
 * `longrun doctor` and `longrun hook install`:
 *
 *   sandboxStatus(env?) → { available, mechanism: "bubblewrap", path, code, reason }
 *
 * - `available`: true when bubblewrap (`bwrap`) is on PATH and a probe with the boundary's own
 *   namespaces and seccomp filter (`bwrap --ro-bind / / --unshare-pid --unshare-net … --seccomp 3 true`)
 *   exits 0;
 * - `path`: the bwrap found (null when none);
 * - `code`: `ok`, `not_installed` (no bwrap on PATH) or `cannot_set_up` (bwrap failed: no user
 *   namespaces, a container without the privileges, …);
 * - `reason`: one line for a person when not available, else null.
 *
 * `findBwrap` is the lookup `longrun sandbox` itself uses: PATH in order, absolute directories only,
 * never one inside `exclude` (the lease's root, where a command could have planted a fake bwrap).
 */
import { spawnSync } from "node:child_process";
import { accessSync, closeSync, constants, mkdtempSync, openSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { machine, tmpdir } from "node:os";
import { join } from "node:path";
import { BASE_ARGS } from "./plan.ts";
import { seccompProgram } from "./seccomp.ts";

export type SandboxStatusCode = "ok" | "not_installed" | "cannot_set_up";

export interface SandboxStatus {
  available: boolean;
  mechanism: "bubblewrap";
  path: string | null;
  code: SandboxStatusCode;
  reason: string | null;
}

export const NOT_INSTALLED = "bubblewrap (bwrap) is not installed, so the command was not run; install it (apt-get install bubblewrap)";


/** The first executable `bwrap` on PATH, skipping relative entries and any directory under one of `exclude`. */
export function findBwrap(pathVar: string | undefined, exclude: readonly string[] = []): string | null {
  for (const dir of (pathVar ?? "").split(":")) {
    if (!dir.startsWith("/")) continue;
    let real = dir;
    try {
      real = realpathSync(dir); // a link into the root is the root
    } catch {
      continue;
    }
    if (exclude.some((x) => [dir, real].some((d) => d === x || d.startsWith(x.endsWith("/") ? x : `${x}/`)))) continue;
    const p = `${dir.replace(/\/+$/, "")}/bwrap`;
    try {
      if (!statSync(p).isFile()) continue;
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

/** Whether `longrun sandbox` can run here. Synchronous: one short probe (at most 10 s). */
export function sandboxStatus(env: Record<string, string | undefined> = process.env): SandboxStatus {
  const path = findBwrap(env.PATH);
  if (path === null) return { available: false, mechanism: "bubblewrap", path: null, code: "not_installed", reason: "bubblewrap (bwrap) is not on PATH; install it (apt-get install bubblewrap)" };
  const program = seccompProgram(machine());
  if (program === null) return { available: false, mechanism: "bubblewrap", path, code: "cannot_set_up", reason: `the sandbox has no seccomp filter for this machine (${machine()})` };
  const dir = mkdtempSync(join(tmpdir(), "longrun-sandbox-probe-"));
  let probe;
  try {
    writeFileSync(join(dir, "seccomp.bpf"), program);
    const fd = openSync(join(dir, "seccomp.bpf"), "r");
    try {
      probe = spawnSync(path, [...BASE_ARGS, "--seccomp", "3", "--", "true"], { stdio: ["ignore", "ignore", "pipe", fd], timeout: 10_000, encoding: "utf8" });
    } finally {
      closeSync(fd);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (probe.status === 0) return { available: true, mechanism: "bubblewrap", path, code: "ok", reason: null };
  const said = (probe.stderr ?? "").trim().split("\n").at(-1) || (probe.error ? String(probe.error.message) : `exit status ${probe.status ?? probe.signal}`);
  return { available: false, mechanism: "bubblewrap", path, code: "cannot_set_up", reason: `bubblewrap cannot set up the boundary here: ${said}` };
}
