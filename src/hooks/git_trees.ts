/**
 * What git would do to longrun's files, asked of git itself: what `git clean` and `git stash -u`
 * would take away, what `git add` would stage, and whether a command that rewrites tracked files
 * could overwrite a protected file the repository tracks. git's own checks run outside any
 * sandbox, with the configuration that runs programs switched off.
 */
import { spawnSync } from "node:child_process";
import { LAYOUT } from "../root/layout.ts";
import { literalRule, pathHit, type ProtectContext } from "./protect.ts";
import { lit } from "./protect_table.ts";
import { resolveExisting } from "./resolve.ts";
import { shown } from "./shell/words.ts";
import { statOk, TREE_RULES, treeHit } from "./tree_walk.ts";

/**
 * What `git clean` (its own dry run, same arguments) or `git stash -u/-a` (the untracked files,
 * ignored ones too for -a, that it would take away) would remove: refused when that includes a
 * protected path, or a directory that holds one.
 */
export function gitWouldTake(sub: "clean" | "stash", args: readonly string[], o: { flags: Set<string>; long: Set<string> }, ctx: ProtectContext): string | null {
  const top = repositoryTop(ctx.cwd)!;
  const drivers = filterDrivers(ctx.cwd);
  if (drivers) return drivers;
  const safe = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.quotePath=false"];
  const argv = sub === "clean"
    ? [...safe, "clean", "--dry-run", ...args.filter((a) => !/^(-i|--interactive|-n|--dry-run)$/.test(a))]
    : [...safe, "ls-files", "-z", "--others", "--directory", ...(o.flags.has("a") || o.long.has("--all") ? [] : ["--exclude-standard"])];
  const r = spawnSync("git", argv, { cwd: sub === "clean" ? ctx.cwd : top, encoding: "utf8", timeout: 3000, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0" } });
  if (r.error) return `git ${sub} could not be checked (${r.error.message}); name the files`;
  // a git that failed (a bad option, a timeout, a signal) listed nothing: that is not "nothing would go"
  if (r.status !== 0) return `git ${sub} could not be checked (git exited ${r.status ?? r.signal}: ${(r.stderr ?? "").trim().split("\n")[0]!.slice(0, 200)}); name the files`;
  const paths = sub === "clean"
    ? (r.stdout ?? "").split("\n").flatMap((l) => (l.startsWith("Would remove ") ? [`${ctx.cwd}/${l.slice(13)}`] : []))
    : (r.stdout ?? "").split("\0").filter(Boolean).map((p) => `${top}/${p}`);
  for (const p of paths.slice(0, 5000)) {
    if (p.startsWith(`${ctx.cwd}/"`)) return `git ${sub} would take away ${shown(p)}, a name git quotes, which longrun cannot check; name the files`;
    const hit = p.endsWith("/") ? treeHit(p.slice(0, -1), "delete", ctx) : literalRule(p, TREE_RULES.delete, ctx) ? pathHit(lit(p), "write", ctx) : null;
    if (hit) return `git ${sub} would take away ${hit.what} (${hit.path}); leave longrun's files out (they belong in .gitignore, and -x/-a removes ignored files too)`;
  }
  return paths.length > 5000 ? `git ${sub} would take away more than 5000 paths, too many to check; name them` : null;
}

/**
 * git's own checks run here, outside any sandbox: a repository whose configuration names a filter
 * driver (`filter.<name>.clean`, `smudge`, `process` — a program git runs on file contents, which
 * an agent can set up in a nested repository under a lease) is not asked at all. Reading the
 * configuration runs nothing.
 */
function filterDrivers(cwd: string): string | null {
  const r = spawnSync("git", ["config", "--includes", "--get-regexp", "^filter\\."], { cwd, encoding: "utf8", timeout: 2000, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" } });
  // status 1: no such key; anything else (an error, an option this git lacks) is not a "no"
  if (r.error || (r.status !== 0 && r.status !== 1)) return `git's configuration could not be read (${r.error?.message ?? `git config exited ${r.status}`}), so what git would do cannot be checked; name the files`;
  const names = (r.stdout ?? "").split("\n").filter(Boolean).map((l) => l.split(" ")[0]!);
  return names.length ? `this repository's git configuration has a filter driver (${names[0]}), a program git would run on file contents, so longrun does not ask git what it would take; name the files` : null;
}

/** Where git's subcommand is among its arguments (after global options), or -1. */
export function subcommandAt(args: readonly string[]): number {
  let k = 0;
  while (k < args.length && args[k]!.startsWith("-")) k += ["-C", "-c", "--git-dir", "--work-tree", "--namespace"].includes(args[k]!) ? 2 : 1;
  return k < args.length ? k : -1;
}

/** The directory git works in: its `-C` options (and `--work-tree`) applied to `cwd`. */
export function gitDirectory(globals: readonly string[], cwd: string): string {
  let dir = cwd;
  for (let k = 0; k < globals.length; k++) {
    const g = globals[k]!;
    const value = g === "-C" || g === "--work-tree" ? globals[k + 1] : g.startsWith("--work-tree=") ? g.slice(12) : undefined;
    if (value === undefined) continue;
    dir = resolveExisting(value.startsWith("/") ? value : `${dir}/${value}`);
  }
  return dir;
}

/** The top of the git work tree that holds `dir` (the nearest directory with a `.git`), or null. */
export function repositoryTop(dir: string): string | null {
  for (let d = resolveExisting(dir); ; ) {
    if (statOk(`${d}/.git`)) return d;
    const up = d.slice(0, d.lastIndexOf("/")) || "/";
    if (up === d) return null;
    d = up;
  }
}

/**
 * `git add` stages what git itself lists in a dry run (`git add --dry-run` with the same
 * arguments, configuration that runs programs switched off): a protected path among them, one
 * not ignored by .gitignore (or forced with -f), would be committed with the project.
 */
export function gitAddRefusal(words: readonly string[], ctx: ProtectContext, repositoryMayChange = false): string | null {
  if ((words[0] ?? "").split("/").at(-1) !== "git") return null;
  const rest = words.slice(1);
  const at = subcommandAt(rest);
  if (at < 0 || rest[at] !== "add") return null;
  if (repositoryMayChange) return "git add runs in the same command that makes a repository or points git at another one (git init, --git-dir, GIT_DIR=…), so what it stages cannot be checked; make the repository in one call and add in the next";
  const cwd = gitDirectory(rest.slice(0, at), ctx.cwd);
  const top = repositoryTop(cwd);
  if (top === null) return null; // not a repository: git add fails and stages nothing
  const args = rest.slice(at + 1).filter((a) => !["-n", "--dry-run", "-i", "--interactive", "-p", "--patch", "-e", "--edit"].includes(a));
  const drivers = filterDrivers(cwd);
  if (drivers) return drivers;
  const r = spawnSync("git", ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "add", "--dry-run", "--ignore-missing", ...args], {
    cwd, encoding: "utf8", timeout: 3000, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0" },
  });
  if (r.error) return `git add could not be checked (${r.error.message}); add the files by name`;
  for (const line of (r.stdout ?? "").split("\n")) {
    const m = /^add '(.*)'$/.exec(line);
    if (!m) continue;
    const path = `${top}/${m[1]}`;
    const rule = literalRule(path, TREE_RULES.delete, ctx);
    if (rule) return `git add would stage ${rule.what} (${path}), which would then be committed; add the files by name, or have the user add longrun's lines to .gitignore (longrun hook install does)`;
  }
  return null;
}

/** git subcommands that rewrite tracked files in the work tree from the index or history. */
const GIT_REWRITES = new Set(["checkout", "restore", "reset", "switch", "stash", "merge", "rebase", "pull", "cherry-pick", "revert", "apply", "am", "read-tree", "checkout-index"]);

/**
 * A git command that rewrites tracked files (`git checkout -- .`, `git reset --hard`, `git stash`)
 * would overwrite a protected file that the repository tracks (committed once, by anyone) with an
 * older copy: refused while any is tracked, naming it.
 */
export function gitTrackedRefusal(words: readonly string[], ctx: ProtectContext): string | null {
  if ((words[0] ?? "").split("/").at(-1) !== "git") return null;
  const rest = words.slice(1);
  const at = subcommandAt(rest);
  if (at < 0 || !GIT_REWRITES.has(rest[at]!)) return null;
  const cwd = gitDirectory(rest.slice(0, at), ctx.cwd);
  const top = repositoryTop(cwd);
  if (top === null) return null;
  const drivers = filterDrivers(cwd);
  if (drivers) return drivers;
  const specs = LAYOUT.flatMap((e) => (e.tracked ? [`:(top,glob,icase)**/${e.tracked}`] : []));
  const r = spawnSync("git", ["-c", "core.fsmonitor=false", "-c", "core.quotePath=false", "ls-files", "-z", "--full-name", "--", ...specs], { cwd, encoding: "utf8", timeout: 3000, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" } });
  if (r.error) return `git ${rest[at]} could not be checked (${r.error.message})`;
  for (const p of (r.stdout ?? "").split("\0").filter(Boolean)) {
    const rule = literalRule(`${top}/${p}`, TREE_RULES.delete, ctx);
    if (rule) return `git ${rest[at]} rewrites tracked files, and this repository tracks ${rule.what} (${top}/${p}), which it could overwrite with an older copy; ask the user to untrack it (git rm --cached) and ignore it`;
  }
  return null;
}
