/**
 * The boundary inside Claude Code's own sandbox. There, bubblewrap cannot start (its seccomp filter
 * refuses nested user namespaces), but Claude Code's mounts already hide and freeze longrun's
 * files, network is off, and each command has a pid namespace of its own that ends with it. What
 * is left to longrun is what depends on the lease, which Landlock gives without namespaces:
 *
 * - read mode: nothing written anywhere but a scratch directory;
 * - lease mode: writes in the root and the scratch directory only;
 * - both: no TCP, no signal or abstract socket outside; the files bubblewrap would have hidden
 *   that the outer sandbox does not (another root beside this one, a state directory), unreadable.
 *
 * It never takes the outer sandbox on trust: every path the plan would have hidden or frozen is
 * checked to be so already (a different file system than its directory — a mount over it — or
 * not writable), and anything not held that Landlock cannot hold either refuses the command.
 */
import { accessSync, constants as fsConstants, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { constants } from "node:os";
import { dirname } from "node:path";
import { becomeSubreaper, landlockAbi, restrictSelf } from "./landlock.ts";
import { isUnder, type Plan, SECRET_ENV } from "./plan.ts";

/** The run's error, kept apart from run.ts's class to avoid an import circle; run.ts rethrows it as a SandboxError. */
export class LandlockRefusal extends Error {}

const DEVICES = ["/dev/null", "/dev/tty", "/dev/zero", "/dev/full"];

/** Whether an outer sandbox already masks or freezes `path`: another file system mounted there, or no write. */
function held(path: string, access: "hide" | "readonly"): boolean {
  let st;
  try {
    st = statSync(path);
  } catch {
    // absent: held when it cannot be created (its directory is not writable)
    return !writable(dirname(path));
  }
  if (st.isCharacterDevice()) return true; // /dev/null bound over it: nothing to read, writes go nowhere
  try {
    if (st.dev !== statSync(dirname(path)).dev) return access === "hide" || !writable(path);
  } catch {
    return false;
  }
  return access === "readonly" && !writable(path);
}

function writable(path: string): boolean {
  try {
    accessSync(path, fsConstants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Everything readable except `hidden` (and what lies beneath them): each directory on the way from
 * `/` to a hidden path is split into its entries, each entry not on such a way kept whole.
 */
export function readableAround(hidden: readonly string[], list: (dir: string) => string[], cap = 20_000): string[] | null {
  const hide = new Set(hidden);
  const split = new Set<string>();
  for (const h of hidden) for (let d = dirname(h); ; d = dirname(d)) {
    split.add(d);
    if (d === "/") break;
  }
  const out: string[] = [];
  for (const d of split) {
    for (const name of list(d)) {
      const p = d === "/" ? `/${name}` : `${d}/${name}`;
      if (split.has(p) || hide.has(p)) continue;
      out.push(p);
      if (out.length > cap) return null;
    }
  }
  return out;
}

export interface LandlockRun {
  mode: "read" | "lease";
  root: string;
  plan: Plan;
  /** The run's own directory (the scratch directory is inside it). */
  work: string;
  scratch: string;
  command: string[];
  cwd: string;
  env: Record<string, string | undefined>;
}

/** The live (not zombie) children of `pid`, from every thread's list. */
function liveChildren(pid: number): number[] {
  const out: number[] = [];
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    let text = "";
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8");
    } catch {
      continue;
    }
    for (const c of text.trim().split(/\s+/).filter(Boolean).map(Number)) {
      try {
        const stat = readFileSync(`/proc/${c}/stat`, "utf8");
        if (stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z") out.push(c);
      } catch {
        // gone
      }
    }
  }
  return out;
}

/**
 * SIGKILLs every process below `pid` until none is left alive: orphans come to this process (it
 * is their subreaper), and a process that forks while it is being killed is found on the next
 * round. Bounded, so a fork bomb cannot keep it here for ever. `spare`: children this process had
 * before the command (a shell that exec'd into longrun leaves its own jobs as our children:
 * Claude Code's sandbox starts its network proxies that way), and what they started.
 */
export function killDescendants(pid: number, spare: ReadonlySet<number> = new Set(), rounds = 200): void {
  for (let i = 0; i < rounds; i++) {
    const found: number[] = [];
    const walk = (p: number, depth: number) => {
      for (const c of liveChildren(p)) {
        if (depth === 0 && spare.has(c)) continue;
        found.push(c);
        if (depth < 64) walk(c, depth + 1);
      }
    };
    walk(pid, 0);
    if (found.length === 0) return;
    for (const c of found) {
      try {
        process.kill(c, "SIGKILL");
      } catch {
        // gone
      }
    }
  }
}

/** Whether this process is inside Claude Code's sandbox runtime, where bubblewrap cannot nest. */
export function insideOuterSandbox(env: Record<string, string | undefined>): boolean {
  return env.SANDBOX_RUNTIME === "1";
}

/** Runs the command under Landlock; its exit status (128+N for a signal). Restricts this process for good. */
export async function runUnderLandlock(r: LandlockRun): Promise<number> {
  if (!("Bun" in globalThis)) throw new LandlockRefusal("inside another sandbox longrun narrows with Landlock, which this runtime cannot reach (the compiled longrun can)");
  if ((await landlockAbi()) < 4) throw new LandlockRefusal("inside another sandbox longrun narrows with Landlock (ABI 4 or later, for TCP), which this kernel does not offer");
  const toHide: string[] = [];
  for (const t of r.plan.targets) {
    if (t.access === "pin") continue;
    if (held(t.path, t.access)) continue;
    const insideWritable = r.mode === "lease" && isUnder(t.path, r.root);
    if (t.access === "readonly" && !insideWritable) continue; // Landlock keeps every write out of it
    if (t.access === "hide" && !insideWritable && existsSync(t.path)) {
      toHide.push(t.path);
      continue;
    }
    if (t.access === "hide" && !existsSync(t.path)) continue; // nothing to read
    throw new LandlockRefusal(`${t.path} is not protected by the sandbox around this command and Landlock cannot protect it inside a writable root`);
  }
  let readable: string[] | undefined;
  if (toHide.length) {
    const around = readableAround(toHide, (d) => {
      try {
        return readdirSync(d);
      } catch {
        return [];
      }
    });
    if (around === null) throw new LandlockRefusal("too many files around the paths to hide to list them");
    readable = [...around, r.work, ...(r.mode === "lease" ? [r.root] : [])];
  }
  const done = await restrictSelf({
    writable: r.mode === "lease" ? [r.work, r.root] : [r.work],
    writableFiles: DEVICES.filter((d) => existsSync(d)),
    readable,
    // so that run.ts can remove the (emptied) work directory afterwards: only empty directories go there
    removableDirsIn: [dirname(r.work)],
  });
  if (!done.ok) throw new LandlockRefusal(done.reason);
  if (!(await becomeSubreaper())) throw new LandlockRefusal("could not become the reaper of the command's processes (prctl PR_SET_CHILD_SUBREAPER)");
  const env = Object.fromEntries(Object.entries(r.env).filter(([k]) => !SECRET_ENV.includes(k)));
  Object.assign(env, { TMPDIR: r.scratch, TMP: r.scratch, TEMP: r.scratch, LONGRUN_SANDBOX: r.mode });
  const before = new Set(liveChildren(process.pid));
  // Bun.spawn starts the child from this (restricted) thread, so the child inherits the domain
  const child = Bun.spawn(r.command, { cwd: r.cwd, env: env as Record<string, string>, stdio: ["inherit", "inherit", "inherit"] });
  const forward = (sig: NodeJS.Signals) => child.kill(sig);
  const signals = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const;
  for (const s of signals) process.on(s, forward);
  const code = await child.exited;
  for (const s of signals) process.off(s, forward);
  // nothing the command started outlives it: it could change files between a later check and its use
  killDescendants(process.pid, before);
  if (child.signalCode) return 128 + (constants.signals[child.signalCode as NodeJS.Signals] ?? 0);
  return code;
}
