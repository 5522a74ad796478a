/**
 * The boundary as data: `sandboxPlan()` turns a mode, a root and what exists on disk (asked
 * through `kind`, never read here) into bubblewrap's argument list, or a refusal. run.ts does the
 * I/O around it.
 *
 * Both modes: the whole file system read-only, a fresh /dev, /proc of a new pid namespace, no
 * network, no System V IPC, no capabilities, a new session; a fresh scratch directory is the only
 * writable place (and TMPDIR). Hidden (an unreadable empty directory or file in their place):
 * longrun's `.longrun/`, `memory.db` and its -wal, -shm, -journal, `raw_data/` of the root and of
 * the roots around it (ancestors, below it; one beside it is hidden whole), server-store state
 * directories, Claude Code's `~/.claude/.credentials.json`. Lease mode adds the root, writable,
 * with the gate's write-protected names inside it read-only (`.claude/`, `.git/config`, hooks,
 * info, commondir, config.worktree, shell startup files, `.gitconfig`, longrun's executable), and
 * every directory between the root and one of those bound onto itself, so that it cannot be
 * renamed away.
 *
 * What does not exist yet: in lease mode, run.ts creates a placeholder where the command could
 * otherwise plant one, the way longrun would have (`.longrun/`, `raw_data/`, `memory.db` and its
 * -wal, -shm, -journal, `.claude/`, `.git/hooks`, `.git/info`); they stay behind, empty, and
 * SQLite takes the empty -wal, -shm and -journal as its own (it removes them on its next close).
 * In read mode only a database's -wal, -shm and -journal get one (they appear while it is in use).
 * `.git/commondir` cannot have one (git refuses an empty one): run.ts removes one the command made.
 * Absent shell startup files, `.gitconfig` and a missing `.git/` are left for the command to make.
 */
import { GIT_ENTRIES, HOME_HIDDEN, LONGRUN_RULES, type MaskEntry, ROOT_ENTRIES } from "./layout.ts";
import { ROOT_PATHS } from "../root/layout.ts";

export type SandboxMode = "read" | "lease";
export const MODES: readonly SandboxMode[] = ["read", "lease"];

/** What is at a path, without following a final symlink (`lstat`); null: nothing. */
export type Kind = "file" | "dir" | "link" | "other" | null;

export interface PlanInput {
  mode: string;
  /** The lease's root: absolute, a real path (no symlinks), an existing directory. */
  root: string;
  home: string;
  /** Where the command starts (`--chdir`). */
  cwd: string;
  /** The fresh scratch directory: the only writable place in read mode, and TMPDIR. */
  scratch: string;
  /**
   * An empty regular file nobody may read (mode 0), outside the scratch directory: what a hidden
   * file is replaced with (not /dev/null: `git add -A` stops at a device file).
   */
  hiddenFile: string;
  /**
   * In lease mode, the root's `.git/info/exclude` with longrun's files added (src/hooks/install.ts
   * writes the same lines into .gitignore), so that `git add -A` inside passes over the hidden
   * files; null when the root has none.
   */
  gitExclude: string | null;
  /** Other longrun roots found (real paths): their state is hidden; those inside the root are protected like it. */
  otherRoots: readonly string[];
  /** Git directories inside the root other than `root/.git` (nested repositories). */
  gitDirs: readonly string[];
  /** Directories to hide whole: server-store state directories (`~/.local/state/.longrun`, LONGRUN_STATE_DIR). */
  stateDirs: readonly string[];
  /** Real paths of longrun's own executable (the hooks run it outside the boundary): read-only where the root would make it writable. */
  exePaths: readonly string[];
  kind: (path: string) => Kind;
}

export type RefusalCode = "bad_mode" | "bad_root" | "protected_link";

export interface Refusal {
  ok: false;
  code: RefusalCode;
  message: string;
}

export interface Plan {
  ok: true;
  /** bubblewrap's arguments up to (not including) `--` and the command. */
  args: string[];
  /** Paths the command may create but must not leave behind (run.ts removes them after it). */
  removeAfter: string[];
  /**
   * Absent paths the mounts above cover, for run.ts to create first (bubblewrap would create them
   * itself, but a file read-only to its owner: a WAL SQLite cannot write). `hidden` dirs are private.
   */
  placeholders: { path: string; kind: "dir" | "file"; hidden: boolean }[];
  /** Every path a mask covers, with what was there: one that changes before bubblewrap mounts it fails the setup (run.ts plans again). */
  /** `hide`: made unreadable; `readonly`: made unwritable; `pin`: a directory made a mount point, so it cannot be renamed away. */
  targets: { path: string; kind: Kind; access: "hide" | "readonly" | "pin" }[];
}

/** Variables the command does not get: the host's bearer token and the libSQL server's token. */
export const SECRET_ENV = ["LONGRUN_HOST_TOKEN", "LONGRUN_STORE_TOKEN"];

/** The namespaces and capabilities every sandboxed command gets (status.ts probes with the same). */
export const BASE_ARGS = ["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];

/** Whether `path` is `dir` or below it. */
export function isUnder(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

function join(dir: string, rel: string): string {
  return `${dir.replace(/\/+$/, "")}/${rel}`;
}


/**
 * bubblewrap's arguments for one command, or why it must not run.
 *
 * @example
 * const plan = sandboxPlan({ mode: "lease", root: "/p", home: "/home/u", cwd: "/p", scratch: "/tmp/s/tmp",
 *   hiddenFile: "/tmp/s/hidden", gitExclude: null, otherRoots: [], gitDirs: [], stateDirs: [], exePaths: [],
 *   kind: (p) => (p === "/p" || p === "/p/.longrun" ? "dir" : null) });
 * if (plan.ok) spawn("bwrap", [...plan.args, "--", "bash", "-c", cmd]);
 */
export function sandboxPlan(input: PlanInput): Plan | Refusal {
  const { root, kind } = input;
  if (!(MODES as readonly string[]).includes(input.mode)) {
    return refuse("bad_mode", `--mode must be read or lease, got ${JSON.stringify(input.mode)}`);
  }
  const lease = input.mode === "lease";
  if (!root.startsWith("/") || kind(root) !== "dir") return refuse("bad_root", `the root ${JSON.stringify(root)} is not an absolute existing directory`);
  if (lease && root.replace(/\/+$/, "") === "") return refuse("bad_root", "the root / would make the whole file system writable");

  const args: string[] = []; // the masks, after the binds below
  const removeAfter: string[] = [];
  const placeholders: Plan["placeholders"] = [];
  const writable = (p: string) => lease && isUnder(p, root);
  const targets: Plan["targets"] = [];
  /**
   * Directories between the root and a protected path, bound onto themselves so that they are
   * mount points: a mount point cannot be renamed or removed (EBUSY), so `mv .git .git-old && mkdir
   * .git` cannot move the protected `.git/config` aside and put a new one in its place.
   */
  const pins = new Set<string>();
  const pin = (p: string) => {
    if (!writable(p)) return;
    for (let d = p.slice(0, p.lastIndexOf("/")); d.length > root.length && isUnder(d, root); d = d.slice(0, d.lastIndexOf("/"))) {
      if (kind(d) === "dir") pins.add(d);
    }
  };
  const target = (p: string, k: Kind, access: Plan["targets"][number]["access"]) => (pin(p), targets.push({ path: p, kind: k, access }), p);
  const hideDir = (p: string, k: Kind = "dir") => ["--perms", "0000", "--tmpfs", target(p, k, "hide"), "--remount-ro", p];
  const emptyDir = (p: string) => ["--perms", "0555", "--tmpfs", target(p, "dir", "readonly"), "--remount-ro", p];
  const nullFile = (p: string, k: Kind = "file") => ["--ro-bind", input.hiddenFile, target(p, k, "hide")];
  const readOnly = (p: string, k: Kind) => ["--ro-bind", p, target(p, k, "readonly")];
  let problem: Refusal | null = null;

  /**
   * One entry at `dir`: what exists is hidden or bound read-only. An absent one gets a placeholder
   * (`fill`): `all` where the command could create it (lease mode, inside the root) and for a
   * database's -wal, -shm and -journal, which come and go while the database is used; `none`: never.
   */
  const apply = (dir: string, e: MaskEntry, fill: "all" | "none") => {
    const p = join(dir, e.rel);
    const k = kind(p);
    if (e.access === "readonly" && !writable(p)) return; // read-only already
    if (k === "link") {
      if (writable(p) || e.access === "hide") problem ??= refuse("protected_link", `${p} is a symbolic link, which the sandbox cannot protect; replace it with what it points to`);
      return;
    }
    if (k === null) {
      const sidecar = e.rel.startsWith(`${ROOT_PATHS.memoryDb}-`) && kind(join(dir, ROOT_PATHS.memoryDb)) === "file";
      if (fill === "none" || !(writable(p) || sidecar)) return;
      if (e.absent === "remove_after") removeAfter.push(p);
      if (e.absent !== "dir" && e.absent !== "file") return;
      placeholders.push({ path: p, kind: e.absent, hidden: e.access === "hide" });
      args.push(...(e.absent === "file" ? nullFile(p) : e.access === "hide" ? hideDir(p) : emptyDir(p)));
      return;
    }
    if (e.access === "hide") args.push(...(k === "dir" ? hideDir(p) : nullFile(p, k)));
    else args.push(...readOnly(p, k));
  };

  const rootEntries = (dir: string, all: boolean, fill: "all" | "none") => {
    for (const e of ROOT_ENTRIES) if (all || LONGRUN_RULES.has(e.rule)) apply(dir, e, fill);
  };
  const gitEntries = (gitDir: string, fill: "all" | "none") => {
    if (!writable(gitDir) || kind(gitDir) !== "dir") return;
    for (const e of GIT_ENTRIES) apply(gitDir, e, fill);
  };

  rootEntries(root, true, "all");
  const rootGit = join(root, ".git");
  const gitKind = kind(rootGit);
  if (lease && gitKind === "link") problem ??= refuse("protected_link", `${rootGit} is a symbolic link, which the sandbox cannot protect; replace it with what it points to`);
  else if (lease && gitKind === "file") args.push(...readOnly(rootGit, "file")); // a worktree's or submodule's pointer to its git directory
  gitEntries(rootGit, "all");
  const exclude = join(rootGit, "info/exclude");
  if (lease && input.gitExclude !== null && kind(exclude) === "file") args.push("--ro-bind", input.gitExclude, target(exclude, "file", "readonly"));
  const home = input.home.replace(/\/+$/, "");
  for (const other of input.otherRoots) {
    if (other === root) continue;
    // writable like the root in lease mode: protected like it, but nothing is created in another
    // root (its SQLite removes a -wal or -shm placeholder on its last close, and the mount fails)
    if (isUnder(other, root)) rootEntries(other, true, "none");
    else if (isUnder(root, other) || (home !== "" && isUnder(home, other)) || isUnder(input.cwd, other) || isUnder(input.scratch, other)) rootEntries(other, false, "none");
    else args.push(...hideDir(other)); // another project's root beside this one: hidden whole, whatever comes and goes in it
  }
  for (const g of input.gitDirs) if (g !== rootGit) gitEntries(g, "none");
  if (home !== "" && home !== root && writable(home)) rootEntries(home, true, "none");
  for (const rel of HOME_HIDDEN) if (home !== "") apply(home, { rel, access: "hide", absent: "skip", rule: "claude_login" }, "none");
  for (const d of input.stateDirs) {
    const k = kind(d);
    if (k === "dir") args.push(...hideDir(d));
    else if (k === "link") problem ??= refuse("protected_link", `${d} is a symbolic link, which the sandbox cannot protect; pass its real path`);
  }
  for (const p of input.exePaths) if (writable(p) && kind(p) === "file") args.push(...readOnly(p, "file")); // the program the hooks run
  for (const p of removeAfter) pin(p);
  if (problem) return problem;

  const pinned = [...pins].sort((x, y) => x.split("/").length - y.split("/").length).flatMap((d) => ["--bind", d, target(d, "dir", "pin")]);
  // the root first, then the pins (outermost first), then the scratch directory (a TMPDIR inside
  // the root stays a fresh directory), then the masks inside them
  args.unshift(...BASE_ARGS, ...(lease ? ["--bind", root, root] : []), ...pinned, "--bind", input.scratch, input.scratch);
  for (const v of ["TMPDIR", "TMP", "TEMP"]) args.push("--setenv", v, input.scratch);
  args.push("--setenv", "LONGRUN_SANDBOX", input.mode);
  for (const v of SECRET_ENV) args.push("--unsetenv", v);
  args.push("--chdir", input.cwd);
  return { ok: true, args, removeAfter, placeholders, targets };
}

function refuse(code: RefusalCode, message: string): Refusal {
  return { ok: false, code, message };
}
