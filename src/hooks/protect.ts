/**
 * The files no agent may touch, whatever its lease says, as one table (policy as data), and the
 * checks that decide whether a path, a glob or a piece of text reaches one of them.
 *
 * Names compare case-insensitively and after Unicode NFKC folding (`.LONGRUN`, fullwidth dots);
 * literal paths are resolved (`..`, the working directory, `~`, symlinked parents and targets)
 * before they compare, and a file with several hard links is compared by inode. A glob reaches a
 * protected path when it could match it under bash's rules. Parsing a shell is best effort: the
 * docs/threat-model.md says which protections the operating system enforces (Claude Code's sandbox) and which
 * rest on these checks.
 */
import { existsSync, lstatSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { basename } from "node:path";
import { inodeFiles, ruleSegments } from "../root/layout.ts";
import { type Tok, tokensMatch } from "./shell/words.ts";

export interface ProtectedRule {
  id: string;
  /** One set of names per path segment, all lowercase; the rule matches consecutive segments. */
  segments: readonly (readonly string[])[];
  /**
   * `anywhere`: at any depth; `longrun_root`: only directly inside a longrun root (a directory
   * holding `.longrun/`, or the hook's root); `absolute`: only as the path's first segments.
   */
  where: "anywhere" | "longrun_root" | "absolute";
  /** Reading is refused too (secrets, the user's words), not only writing. */
  read: boolean;
  /** What it is, for the refusal. */
  what: string;
}

/** The links under /proc/<pid>/ (and /proc/<pid>/task/<tid>/) that lead into a process's files. */
const PROCESS_VIEWS = ["cwd", "root", "fd", "fdinfo", "map_files", "exe"];

const SHELL_STARTUP = [".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".envrc"];

/**
 * Every protected location. docs/gate.md renders these rows (scripts/gen_docs.ts). The names of
 * longrun's, Claude Code's and git's files in a root come from the root's layout (src/root/layout.ts).
 */
export const PROTECTED: readonly ProtectedRule[] = [
  { id: "longrun_state", segments: ruleSegments("longrun_state"), where: "anywhere", read: true, what: "longrun's state, lock, settings and tokens (.longrun/)" },
  { id: "longrun_memory", segments: ruleSegments("longrun_memory"), where: "longrun_root", read: true, what: "longrun's memory database (memory.db)" },
  { id: "longrun_raw", segments: ruleSegments("longrun_raw"), where: "longrun_root", read: true, what: "longrun's raw memory bodies (raw_data/)" },
  { id: "claude_settings", segments: ruleSegments("claude_settings"), where: "anywhere", read: false, what: "Claude Code's settings, hooks and commands (.claude/)" },
  { id: "claude_json", segments: ruleSegments("claude_json"), where: "anywhere", read: false, what: "Claude Code's user configuration (~/.claude.json)" },
  { id: "git_config", segments: ruleSegments("git_config"), where: "anywhere", read: false, what: "git configuration and hooks, which make read-only git commands run programs" },
  { id: "git_user_config", segments: [[".gitconfig"]], where: "anywhere", read: false, what: "git configuration (~/.gitconfig)" },
  { id: "git_xdg_config", segments: [[".config"], ["git"]], where: "anywhere", read: false, what: "git configuration (~/.config/git/)" },
  { id: "shell_startup", segments: [SHELL_STARTUP], where: "anywhere", read: false, what: "shell startup files, which define the commands every later Bash call runs" },
  { id: "tool_config", segments: [[".mcp.json", ".vscode", ".idea", ".gitmodules", ".ripgreprc"]], where: "longrun_root", read: false, what: "configuration that starts programs for the user later (.mcp.json's servers, editor tasks, submodules), which Claude Code's own sandbox also keeps read-only" },
  { id: "process_environment", segments: [["proc"], ["*"], ["environ", "mem"]], where: "absolute", read: true, what: "process environments and memory (which may hold tokens)" },
  { id: "process_paths", segments: [["proc"], ["*"], PROCESS_VIEWS], where: "absolute", read: true, what: "another view of a process's files (/proc/*/cwd, root, fd), which can lead anywhere" },
  { id: "thread_environment", segments: [["proc"], ["*"], ["task"], ["*"], ["environ", "mem"]], where: "absolute", read: true, what: "process environments and memory (which may hold tokens)" },
  { id: "thread_paths", segments: [["proc"], ["*"], ["task"], ["*"], PROCESS_VIEWS], where: "absolute", read: true, what: "another view of a process's files (/proc/*/task/*/cwd, root, fd), which can lead anywhere" },
  { id: "network_redirection", segments: [["dev"], ["tcp", "udp"]], where: "absolute", read: true, what: "bash's network redirections (/dev/tcp/…, /dev/udp/…), which open a socket" },
];

/**
 * What one decision may spend on the disk (symlink lookups, directory entries read, stats) before
 * every further check answers "too much to check": the bound that keeps a command of many long
 * paths, patterns or trees decided in well under a second.
 */
export const MAX_DISK_OPS = 50_000;

export interface DiskBudget {
  left: number;
}

let diskOps = 0;

/** Counts disk operations (all checks in this process); budgets are charged the difference. */
export function countDisk(n = 1): void {
  diskOps += n;
}

export function diskOpsSoFar(): number {
  return diskOps;
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

export type Access = "read" | "write";

function fold(s: string): string {
  return s.normalize("NFKC").toLowerCase();
}

function foldTokens(tokens: readonly Tok[]): Tok[] {
  const out: Tok[] = [];
  for (const t of tokens) {
    if (t.t === "c") for (const ch of fold(t.c)) out.push({ t: "c", c: ch });
    else if (t.t === "class") out.push({ t: "class", neg: t.neg, chars: fold(t.chars) + t.chars.toUpperCase() });
    else out.push(t);
  }
  return out;
}

/** Splits tokens at literal slashes into path segments. */
function segmentsOf(tokens: readonly Tok[]): { absolute: boolean; segs: Tok[][] } {
  const segs: Tok[][] = [[]];
  for (const t of tokens) {
    if (t.t === "c" && t.c === "/") segs.push([]);
    else segs.at(-1)!.push(t);
  }
  const absolute = tokens[0]?.t === "c" && tokens[0].c === "/";
  return { absolute, segs: segs.filter((s) => s.length > 0) };
}

const lit = (s: string): Tok[] => [...s].map((c) => ({ t: "c", c }) as Tok);
const isLit = (seg: readonly Tok[]) => seg.every((t) => t.t === "c");
const segText = (seg: readonly Tok[]) => seg.map((t) => (t.t === "c" ? t.c : "*")).join("");

function canMatch(seg: readonly Tok[], names: readonly string[], dotglob: boolean): boolean {
  if (names.includes("*")) return true;
  if (isLit(seg)) return names.includes(segText(seg)); // the common case: no pattern to run
  return names.some((n) => tokensMatch(seg, n, dotglob));
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

/**
 * Where an absolute `path` really leads: `.` and `..` applied, and every symlink on the way
 * followed, including a dangling one (a link to a file that does not exist yet is where a write
 * through it would land). Components that do not exist are kept as written.
 */
export function resolveExisting(path: string): string {
  const known = resolved.get(path);
  if (known !== undefined) return known;
  const out = resolveUncached(path);
  resolved.set(path, out);
  return out;
}

/** One gate decision resolves the same directories many times; a hook process lives for one call. */
const resolved = new Map<string, string>();

/**
 * Linear in the path's length: components are taken from a stack, the path so far is kept as
 * text, and once a component is missing nothing below it is looked up. Under /proc nothing is
 * resolved on disk: `/proc/self` is the process that opens the path (bash's child, not this
 * gate), so `self` and `thread-self` stay names, `..` is applied as the kernel would in procfs's
 * directories, and a process's links (cwd, root, fd, exe, …) end the walk, kept as written with
 * what follows them; the protected table refuses them for every pid.
 */
function resolveUncached(path: string): string {
  const todo = path.split("/").filter((c) => c !== "" && c !== ".").reverse();
  const out: string[] = [];
  const ends: number[] = []; // the length of `here` after each component of out
  let here = "";
  let missingFrom = Infinity; // out's length when a component was found missing
  let links = 0;
  const push = (c: string) => {
    out.push(c);
    here += "/" + c;
    ends.push(here.length);
  };
  const rest = () => here + todo.reverse().map((c) => "/" + c).join("");
  while (todo.length) {
    const c = todo.pop()!;
    if (c === "..") {
      if (out.length) {
        out.pop();
        ends.pop();
        here = here.slice(0, ends.at(-1) ?? 0);
        if (out.length <= missingFrom) missingFrom = Infinity;
      }
      continue;
    }
    if (out[0] === "proc") {
      if (out.length === 1 && c === "thread-self") {
        for (const x of ["self", "task", "thread-self"]) push(x);
        continue;
      }
      const view = (out.length === 2 || (out.length === 4 && out[2] === "task")) && PROCESS_VIEWS.includes(c);
      if (view) {
        push(c);
        return rest();
      }
      if (out.length === 1 && c !== "self" && missingFrom === Infinity) {
        // /proc's own links (net, mounts) lead into /proc/self
        const target = linkAt(`${here}/${c}`);
        if (typeof target === "string" && !target.startsWith("/") && ++links <= 40) {
          todo.push(...target.split("/").filter((x) => x !== "" && x !== ".").reverse());
          continue;
        }
      }
      push(c);
      continue;
    }
    const target = out.length < missingFrom ? linkAt(`${here}/${c}`) : null;
    if (target === undefined) {
      missingFrom = Math.min(missingFrom, out.length);
      push(c);
      continue;
    }
    if (target === null) {
      push(c);
      continue;
    }
    if (++links > 40) {
      push(c);
      return rest(); // a loop: leave it as written
    }
    if (target.startsWith("/")) {
      out.length = 0;
      ends.length = 0;
      here = "";
      missingFrom = Infinity;
    }
    todo.push(...target.split("/").filter((x) => x !== "" && x !== ".").reverse());
  }
  return here === "" ? "/" : here;
}

/** A symlink's target, null when the path is no symlink, undefined when it does not exist. */
function linkAt(path: string): string | null | undefined {
  diskOps++;
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : null;
  } catch {
    return undefined;
  }
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
 * The rule a list of absolute segments falls under, if any. `inRoot` says whether a directory
 * (given by its segments) is a longrun root; null means "assume it is" (free text).
 */
function ruleFor(segs: readonly Tok[][], access: Access | ((r: ProtectedRule) => boolean), inRoot: ((dir: string) => boolean) | null, dotglob: boolean): ProtectedRule | null {
  const folded = segs.map(foldTokens);
  // each segment's text once (null for a pattern), so a long path costs one pass per rule
  const texts = folded.map((seg) => (isLit(seg) ? segText(seg) : null));
  const matches = (k: number, names: readonly string[]) => {
    const t = texts[k];
    return names.includes("*") || (t !== null ? names.includes(t!) : names.some((n) => tokensMatch(folded[k]!, n, dotglob)));
  };
  for (const rule of PROTECTED) {
    if (access === "read" ? !rule.read : access !== "write" && !access(rule)) continue;
    const n = rule.segments.length;
    const last = rule.where === "absolute" ? 0 : folded.length - n;
    for (let i = 0; i <= last; i++) {
      if (i + n > folded.length) continue;
      if (!rule.segments.every((names, k) => matches(i + k, names))) continue;
      // the standard streams (/dev/stdout is /proc/self/fd/1) lead nowhere else
      if (rule.id === "process_paths" && segs.length === 4 && isLit(segs[2]!) && segText(segs[2]!) === "fd" && isLit(segs[3]!) && ["0", "1", "2"].includes(segText(segs[3]!))) continue;
      if (rule.where === "longrun_root" && inRoot) {
        const parent = segs.slice(0, i);
        if (parent.every(isLit) && !inRoot("/" + parent.map(segText).join("/"))) continue;
      }
      return rule;
    }
  }
  return null;
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
  const start = diskOps;
  const hit = unbudgetedPathHit(tokens, access, ctx, dotglob);
  if (!b) return hit;
  b.left -= diskOps - start;
  return hit ?? (b.left < 0 ? overBudget(textOfTokens(tokens)) : null);
}

const textOfTokens = (tokens: readonly Tok[]) => tokens.map((t) => (t.t === "c" ? t.c : "*")).join("");

function unbudgetedPathHit(tokens: readonly Tok[], access: Access, ctx: ProtectContext, dotglob: boolean): PathHit | null {
  const budgetStart = diskOps;
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
    diskOps++;
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
      diskOps += 4; // a match is resolved and compared like a named path: count its cost too
      if (ctx.budget && ctx.budget.left - (diskOps - budgetStart) < 0) return overBudget(shown);
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
      diskOps += names.length;
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

/** True when `name` (a command word's value) is longrun's executable by name or by real path. */
export function isLongrunProgram(name: string, ctx: ProtectContext): boolean {
  if (ctx.exeNames.includes(fold(basename(name)))) return true;
  if (!name.includes("/")) return false;
  const abs = name.startsWith("/") ? name : `${ctx.cwd}/${name}`;
  const real = resolveExisting(abs);
  return ctx.exePaths.some((p) => fold(p) === fold(real));
}

/**
 * A search glob (Grep's `glob`, Glob's `pattern`: matched at any depth) that names a protected
 * place: one of its segments, not a bare `*` or `**`, could be a protected name (`{.lo,x}ngrun`,
 * `raw_dat?`, `.*`).
 */
export function globNamesHit(tokens: readonly Tok[], access: Access): ProtectedRule | null {
  const { absolute, segs: raw } = segmentsOf(tokens);
  const segs = raw.map(foldTokens);
  for (const rule of PROTECTED) {
    if (access === "read" && !rule.read) continue;
    // an absolute pattern (`/proc/*/cwd/*`) meets the absolute rules at its start
    if (rule.where === "absolute" && !absolute) continue;
    const last = rule.where === "absolute" ? 0 : segs.length - rule.segments.length;
    for (let i = 0; i <= last && i + rule.segments.length <= segs.length; i++) {
      const window = segs.slice(i, i + rule.segments.length);
      if (!window.some((seg) => seg.some((t) => t.t === "c"))) continue; // only wildcards: too broad to mean it
      if (rule.segments.every((names, k) => canMatch(window[k]!, names, true))) return rule;
    }
  }
  return null;
}

/** Subcommands of longrun that an agent may run: they read, or print help. */
export const AGENT_SUBCOMMANDS = new Set(["status", "--version", "-v", "version", "--help", "-h", "help"]);

/** Text splits into path-like words at anything that is not a letter, digit, `.`, `_`, `-`, `/` or `~`. */
const TEXT_SPLIT = /[^\p{L}\p{N}._\-\/~]+/u;

/**
 * A scan of free text (inline code, heredoc bodies, a tool's string arguments) for protected
 * paths and longrun host commands. Text is not resolved on disk: a name is enough.
 */
export function textHit(text: string, access: Access, ctx: ProtectContext): string | null {
  const decoded = /%[0-9a-fA-F]{2}/.test(text) ? safeDecode(text) : text;
  if (decoded !== text) {
    const hit = textHit(decoded, access, ctx);
    if (hit) return hit;
  }
  const words = text.split(TEXT_SPLIT).filter(Boolean);
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const segs = segmentsOf(lit(w)).segs;
    const rule = ruleFor(segs, access, null, true);
    if (rule) return `${rule.what}: ${JSON.stringify(w)}`;
    if (access === "write" && ctx.exeNames.includes(fold(basename(w))) && !AGENT_SUBCOMMANDS.has(words[i + 1] ?? "")) {
      return `longrun's host-side commands: ${JSON.stringify(`${w} ${words[i + 1] ?? ""}`.trim())}`;
    }
  }
  return null;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
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
