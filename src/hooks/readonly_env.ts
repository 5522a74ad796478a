/**
 * The read-only check's look at the environment, beyond the command's own words: the program
 * found on PATH must be one the agent cannot have replaced, and git's configuration (and hooks,
 * and layout) must make no read command run a program.
 */
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { gitConfigFromFiles, indexMayHaveGitlink } from "./git_config_file.ts";

/** Where programs are looked up, and which ones the user trusts. */
export interface ProgramEnvironment {
  /** Real paths of programs the user trusts even though this user could modify them. */
  trustedPrograms: readonly string[];
  /** PATH to resolve programs on. */
  path: string;
}

/** Directories whose programs count as the system's (when this user could still write there, as root can). */
function isWritable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The program a read-only command runs must be one the agent cannot have replaced: the first
 * match on PATH, neither it nor its directory writable by this user (for root, which can write
 * anywhere, there is no such boundary and this check cannot help).
 */
export function programLocationRefusal(program: string, o: ProgramEnvironment): string | null {
  for (const dir of o.path.split(":")) {
    if (!dir || !dir.startsWith("/")) continue;
    const file = `${dir}/${program}`;
    let st;
    try {
      st = statSync(file);
    } catch {
      continue;
    }
    if (!st.isFile()) continue;
    if (o.trustedPrograms.includes(file)) return null;
    const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
    if (!isRoot && (isWritable(file) || isWritable(dirname(file)))) {
      return `${program} resolves to ${file}, which this user can modify (an agent could have replaced it); trust it in .longrun/hooks.json (trusted_programs) if it is yours`;
    }
    return null;
  }
  return `${program} was not found on PATH`;
}

/** git configuration keys that make status, log, diff or show run a program. */
const GIT_HAZARDS: readonly RegExp[] = [
  /^core\.fsmonitor$/, /^core\.pager$/, /^pager\./, /^diff\.external$/, /^diff\..+\.(command|textconv)$/, /^filter\./,
  /^gpg\.(.+\.)?program$/, /^log\.showsignature$/, /^core\.alternaterefscommand$/, /^color\.pager$/, /^core\.hookspath$/,
];

/** Hooks git runs during status, diff and log (an index refresh writes the index). */
const GIT_READ_HOOKS = ["post-index-change", "fsmonitor-watchman"];

/** The refusal for one configuration entry, as `git config --list -z` shows it ("key\nvalue", or "key" alone), or null. */
function entryRefusal(rawKey: string, rawValue: string | null): string | null {
  const key = rawKey.toLowerCase();
  // as written, not trimmed: git takes "0 " or "\tfalse" for a hook's command, and a bare key for true
  const value = rawValue === null ? null : rawValue.toLowerCase();
  if (!key) return null;
  if (key === "core.fsmonitor" && value !== null && ["", "false", "0", "no", "off"].includes(value)) return null;
  if (key === "log.showsignature" && value !== null && ["false", "0", "no", "off"].includes(value)) return null;
  if (GIT_HAZARDS.some((re) => re.test(key))) return `git's configuration sets ${key}, which makes read commands run a program`;
  // trace2 targets (read from the system and user files) make every git command append to a file or write to a socket
  if (key.startsWith("trace2.")) return `git's configuration sets ${key}, which makes read commands write a trace to a file or a socket`;
  return null;
}

/**
 * Refuses git when its configuration would run a program, or when it cannot be read. The files
 * are read directly where that answers for sure (git_config_file.ts); anything else asks git
 * (`git config --list` and `git rev-parse`), and so does any entry that would refuse, so that
 * git's own reading has the last word on every refusal.
 */
export async function gitConfigRefusal(cwd: string, o: ProgramEnvironment): Promise<string | null> {
  const files = gitConfigFromFiles(cwd, o.path);
  if (files && files.entries.every((e) => entryRefusal(e.key, e.value) === null)) {
    return (files.gitDir ? (readHookRefusal(`${files.gitDir}/hooks`) ?? gitlinkRefusal(`${files.gitDir}/index`)) : null) ?? submoduleRefusal(cwd);
  }
  return gitConfigRefusalByGit(cwd, o);
}

/** The hook git runs during read commands that is in `hooks`, as a refusal, or null. */
function readHookRefusal(hooks: string): string | null {
  for (const h of GIT_READ_HOOKS) {
    if (existsSync(`${hooks}/${h}`)) return `this repository has a ${h} hook, which git runs during read commands`;
  }
  return null;
}

/** Refuses an index that may hold a gitlink: git runs `git status` in that submodule under its own configuration, .gitmodules or not. */
function gitlinkRefusal(indexFile: string): string | null {
  return indexMayHaveGitlink(indexFile) ? "this repository's index may hold a submodule (a gitlink), whose own git configuration is not checked" : null;
}

/** Refuses a repository with submodules (the first directory up from `cwd` with a .git). */
function submoduleRefusal(cwd: string): string | null {
  let dir = cwd;
  for (;;) {
    if (existsSync(`${dir}/.git`)) {
      if (existsSync(`${dir}/.gitmodules`)) return "this repository has submodules, whose own git configuration is not checked";
      break;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return null;
}

/** gitConfigRefusal by asking git: its configuration as it lists it, and where it says the hooks are. */
async function gitConfigRefusalByGit(cwd: string, o: ProgramEnvironment): Promise<string | null> {
  // loaded here, not at the top: most gate decisions never start a process
  const { spawnSync } = await import("node:child_process");
  const r = spawnSync("git", ["config", "--list", "-z", "--includes"], { cwd, encoding: "utf8", timeout: 2000, env: { ...process.env, PATH: o.path, GIT_OPTIONAL_LOCKS: "0" } });
  if (r.error || (r.status !== 0 && (r.stdout ?? "") === "")) {
    // outside a repository git still reads the user's configuration; an error means it cannot be vetted
    if (r.status === 128 || r.error) return "git's configuration could not be read, so it cannot be shown to run no programs";
  }
  for (const entry of (r.stdout ?? "").split("\0")) {
    const nl = entry.indexOf("\n");
    const refused = entryRefusal(nl < 0 ? entry : entry.slice(0, nl), nl < 0 ? null : entry.slice(nl + 1));
    if (refused) return refused;
  }
  // where git itself says the hooks are (a bare layout with core.worktree, a worktree, hooksPath)
  const where = spawnSync("git", ["rev-parse", "--absolute-git-dir", "--git-path", "hooks", "--is-bare-repository", "--git-path", "index"], { cwd, encoding: "utf8", timeout: 2000, env: { ...process.env, PATH: o.path } });
  if (!where.error && where.status === 0) {
    const [, hooksRel, bare, indexRel] = where.stdout.trim().split("\n");
    if (bare === "true") return "this is a bare repository with an unusual layout, whose hooks and work tree are not checked";
    const hook = readHookRefusal(hooksRel && hooksRel.startsWith("/") ? hooksRel : `${cwd}/${hooksRel ?? ".git/hooks"}`);
    if (hook) return hook;
    if (!indexRel) return "git did not say where its index is, so it cannot be checked for submodules";
    const gitlink = gitlinkRefusal(indexRel.startsWith("/") ? indexRel : `${cwd}/${indexRel}`);
    if (gitlink) return gitlink;
  }
  return submoduleRefusal(cwd);
}
