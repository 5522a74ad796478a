/**
 * Running one command inside the boundary: checks the request, finds bwrap and the places to
 * mask (scan.ts), makes the scratch directory, spawns bubblewrap with the plan's arguments
 * (node:child_process, so Bun and Deno alike), forwards signals to the command, and passes its
 * exit status through. Anything that keeps the boundary from being complete is a
 * `SandboxError`, and the command does not run.
 */
import { spawn } from "node:child_process";
import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, rmdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { constants, machine, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type Kind, MODES, type Plan, SECRET_ENV, sandboxPlan } from "./plan.ts";
import { scanAround } from "./scan.ts";
import { seccompProgram } from "./seccomp.ts";
import { findBwrap, NOT_INSTALLED } from "./status.ts";
import { insideOuterSandbox, LandlockRefusal, runUnderLandlock } from "./landlock_run.ts";
import { GITIGNORE_LINES, LAYOUT, ROOT_PATHS } from "../root/layout.ts";
import { stateDirParents } from "../store/server_config.ts";

export type SandboxErrorCode = "bad_mode" | "bad_root" | "not_installed" | "scan_incomplete" | "protected_link" | "setup_failed";

/** The command was not run: the boundary could not be made complete. The CLI prints the message and exits 126. */
export class SandboxError extends Error {
  constructor(readonly code: SandboxErrorCode, message: string) {
    super(message);
    this.name = "SandboxError";
  }
}

export interface SandboxRequest {
  mode: string;
  root: string;
  /** The program and its arguments (`["bash", "-c", "…"]`). */
  command: string[];
  cwd?: string;
  env?: Record<string, string | undefined>;
}

function kindOf(p: string): Kind {
  try {
    const st = lstatSync(p);
    return st.isSymbolicLink() ? "link" : st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
  } catch {
    return null;
  }
}

function realRoot(root: string): string {
  const bad = (why: string) => new SandboxError("bad_root", `the root ${JSON.stringify(root)} ${why}, so the command was not run`);
  if (!root.startsWith("/")) throw bad("is not an absolute path");
  try {
    if (!statSync(root).isDirectory()) throw bad("is not a directory");
    return realpathSync(root);
  } catch (e) {
    if (e instanceof SandboxError) throw e;
    throw bad("does not exist");
  }
}

/** A file of longrun's in the root that has a second hard link somewhere (a mask hides a name, not the file), or null. */
function hardLinked(root: string): string | null {
  const longrun = join(root, ROOT_PATHS.longrun);
  let names: string[] = [];
  try {
    names = readdirSync(longrun).map((n) => join(longrun, n));
  } catch {
    // none yet
  }
  for (const p of [...names, ...LAYOUT.filter((e) => e.protect === "longrun_memory").map((e) => join(root, e.rel))]) {
    try {
      const st = lstatSync(p);
      if (st.isFile() && st.nlink > 1) return p;
    } catch {
      // absent
    }
  }
  return null;
}

/** This executable's real path, unless it is a runtime running the sources (then the sources are not protected here). */
function exePaths(): string[] {
  const exe = process.execPath;
  if (/\/(bun|deno|node)(\.exe)?$/.test(exe)) return [];
  try {
    return [realpathSync(exe)];
  } catch {
    return [];
  }
}

/** Server-store state directories (src/store/server_config.ts's defaults and LONGRUN_STATE_DIR), real paths of those that exist. */
function stateDirs(env: Record<string, string | undefined>, home: string): string[] {
  const out = new Set<string>();
  const add = (p: string | undefined) => {
    if (!p || !p.startsWith("/") || !existsSync(p)) return;
    out.add(realpathSync(p));
  };
  for (const p of stateDirParents(env, home)) add(p);
  const named = env.LONGRUN_STATE_DIR;
  add(named);
  // the `.longrun` directory it must sit in, whole
  for (let d = named && named.startsWith("/") ? named : "/"; d !== "/"; d = dirname(d)) if (d.endsWith("/.longrun")) add(d);
  return [...out];
}

function parseStatus(text: string): { childPid: number | null; exitCode: number | null } {
  let childPid: number | null = null;
  let exitCode: number | null = null;
  for (const line of text.split("\n")) {
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      if (typeof o["child-pid"] === "number") childPid = o["child-pid"];
      if (typeof o["exit-code"] === "number") exitCode = o["exit-code"];
    } catch {
      // a partial line
    }
  }
  return { childPid, exitCode };
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * Removes a directory the command may have made read-only inside: its entries, then the directory
 * itself with rmdir (under Landlock this process may remove only an empty directory where the
 * work directory lies, not a file).
 */
function removeTree(dir: string): void {
  try {
    for (const e of readdirSync(dir)) rmSync(join(dir, e), { recursive: true, force: true });
    rmdirSync(dir);
  } catch {
    const walk = (d: string) => {
      try {
        chmodSync(d, 0o700);
        for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
      } catch {
        // best effort
      }
    };
    walk(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Lines src/hooks/install.ts adds to .gitignore: what the sandbox hides, for git inside to pass over. */
const LONGRUN_IGNORED = ["# longrun sandbox: longrun's files, hidden here", ...GITIGNORE_LINES.map((l) => `/${l}`)];

/** The root's .git/info/exclude with longrun's files added, written to `out`; null when the root has none. */
function excludeWithLongrun(root: string, out: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(root, ".git", "info", "exclude"), "utf8");
  } catch {
    return null;
  }
  writeFileSync(out, `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${LONGRUN_IGNORED.join("\n")}\n`, { mode: 0o444 });
  return out;
}

/** The seccomp filter for this machine (seccomp.ts), written to `out`. */
function writeSeccomp(out: string): string {
  const program = seccompProgram(machine());
  if (program === null) throw new SandboxError("setup_failed", `the sandbox has no seccomp filter for this machine (${machine()}), so the command was not run`);
  writeFileSync(out, program, { mode: 0o444 });
  return out;
}

/** An absent protected path, created the way longrun would have (a private dir, a file SQLite can write), for the mount to cover. */
function makePlaceholder(path: string, kind: "dir" | "file", hidden: boolean): void {
  try {
    if (kind === "dir") mkdirSync(path, { mode: hidden ? 0o700 : 0o755 });
    else {
      let mode = 0o644;
      try {
        mode = statSync(join(dirname(path), "memory.db")).mode & 0o666; // SQLite gives its -wal and -shm the database's mode
      } catch {
        // no database yet
      }
      closeSync(openSync(path, "wx", mode));
    }
  } catch (e) {
    if ((e as { code?: string }).code !== "EEXIST") throw new SandboxError("setup_failed", `could not create ${path} to protect it (${(e as Error).message})`);
  }
}

const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const;

/** Runs `req.command` inside the boundary and resolves to its exit status (128+N for a signal). */
export async function runSandboxed(req: SandboxRequest): Promise<number> {
  const env = req.env ?? process.env;
  if (!(MODES as readonly string[]).includes(req.mode)) throw new SandboxError("bad_mode", `--mode must be read or lease, got ${JSON.stringify(req.mode)}, so the command was not run`);
  const root = realRoot(req.root);
  const outer = insideOuterSandbox(env);
  const bwrap = outer ? null : findBwrap(env.PATH, [root]);
  if (bwrap === null && !outer) throw new SandboxError("not_installed", NOT_INSTALLED);
  const home = (env.HOME ?? "").replace(/\/+$/, "");
  const linked = hardLinked(root);
  if (linked) throw new SandboxError("protected_link", `${linked} has another name (a hard link) the sandbox cannot hide, so the command was not run; remove the other link`);
  const cwd = req.cwd ?? process.cwd();
  const work = realpathSync(mkdtempSync(join(tmpdir(), "longrun-sandbox-")));
  try {
    const scratch = join(work, "tmp");
    mkdirSync(scratch, { mode: 0o700 });
    const hiddenFile = join(work, "hidden");
    closeSync(openSync(hiddenFile, "wx", 0o000));
    const gitExclude = req.mode === "lease" ? excludeWithLongrun(root, join(work, "exclude")) : null;
    const seccomp = writeSeccomp(join(work, "seccomp.bpf"));
    const rootMode = statSync(root).mode;
    try {
      // another root beside this one may come or go between the plan and the mounts: planned again
      for (let attempt = 1; ; attempt++) {
        const scan = scanAround(root, home);
        if (!scan.ok) throw new SandboxError("scan_incomplete", `${scan.message}, so the command was not run; run it with a root that holds fewer files`);
        const plan = sandboxPlan({ mode: req.mode, root, home, cwd, scratch, hiddenFile, gitExclude, otherRoots: scan.roots, gitDirs: scan.gitDirs, stateDirs: stateDirs(env, home), exePaths: exePaths(), kind: kindOf });
        if (!plan.ok) throw new SandboxError(plan.code, `${plan.message}, so the command was not run`);
        if (bwrap === null) return await underLandlock(req.mode as "read" | "lease", root, plan, work, scratch, req.command, cwd, env);
        for (const ph of plan.placeholders) makePlaceholder(ph.path, ph.kind, ph.hidden);
        const moved = () => plan.targets.some((t) => kindOf(t.path) !== t.kind);
        if (moved() && attempt < 3) continue;
        const ran = await runOnce(bwrap, plan, req.command, env, join(work, `status${attempt}`), seccomp);
        if (ran !== null) return ran;
        if (!moved() || attempt >= 3) throw new SandboxError("setup_failed", "bubblewrap could not set up the boundary or start the program (its reason is the line above), so the command was not run");
      }
    } finally {
      keepRootWritable(root, rootMode);
    }
  } finally {
    removeTree(work);
  }
}

/** Inside an outer sandbox (Claude Code's), where bubblewrap cannot nest: Landlock narrows it (landlock_run.ts). */
async function underLandlock(mode: "read" | "lease", root: string, plan: Plan, work: string, scratch: string, command: string[], cwd: string, env: Record<string, string | undefined>): Promise<number> {
  try {
    return await runUnderLandlock({ mode, root, plan, work, scratch, command, cwd, env });
  } catch (e) {
    if (e instanceof LandlockRefusal) throw new SandboxError("setup_failed", `${e.message}, so the command was not run`);
    throw e;
  }
}

/**
 * The root directory itself is longrun's too (SQLite creates memory.db-wal there): a command that
 * took its owner's write or search permission away (`chmod -R a-w .`) gets it put back.
 */
function keepRootWritable(root: string, before: number): void {
  try {
    const now = statSync(root).mode;
    if ((now & 0o300) === (before & 0o300)) return;
    chmodSync(root, (now | (before & 0o300)) & 0o7777);
    process.stderr.write(`longrun sandbox: gave ${root} back its owner's write permission, which the command took (longrun writes there)\n`);
  } catch {
    // gone or not ours: nothing to put back
  }
}

/** One bubblewrap run: the command's exit status, or null when bubblewrap failed before running it. */
async function runOnce(bwrap: string, plan: Plan, command: string[], env: Record<string, string | undefined>, statusPath: string, seccomp: string): Promise<number | null> {
  const statusFd = openSync(statusPath, "w"); // outside the scratch directory: read-only to the command
  const seccompFd = openSync(seccomp, "r");
  const existedBefore = new Set(plan.removeAfter.filter((p) => kindOf(p) !== null));
  let signalled: string | null = null;
  // not even bubblewrap gets the tokens: its init is /proc/1 inside, and /proc/1/environ is readable there
  const passed = Object.fromEntries(Object.entries(env).filter(([k]) => !SECRET_ENV.includes(k)));
  const child = spawn(bwrap, [...plan.args, "--json-status-fd", "3", "--seccomp", "4", "--", ...command], { stdio: ["inherit", "inherit", "inherit", statusFd, seccompFd], env: passed as NodeJS.ProcessEnv });
  closeSync(statusFd);
  closeSync(seccompFd);
  const forward = (sig: NodeJS.Signals) => {
    signalled = sig;
    const { childPid } = parseStatus(readFileSync(statusPath, "utf8"));
    const inside = childPid === null ? [] : childrenOf(childPid); // bwrap's init inside the namespace, then the command
    if (inside.length === 0) {
      child.kill("SIGKILL");
      return;
    }
    for (const pid of inside) {
      try {
        process.kill(-pid, sig); // --new-session: the command leads its own process group
      } catch {
        try {
          process.kill(pid, sig);
        } catch {
          // gone
        }
      }
    }
  };
  for (const s of FORWARDED) process.on(s, forward);
  const closed = await new Promise<{ code: number | null; error: Error | null }>((resolve) => {
    child.on("error", (error) => resolve({ code: null, error }));
    child.on("close", (code) => resolve({ code, error: null }));
  });
  for (const s of FORWARDED) process.off(s, forward);
  for (const p of plan.removeAfter) {
    if (existedBefore.has(p) || kindOf(p) === null) continue;
    removeTree(p);
    process.stderr.write(`longrun sandbox: removed ${p}, which the command created (it would point git at another configuration)\n`);
  }
  if (closed.error) throw new SandboxError("setup_failed", `bubblewrap could not be started (${closed.error.message}), so the command was not run`);
  const { exitCode } = parseStatus(readFileSync(statusPath, "utf8"));
  if (exitCode !== null) return exitCode;
  if (signalled !== null) return 128 + (constants.signals[signalled as NodeJS.Signals] ?? 0);
  return null;
}
