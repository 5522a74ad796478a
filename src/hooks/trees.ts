/**
 * Whole-tree operations: a recursive reader (`grep -r`, `cp -r`, `tar -c`), a recursive deleter
 * (`rm -r`, `git clean`) or a recursive changer (`chmod -R`) given a tree that holds one of
 * longrun's protected paths is refused with the path it would reach. The walk is
 * src/hooks/tree_walk.ts; what git itself would take, stage or overwrite is src/hooks/git_trees.ts.
 */
import type { ProtectContext } from "./protect.ts";
import { shown } from "./shell/words.ts";
import { gitDirectory, gitWouldTake, repositoryTop, subcommandAt } from "./git_trees.ts";
import { type TreeAccess, treeHit } from "./tree_walk.ts";

export { gitAddRefusal, gitTrackedRefusal, repositoryTop } from "./git_trees.ts";
export { MAX_TREE_ENTRIES, type TreeAccess, treeHit } from "./tree_walk.ts";

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
