/**
 * Whether a path reaches one of the files no agent may touch (the table: src/hooks/protect_table.ts),
 * as it lies on disk; the name-only checks of globs and free text are src/hooks/protect_text.ts.
 *
 * Names compare case-insensitively and after Unicode NFKC folding (`.LONGRUN`, fullwidth dots);
 * literal paths are resolved (`..`, the working directory, `~`, symlinked parents and targets)
 * before they compare, and a file with several hard links is compared by inode. A glob reaches a
 * protected path when it could match it under bash's rules. Parsing a shell is best effort:
 * docs/threat-model.md says which protections the operating system enforces (Claude Code's
 * sandbox) and which rest on these checks.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename } from "node:path";
import { inodeFiles } from "../root/layout.ts";
import { type Access, canMatch, fold, foldTokens, isLit, lit, type ProtectedRule, ruleFor, segmentsOf, segText } from "./protect_table.ts";
import { countDisk, diskOpsSoFar, resolveExisting } from "./resolve.ts";
import { type Tok, tokensMatch } from "./shell/words.ts";

export { type Access, PROTECTED, type ProtectedRule } from "./protect_table.ts";
export { countDisk, diskOpsSoFar, resolveExisting } from "./resolve.ts";
export { AGENT_SUBCOMMANDS, globNamesHit, textHit } from "./protect_text.ts";

/**
 * What one decision may spend on the disk (symlink lookups, directory entries read, stats) before
 * every further check answers "too much to check": the bound that keeps a command of many long
 * paths, patterns or trees decided in well under a second.
 */
export const MAX_DISK_OPS = 50_000;

export interface DiskBudget {
  left: number;
}

/** A fresh budget for one decision. */
export function withBudget(ctx: ProtectContext): ProtectContext {
  return { ...ctx, budget: { left: MAX_DISK_OPS } };
}

export function overBudget(path: string): PathHit {
  return { rule: null, path: path.length > 120 ? `${path.slice(0, 120)}…` : path, what: `more than one decision may look through (${MAX_DISK_OPS} disk lookups); split the command into several calls` };
}

/** Paths longer than this (PATH_MAX) are refused unresolved: the kernel refuses them too, and checking them costs. */
export const MAX_PATH_CHARS = 4096;

/** Where the checks run: the root, the home directory, the working directory and longrun's own executable. */
export interface ProtectContext {
  root: string;
  home: string;
  cwd: string;
  /** The disk work this decision may still do; without one, nothing is counted (a file tool's single path). */
  budget?: DiskBudget;
  /** Lowercase names the longrun executable answers to (`longrun`, and a renamed binary's name). */
  exeNames: readonly string[];
  /** Real paths of the longrun executable. */
  exePaths: readonly string[];
}

export interface PathHit {
  rule: ProtectedRule | null;
  path: string;
  what: string;
}


/**
 * Absolute segments as the kernel would walk them: the literal part before the first pattern is
 * resolved on disk first (symlinks, then `..` against where they led: `/dev/fd/..` is a process's
 * own `/proc/<pid>`), then the rest is appended, a `..` after a pattern removing it
 * (an over-approximation).
 */
function absoluteSegments(tokens: readonly Tok[], cwd: string): Tok[][] {
  const { absolute, segs } = segmentsOf(tokens);
  const firstPattern = segs.findIndex((s) => !isLit(s));
  const literalCount = firstPattern < 0 ? segs.length : firstPattern;
  const head = (absolute ? "" : cwd.replace(/\/+$/, "")) + "/" + segs.slice(0, literalCount).map(segText).join("/");
  const out: Tok[][] = segmentsOf(lit(resolveExisting(head))).segs;
  for (const s of segs.slice(literalCount)) {
    const text = isLit(s) ? segText(s) : null;
    if (text === ".") continue;
    if (text === "..") {
      out.pop();
      continue;
    }
    out.push(s);
  }
  return out;
}

function isLongrunRoot(dir: string, ctx: ProtectContext): boolean {
  if (fold(dir) === fold(ctx.root)) return true;
  try {
    return statSync(`${dir}/.longrun`).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The rule among `only` that a literal absolute path (already resolved) falls under, with memory.db
 * and raw_data/ counting only inside a longrun root. For walking a tree entry by entry.
 */
export function literalRule(path: string, only: (r: ProtectedRule) => boolean, ctx: ProtectContext): ProtectedRule | null {
  return ruleFor(segmentsOf(lit(path)).segs, only, (dir) => isLongrunRoot(dir, ctx), false);
}

/** Inode identities of the protected files that exist, to spot a hard link to one of them. */
export function protectedInodes(ctx: ProtectContext): Set<string> {
  const files = [...inodeFiles(ctx.root, ctx.home), ...ctx.exePaths];
  const out = new Set<string>();
  for (const f of files) {
    try {
      const st = statSync(f);
      out.add(`${st.dev}:${st.ino}`);
    } catch {
      // absent: nothing to link to
    }
  }
  return out;
}

/**
 * Whether a path pattern (a word's tokens, with no unknown expansion) reaches a protected
 * location for `access`, relative to `ctx.cwd`. Literal paths are resolved on disk first.
 */
export function pathHit(tokens: readonly Tok[], access: Access, ctx: ProtectContext, dotglob = false): PathHit | null {
  const b = ctx.budget;
  if (b && b.left <= 0) return overBudget(textOfTokens(tokens));
  const start = diskOpsSoFar();
  const hit = unbudgetedPathHit(tokens, access, ctx, dotglob);
  if (!b) return hit;
  b.left -= diskOpsSoFar() - start;
  return hit ?? (b.left < 0 ? overBudget(textOfTokens(tokens)) : null);
}

const textOfTokens = (tokens: readonly Tok[]) => tokens.map((t) => (t.t === "c" ? t.c : "*")).join("");

function unbudgetedPathHit(tokens: readonly Tok[], access: Access, ctx: ProtectContext, dotglob: boolean): PathHit | null {
  const budgetStart = diskOpsSoFar();
  if (tokens.length > MAX_PATH_CHARS) {
    return { rule: null, path: `${tokens.slice(0, 60).map((t) => (t.t === "c" ? t.c : "*")).join("")}…`, what: `a path longer than ${MAX_PATH_CHARS} characters (PATH_MAX), which is not checked` };
  }
  const segs = absoluteSegments(tokens, ctx.cwd);
  const literal = segs.every(isLit);
  const shown = "/" + segs.map(segText).join("/");
  const rule = ruleFor(segs, access, (dir) => isLongrunRoot(dir, ctx), dotglob);
  if (rule) return { rule, path: shown, what: rule.what };
  // a pattern names the executable only through what it matches on disk (checked below)
  if (access === "write" && literal && exeHit(segs, ctx, dotglob)) return { rule: null, path: shown, what: "longrun's own executable" };
  if (literal) {
    countDisk();
    try {
      const st = statSync(shown);
      if (st.isFile() && st.nlink > 1 && protectedInodes(ctx).has(`${st.dev}:${st.ino}`)) {
        return { rule: null, path: shown, what: "a hard link to one of longrun's or Claude Code's protected files" };
      }
    } catch {
      // absent: no link
    }
  }
  if (!literal) {
    // what the pattern matches on disk now, each match resolved (a symlink in src/ to .longrun/)
    const matches = expandOnDisk(segs, dotglob);
    if (matches === null) return { rule: null, path: shown, what: `a pattern over more than ${MAX_GLOB_ENTRIES} directory entries, too many to check` };
    for (const m of matches) {
      countDisk(4); // a match is resolved and compared like a named path: count its cost too
      if (ctx.budget && ctx.budget.left - (diskOpsSoFar() - budgetStart) < 0) return overBudget(shown);
      const hit = unbudgetedPathHit(lit(m), access, ctx, dotglob);
      if (hit) return { ...hit, path: `${m} -> ${hit.path}` };
    }
  }
  return null;
}

/** Directory entries a pattern's expansion may read before it is refused as too broad to check. */
export const MAX_GLOB_ENTRIES = 10_000;

/**
 * The paths an absolute pattern matches on disk, as bash would expand it; null past
 * MAX_GLOB_ENTRIES. An unknown expansion (which could hold slashes) matches nothing here: such
 * words are refused before they get this far.
 */
function expandOnDisk(segs: readonly Tok[][], dotglob: boolean): string[] | null {
  let paths = [""];
  let read = 0;
  for (const seg of segs) {
    if (isLit(seg)) {
      const name = segText(seg);
      paths = paths.map((p) => `${p}/${name}`);
      continue;
    }
    if (seg.some((t) => t.t === "any")) return [];
    const next: string[] = [];
    for (const dir of paths) {
      let names: string[];
      try {
        names = readdirSync(dir === "" ? "/" : dir);
      } catch {
        continue;
      }
      read += names.length;
      countDisk(names.length);
      if (read > MAX_GLOB_ENTRIES) return null;
      for (const n of names) if (tokensMatch(seg, n, dotglob)) next.push(`${dir}/${n}`);
    }
    paths = next;
    if (paths.length === 0) break;
  }
  return paths;
}

function exeHit(segs: readonly Tok[][], ctx: ProtectContext, dotglob: boolean): boolean {
  const last = segs.at(-1);
  if (!last) return false;
  if (canMatch(foldTokens(last), ctx.exeNames, dotglob)) return true;
  const text = "/" + segs.map(segText).join("/");
  return segs.every(isLit) && ctx.exePaths.some((p) => fold(p) === fold(text));
}

/**
 * The ways longrun's packages start its executable by another word: the npm launcher
 * (`node …/bin/longrun.js`), a Windows name, the Python package's module (`python -mlongrun`,
 * `python -m longrun.__main__`).
 */
const LAUNCHER_NAME = /^(?:-m)?longrun(?:\.(?:c?js|mjs|exe|cmd|bat|ps1|__main__))?$/;

/** True when `name` (a command word's value) is longrun's executable by name or by real path, or a launcher of it. */
export function isLongrunProgram(name: string, ctx: ProtectContext): boolean {
  const base = fold(basename(name));
  if (ctx.exeNames.includes(base) || LAUNCHER_NAME.test(base)) return true;
  if (!name.includes("/")) return false;
  const abs = name.startsWith("/") ? name : `${ctx.cwd}/${name}`;
  const real = resolveExisting(abs);
  return ctx.exePaths.some((p) => fold(p) === fold(real));
}

/** Builds the context for `root` from this process: home, and the executable's names and paths. */
export function protectContext(root: string, cwd: string, env: Record<string, string | undefined> = process.env): ProtectContext {
  const home = (env.HOME ?? "/").replace(/\/+$/, "") || "/";
  const exe = process.execPath;
  const self = fold(basename(exe));
  const isRuntime = /^(bun|deno|node)(\.exe)?$/.test(self);
  const exeNames = isRuntime || self === "longrun" ? ["longrun"] : ["longrun", self];
  const exePaths = isRuntime ? [] : [resolveExisting(exe)];
  return { root, home, cwd: existsSync(cwd) ? cwd : root, exeNames, exePaths };
}
