/**
 * Whether a directory tree holds one of longrun's protected paths, so that a whole-tree operation
 * (src/hooks/trees.ts) given that tree is refused with the path it would reach. The walk is
 * bounded: a tree with more entries than MAX_TREE_ENTRIES is refused as too large to check.
 */
import { readdirSync, statSync } from "node:fs";
import { LAYOUT } from "../root/layout.ts";
import { literalRule, overBudget, type PathHit, pathHit, type ProtectContext, protectedInodes } from "./protect.ts";
import { lit, PROTECTED, type ProtectedRule } from "./protect_table.ts";
import { countDisk, diskOpsSoFar, resolveExisting } from "./resolve.ts";

/** Entries a walk looks at before it gives up and refuses the tree as too large to check. */
export const MAX_TREE_ENTRIES = 20_000;

/**
 * What the operation does to every file of the tree: `read` (copy, archive, search), `delete`
 * (rm -r, git clean, git stash -u), or `change` (chmod -R, chown -R: every protected rule counts,
 * and a hard link changes the file it shares).
 */
export type TreeAccess = "read" | "delete" | "change";

/** Rules an operation of each kind must not reach: deleting .claude/ turns the hooks off. */
export const TREE_RULES: Readonly<Record<TreeAccess, (r: ProtectedRule) => boolean>> = {
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
  const only = TREE_RULES[access];
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

export function statOk(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
