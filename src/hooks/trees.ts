/**
 * Whole-tree operations: whether a directory tree holds one of longrun's protected paths, so that
 * a recursive reader (`grep -r`, `cp -r`, `tar -c`), a recursive deleter (`rm -r`, `git clean`) or
 * a recursive changer (`chmod -R`) given that tree is refused with the path it would reach. The
 * walk is bounded: a tree with more entries than MAX_TREE_ENTRIES is refused as too large to check.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { countDisk, diskOpsSoFar, literalRule, overBudget, type PathHit, pathHit, PROTECTED, type ProtectContext, type ProtectedRule, protectedInodes, resolveExisting } from "./protect.ts";
import { LAYOUT } from "../root/layout.ts";
import { shown, type Tok } from "./shell/words.ts";

/** Entries a walk looks at before it gives up and refuses the tree as too large to check. */
export const MAX_TREE_ENTRIES = 20_000;

/**
 * What the operation does to every file of the tree: `read` (copy, archive, search), `delete`
 * (rm -r, git clean, git stash -u), or `change` (chmod -R, chown -R: every protected rule counts,
 * and a hard link changes the file it shares).
 */
export type TreeAccess = "read" | "delete" | "change";

/** Rules an operation of each kind must not reach: deleting .claude/ turns the hooks off. */
const RULES: Readonly<Record<TreeAccess, (r: ProtectedRule) => boolean>> = {
  read: (r) => r.read,
  delete: (r) => r.read || r.id === "claude_settings" || r.id === "claude_json",
  change: () => true,
};

/**
 * Directories of installed dependencies and caches, rebuilt by their tools and often huge: a
 * deletion does not walk into them (a longrun root is never kept there), so `rm -rf node_modules`
 * is decided without reading a hundred thousand entries. Reads and changes still walk them.
 */
const DEPENDENCY_DIRS = new Set(["node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".gradle", ".next", ".nuxt", ".turbo", ".parcel-cache"]);

/** Every name that appears in a rule: only entries with one of these names are checked in full. */
const RULE_NAMES = new Set(PROTECTED.flatMap((r) => r.segments.flat()).filter((n) => n !== "*"));

const lit = (s: string): Tok[] => [...s].map((c) => ({ t: "c", c }) as Tok);
const within = (dir: string, path: string) => path === dir || path.startsWith(dir === "/" ? "/" : dir + "/");

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The protected path a whole-tree operation on `dir` (relative to ctx.cwd) would reach, or null.
 * `followLinks`: the operation follows symlinks it meets inside the tree (grep -R, cp -L).
 */
export function treeHit(dir: string, access: TreeAccess, ctx: ProtectContext, followLinks = false): PathHit | null {
  const b = ctx.budget;
  if (b && b.left <= 0) return overBudget(dir);
  const start = diskOpsSoFar();
  const hit = walk(dir, access, ctx, followLinks, b ? b.left : Infinity);
  if (!b) return hit;
  b.left -= diskOpsSoFar() - start;
  return hit ?? (b.left < 0 ? overBudget(dir) : null);
}

function walk(dir: string, access: TreeAccess, ctx: ProtectContext, followLinks: boolean, allowance: number): PathHit | null {
  const only = RULES[access];
  const start = diskOpsSoFar();
  const abs = resolveExisting(dir.startsWith("/") ? dir : `${ctx.cwd}/${dir}`);
  const self = pathHit(lit(abs), access === "read" ? "read" : "write", ctx);
  if (self) return self;
  if (!isDir(abs)) return null;
  // places known to hold protected files, without a walk: the root, the home directory, /proc
  const known: [string, string[]][] = [
    [resolveExisting(ctx.root), LAYOUT.filter((e) => e.known).map((e) => e.rel)],
    [resolveExisting(ctx.home), [".claude", ".claude.json", ".bashrc", ".profile", ".gitconfig"]],
    ["/proc", ["self/environ"]],
  ];
  for (const [place, names] of known) {
    if (!within(abs, place)) continue;
    for (const n of names) {
      const path = `${place}/${n}`;
      const rule = literalRule(path, only, ctx) ?? (place === "/proc" ? PROTECTED.find((r) => r.id === "process_environment")! : null);
      if (rule && (place === "/proc" || statOk(path))) return { rule, path, what: rule.what };
    }
  }
  if (access === "delete" && DEPENDENCY_DIRS.has(abs.slice(abs.lastIndexOf("/") + 1))) return null;
  const inodes = access === "delete" ? new Set<string>() : protectedInodes(ctx);
  const seen = new Set<string>([abs]);
  const todo = [abs];
  let entries = 0;
  while (todo.length) {
    const d = todo.pop()!;
    if (diskOpsSoFar() - start > allowance) return overBudget(abs);
    let list;
    try {
      list = readdirSync(d, { withFileTypes: true });
    } catch {
      continue; // unreadable: the operation cannot read it either
    }
    countDisk(list.length);
    for (const e of list) {
      if (++entries > MAX_TREE_ENTRIES) return { rule: null, path: abs, what: `a tree of more than ${MAX_TREE_ENTRIES} entries, too many to check for longrun's files` };
      const name = String(e.name);
      const path = `${d}/${name}`;
      if (RULE_NAMES.has(name.normalize("NFKC").toLowerCase())) {
        const rule = literalRule(path, only, ctx);
        if (rule) return { rule, path, what: rule.what };
      }
      if (e.isSymbolicLink()) {
        if (!followLinks) continue;
        const target = resolveExisting(path);
        const hit = pathHit(lit(target), access === "read" ? "read" : "write", ctx);
        if (hit) return { ...hit, path: `${path} -> ${hit.path}` };
        if (isDir(target) && !seen.has(target)) {
          // a link to a place that holds the root or the home directory is caught by walking there
          seen.add(target);
          if (known.some(([place]) => within(target, place))) {
            const hit = walk(target, access, ctx, false, allowance - (diskOpsSoFar() - start));
            if (hit) return { ...hit, path: `${path} -> ${hit.path}` };
          }
          todo.push(target);
        }
      } else if (e.isDirectory()) {
        if (!(access === "delete" && DEPENDENCY_DIRS.has(name))) todo.push(path);
      }
      else if (e.isFile() && inodes.size) {
        try {
          countDisk();
          const st = statSync(path);
          if (st.nlink > 1 && inodes.has(`${st.dev}:${st.ino}`)) return { rule: null, path, what: "a hard link to one of longrun's or Claude Code's protected files" };
        } catch {
          // gone: nothing to reach
        }
      }
    }
  }
  return null;
}

function statOk(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * A program (or git subcommand) that works on whole trees, and when: an operand that is a
 * directory holding protected paths is refused under any lease. Policy as data: each row carries
 * an example it refuses in a longrun root (tests run them).
 */
export interface TreeOperation {
  program: string;
  /** git's subcommand. */
  sub?: string;
  /** Whole-tree always, or only with one of these options (letters of a cluster, long names). */
  when: "always" | { flags: string; long: readonly string[] };
  /** Options that make it follow the symlinks inside. */
  follow?: { flags: string; long: readonly string[] };
  /** Options that make it do nothing (a dry run). */
  unless?: { flags: string; long: readonly string[] };
  /** Option letters (and long names) whose value is the next word, not an operand. */
  valued?: { flags: string; long: readonly string[] };
  access: TreeAccess;
  /** `all` operands, or the copy's `sources` (all but the last, unless a target option names it). */
  operands: "all" | "sources";
  /** The first operand is a pattern, unless one of these options gave it (`grep -e`). */
  pattern?: { flags: string; long: readonly string[] };
  /** With no operand it works on the working directory; `repo`: always on the whole repository. */
  defaultCwd?: boolean | "repo";
  example: string;
}

const none = { flags: "", long: [] } as const;

export const TREE_OPERATIONS: readonly TreeOperation[] = [
  { program: "rm", when: { flags: "rR", long: ["--recursive"] }, access: "delete", operands: "all", example: "rm -rf ." },
  { program: "chmod", when: { flags: "R", long: ["--recursive"] }, access: "change", operands: "all", example: "chmod -R 777 ." },
  { program: "chown", when: { flags: "R", long: ["--recursive"] }, access: "change", operands: "all", example: "chown -R nobody ." },
  { program: "chgrp", when: { flags: "R", long: ["--recursive"] }, access: "change", operands: "all", example: "chgrp -R nogroup ." },
  { program: "setfacl", when: { flags: "R", long: ["--recursive"] }, access: "change", operands: "all", example: "setfacl -R -m u:nobody:r ." },
  { program: "chattr", when: { flags: "R", long: [] }, access: "change", operands: "all", example: "chattr -R +i ." },
  { program: "mv", when: "always", valued: { flags: "tS", long: ["--target-directory", "--suffix"] }, access: "delete", operands: "sources", example: "mv ROOT /tmp/x" },
  { program: "cp", when: { flags: "rRa", long: ["--recursive", "--archive"] }, follow: { flags: "L", long: ["--dereference"] }, valued: { flags: "tS", long: ["--target-directory", "--suffix"] }, access: "read", operands: "sources", example: "cp -r . /tmp/x" },
  { program: "rsync", when: { flags: "ra", long: ["--recursive", "--archive"] }, follow: { flags: "L", long: ["--copy-links"] }, access: "read", operands: "sources", example: "rsync -a . /tmp/x" },
  { program: "rsync", when: { flags: "", long: ["--delete", "--del", "--delete-before", "--delete-during", "--delete-delay", "--delete-after", "--delete-excluded"] }, access: "delete", operands: "all", example: "rsync -r --delete src/ ." },
  { program: "scp", when: { flags: "r", long: [] }, access: "read", operands: "sources", example: "scp -r . host:x" },
  { program: "tar", when: { flags: "cru", long: ["--create", "--append", "--update"] }, follow: { flags: "h", long: ["--dereference"] }, access: "read", operands: "all", example: "tar -cf /tmp/all.tar ." },
  { program: "zip", when: { flags: "rR", long: ["--recurse-paths", "--recurse-patterns"] }, access: "read", operands: "all", defaultCwd: true, example: "zip -r /tmp/all.zip ." },
  { program: "7z", sub: "a", when: "always", access: "read", operands: "all", example: "7z a /tmp/all.7z ." },
  { program: "7za", sub: "a", when: "always", access: "read", operands: "all", example: "7za a /tmp/all.7z ." },
  { program: "7zz", sub: "a", when: "always", access: "read", operands: "all", example: "7zz a /tmp/all.7z ." },
  { program: "grep", pattern: { flags: "ef", long: ["--regexp", "--file"] }, when: { flags: "rR", long: ["--recursive", "--dereference-recursive"] }, follow: { flags: "R", long: ["--dereference-recursive"] }, valued: { flags: "efmABCd", long: [] }, access: "read", operands: "all", defaultCwd: true, example: "grep -r token ." },
  { program: "egrep", pattern: { flags: "ef", long: ["--regexp", "--file"] }, when: { flags: "rR", long: ["--recursive", "--dereference-recursive"] }, follow: { flags: "R", long: ["--dereference-recursive"] }, valued: { flags: "efmABCd", long: [] }, access: "read", operands: "all", defaultCwd: true, example: "egrep -r token" },
  { program: "fgrep", pattern: { flags: "ef", long: ["--regexp", "--file"] }, when: { flags: "rR", long: ["--recursive", "--dereference-recursive"] }, follow: { flags: "R", long: ["--dereference-recursive"] }, valued: { flags: "efmABCd", long: [] }, access: "read", operands: "all", defaultCwd: true, example: "fgrep -r token" },
  { program: "rg", pattern: { flags: "ef", long: ["--regexp", "--file"] }, when: "always", valued: { flags: "efgtTmABCjM", long: ["--regexp", "--file", "--glob", "--type", "--type-not", "--max-count", "--context", "--after-context", "--before-context", "--threads"] }, access: "read", operands: "all", defaultCwd: true, example: "rg -uuu token" },
  { program: "ag", pattern: none, when: "always", valued: { flags: "GgmABC", long: [] }, access: "read", operands: "all", defaultCwd: true, example: "ag token" },
  { program: "ack", pattern: none, when: "always", valued: { flags: "mABC", long: [] }, access: "read", operands: "all", defaultCwd: true, example: "ack token" },
  { program: "diff", when: "always", access: "read", operands: "all", example: "diff -r . /tmp" },
  { program: "git", sub: "clean", when: "always", unless: { flags: "n", long: ["--dry-run"] }, access: "delete", operands: "all", defaultCwd: true, example: "git clean -ffdx" },
  { program: "git", sub: "stash", when: { flags: "ua", long: ["--include-untracked", "--all"] }, access: "delete", operands: "all", defaultCwd: "repo", example: "git stash -u" },
  { program: "git", sub: "diff", when: { flags: "", long: ["--no-index"] }, access: "read", operands: "all", example: "git diff --no-index . /tmp" },
];

/** Options of a word list: letters of short clusters and long names, the operands, in order. */
function options(words: readonly string[], valued: { flags: string; long: readonly string[] }, oldStyle: boolean) {
  const flags = new Set<string>();
  const long = new Set<string>();
  const operands: string[] = [];
  let target: string | null = null;
  for (let i = 0; i < words.length; i++) {
    let w = words[i]!;
    if (w === "--") {
      operands.push(...words.slice(i + 1));
      break;
    }
    if (i === 0 && oldStyle && !w.startsWith("-")) w = "-" + w; // tar czf x.tar .
    if (w.startsWith("--")) {
      const name = w.split("=")[0]!;
      long.add(name);
      if (name === "--target-directory") target = w.includes("=") ? w.slice(w.indexOf("=") + 1) : (words[i + 1] ?? null);
      if (!w.includes("=") && valued.long.includes(name)) i++;
    } else if (w.startsWith("-") && w.length > 1) {
      for (let k = 1; k < w.length; k++) {
        flags.add(w[k]!);
        if (valued.flags.includes(w[k]!)) {
          const value = k + 1 < w.length ? w.slice(k + 1) : words[++i];
          if (w[k] === "t") target = value ?? null;
          break;
        }
      }
    } else operands.push(w);
  }
  return { flags, long, operands, target };
}

const given = (o: { flags: Set<string>; long: Set<string> }, sel: { flags: string; long: readonly string[] }) =>
  [...sel.flags].some((f) => o.flags.has(f)) || sel.long.some((l) => o.long.has(l));

/**
 * Why a command (its words as text, the program first) is a whole-tree operation over a tree that
 * holds protected paths, or null. `cwd` is where it runs.
 */
export function treeOperationRefusal(words: readonly string[], ctx: ProtectContext): string | null {
  const name = (words[0] ?? "").split("/").at(-1)!;
  for (const op of TREE_OPERATIONS) {
    if (op.program !== name) continue;
    let rest = words.slice(1);
    let here = ctx;
    if (op.sub !== undefined) {
      const at = subcommandAt(rest);
      if (at < 0 || rest[at] !== op.sub) continue;
      const dir = gitDirectory(rest.slice(0, at), ctx.cwd);
      if (dir !== ctx.cwd) here = { ...ctx, cwd: dir };
      rest = rest.slice(at + 1);
    }
    const o = options(rest, op.valued ?? none, name === "tar");
    if (op.when !== "always" && !given(o, op.when)) continue;
    if (op.unless && given(o, op.unless)) continue;
    // in a repository, git itself says what clean and stash would take (what .gitignore spares)
    if (name === "git" && (op.sub === "clean" || op.sub === "stash") && repositoryTop(here.cwd) !== null) {
      const why = gitWouldTake(op.sub, rest, o, here);
      if (why) return why;
      continue;
    }
    let trees = o.operands;
    if (op.pattern && !given(o, op.pattern)) trees = trees.slice(1);
    if (op.operands === "sources") trees = o.target !== null ? trees.filter((t) => t !== o.target) : trees.slice(0, -1);
    if (op.defaultCwd === "repo") trees = [repositoryTop(here.cwd) ?? "."];
    else if (trees.length === 0 && op.defaultCwd) trees = ["."];
    const follow = op.follow ? given(o, op.follow) : false;
    for (const word of trees) {
      // a pattern's trees are under the directory before its first wildcard (an over-approximation)
      const t = /[*?[]/.test(word) ? word.slice(0, Math.max(0, word.slice(0, word.search(/[*?[]/)).lastIndexOf("/"))) || "." : word;
      const hit = treeHit(word.startsWith("/") && t === "." ? "/" : t, op.access, here, follow);
      if (hit) {
        const label = op.sub ? `${name} ${op.sub}` : name;
        return `${label} works on the whole tree ${shown(word)}, which holds ${hit.what} (${hit.path}); name the files or directories to work on, leaving longrun's out`;
      }
    }
  }
  return null;
}

/**
 * What `git clean` (its own dry run, same arguments) or `git stash -u/-a` (the untracked files,
 * ignored ones too for -a, that it would take away) would remove: refused when that includes a
 * protected path, or a directory that holds one.
 */
function gitWouldTake(sub: "clean" | "stash", args: readonly string[], o: { flags: Set<string>; long: Set<string> }, ctx: ProtectContext): string | null {
  const top = repositoryTop(ctx.cwd)!;
  const drivers = filterDrivers(ctx.cwd);
  if (drivers) return drivers;
  const safe = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.quotePath=false"];
  const argv = sub === "clean"
    ? [...safe, "clean", "--dry-run", ...args.filter((a) => !/^(-i|--interactive|-n|--dry-run)$/.test(a))]
    : [...safe, "ls-files", "-z", "--others", "--directory", ...(o.flags.has("a") || o.long.has("--all") ? [] : ["--exclude-standard"])];
  const r = spawnSync("git", argv, { cwd: sub === "clean" ? ctx.cwd : top, encoding: "utf8", timeout: 3000, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0" } });
  if (r.error) return `git ${sub} could not be checked (${r.error.message}); name the files`;
  const paths = sub === "clean"
    ? (r.stdout ?? "").split("\n").flatMap((l) => (l.startsWith("Would remove ") ? [`${ctx.cwd}/${l.slice(13)}`] : []))
    : (r.stdout ?? "").split("\0").filter(Boolean).map((p) => `${top}/${p}`);
  for (const p of paths.slice(0, 5000)) {
    if (p.startsWith(`${ctx.cwd}/"`)) return `git ${sub} would take away ${shown(p)}, a name git quotes, which longrun cannot check; name the files`;
    const hit = p.endsWith("/") ? treeHit(p.slice(0, -1), "delete", ctx) : literalRule(p, RULES.delete, ctx) ? pathHit(lit(p), "write", ctx) : null;
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
function subcommandAt(args: readonly string[]): number {
  let k = 0;
  while (k < args.length && args[k]!.startsWith("-")) k += ["-C", "-c", "--git-dir", "--work-tree", "--namespace"].includes(args[k]!) ? 2 : 1;
  return k < args.length ? k : -1;
}

/** The directory git works in: its `-C` options (and `--work-tree`) applied to `cwd`. */
function gitDirectory(globals: readonly string[], cwd: string): string {
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
    const rule = literalRule(path, RULES.delete, ctx);
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
    const rule = literalRule(`${top}/${p}`, RULES.delete, ctx);
    if (rule) return `git ${rest[at]} rewrites tracked files, and this repository tracks ${rule.what} (${top}/${p}), which it could overwrite with an older copy; ask the user to untrack it (git rm --cached) and ignore it`;
  }
  return null;
}
