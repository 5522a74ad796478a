/**
 * The protected places as the sandbox sees them: the gate's table (`PROTECTED` in
 * src/root/protected.ts) turned into paths relative to the directory they sit in (a longrun root,
 * a git directory, the home directory), each with what the boundary does there and what it puts in
 * place of one that does not exist yet. The names come from the gate's table; what a mount needs
 * and the table cannot say (file or directory, placeholder or not) and the few git files the
 * gate's parser never meets but git reads come from the root's layout (src/root/layout.ts).
 */
import { PROTECTED, type ProtectedRule } from "../root/protected.ts";
import { LAYOUT, type Placeholder } from "../root/layout.ts";

/**
 * What to do in lease mode (a writable root) where the path does not exist yet: put a read-only
 * placeholder there (bubblewrap creates the mount point, an empty `file` or `dir`, and leaves it
 * behind), leave it (`skip`: the command may create it), or let the command create it and remove
 * it afterwards (`remove_after`: an empty placeholder would break git).
 */
export type Absent = Placeholder;

export interface MaskEntry {
  /** Path relative to the directory the entry applies at, `/`-separated. */
  rel: string;
  /** `hide`: unreadable in both modes; `readonly`: writes refused (in read mode every write is). */
  access: "hide" | "readonly";
  absent: Absent;
  /** The gate's rule id, or `git_redirect` for the files below. */
  rule: string;
}

/** Placeholders a root gets in lease mode, so that a command cannot plant them (a forged WAL or journal would be replayed into memory.db). */
const ROOT_PLACEHOLDERS: Record<string, Absent> = Object.fromEntries(LAYOUT.filter((e) => e.placeholder && !e.rel.startsWith(".git/")).map((e) => [e.rel, e.placeholder!]));

/**
 * Inside a git directory: the gate's `.git/config` and `.git/hooks`, and what else makes git run
 * programs or read configuration from elsewhere (`commondir` points git at another directory's
 * config; `info/` holds attributes and excludes; `config.worktree` is read when the config asks).
 */
const GIT_EXTRA: readonly MaskEntry[] = LAYOUT.filter((e) => e.gitRedirect).map((e) => ({ rel: e.rel.slice(".git/".length), access: "readonly", absent: e.placeholder ?? "skip", rule: "git_redirect" }));
const GIT_PLACEHOLDERS: Record<string, Absent> = Object.fromEntries(LAYOUT.filter((e) => e.protect && e.placeholder && e.rel.startsWith(".git/")).map((e) => [e.rel.slice(".git/".length), e.placeholder!]));

/** Every path a rule's segments name, relative (`.git/config`, `.git/hooks`). */
function relPaths(rule: ProtectedRule): string[] {
  let out = [""];
  for (const names of rule.segments) out = out.flatMap((p) => names.map((n) => (p ? `${p}/${n}` : n)));
  return out;
}

const relative = PROTECTED.filter((r) => r.where !== "absolute").flatMap((r) => relPaths(r).map((rel) => ({ rule: r, rel })));

/** Entries at a longrun root (the lease's root, and any other root found): the gate's rules but git's. */
export const ROOT_ENTRIES: readonly MaskEntry[] = relative
  .filter(({ rel }) => !rel.startsWith(".git/"))
  .map(({ rule, rel }) => ({ rel, access: rule.read ? "hide" : "readonly", absent: ROOT_PLACEHOLDERS[rel] ?? "skip", rule: rule.id }));

/** Entries inside a git directory (`ROOT/.git`, and nested repositories found below the root). */
export const GIT_ENTRIES: readonly MaskEntry[] = [
  ...relative
    .filter(({ rel }) => rel.startsWith(".git/"))
    .map(({ rule, rel }): MaskEntry => {
      const inner = rel.slice(".git/".length);
      return { rel: inner, access: rule.read ? "hide" : "readonly", absent: GIT_PLACEHOLDERS[inner] ?? "skip", rule: rule.id };
    }),
  ...GIT_EXTRA,
];

/** The rule ids whose entries are longrun's own (hidden at every root found, even outside the lease). */
export const LONGRUN_RULES: ReadonlySet<string> = new Set(PROTECTED.filter((r) => r.read && r.where !== "absolute").map((r) => r.id));

/** In the home directory: Claude Code's login (not in the gate's table: the gate never lets a command name it, the sandbox hides it). */
export const HOME_HIDDEN: readonly string[] = [".claude/.credentials.json"];
