/**
 * A root's layout as one table: every file and directory longrun keeps in a root (and the few of
 * Claude Code's and git's it guards there or in the home directory), with one column per place
 * that used to restate it. Pure data: no I/O, no runtime imports.
 *
 * Columns, and who reads them:
 * - `name`: the key of its path in `ROOT_PATHS` (src/root/root.ts `rootPaths`, src/hooks/claude.ts,
 *   src/hooks/config.ts);
 * - `protect`: the gate's rule (`PROTECTED`, src/hooks/protect.ts) it is one of the names of; a
 *   rule's `segments` are built from its rows (`ruleSegments`);
 * - `deny`: Claude Code permission deny rules install writes (src/hooks/install.ts `denyRules`), in
 *   the project's forms and/or the home directory's (`~/`);
 * - `gitignore`: a line install adds to the root's `.gitignore` (and the sandbox to `.git/info/exclude`);
 * - `placeholder`: what the OS sandbox puts where it does not exist yet in lease mode
 *   (src/sandbox/layout.ts), and `gitRedirect`: a git file the gate's table lacks that the sandbox
 *   keeps read-only anyway;
 * - `inode`: its inode is protected against hard links (src/hooks/protect.ts `protectedInodes`);
 * - `known`: a tree walk (src/hooks/trees.ts) checks it at the root without walking there;
 *   `tracked`: the git pathspec, matched at any depth, that finds it tracked by a repository.
 *
 * Every row carries an example: a path relative to the root that the row covers (`match`), and a
 * near miss that none of its columns cover (`notMatch`); tests/hooks/layout_table.test.ts runs
 * them against each consumer.
 */

/**
 * What the sandbox does in lease mode where a path does not exist yet: a read-only placeholder
 * (`file`, `dir`), nothing (`skip`), or let the command create it and remove it afterwards
 * (`remove_after`: an empty placeholder would break git).
 */
export type Placeholder = "dir" | "file" | "skip" | "remove_after";

/** The names `ROOT_PATHS` gives the paths code opens. */
export type RootPathName = "longrun" | "state" | "pending" | "lock" | "settings" | "hooks" | "http" | "turnEnd" | "memoryDb" | "rawData";

export interface LayoutEntry {
  /** Path relative to the root (or, for home-only rows, the home directory), `/`-separated. */
  rel: string;
  kind: "dir" | "file";
  what: string;
  name?: RootPathName;
  protect?: string;
  /** Claude Code deny rules: `Tool(/glob)` and `Tool(//<root>/glob)` when `project`, `Tool(~/glob)` when `home`. */
  deny?: { tools: readonly ("Read" | "Edit")[]; glob: string; project: boolean; home: boolean };
  gitignore?: string;
  placeholder?: Placeholder;
  gitRedirect?: true;
  inode?: "root" | "home" | "both";
  known?: true;
  tracked?: string;
  example: { match: string; notMatch: string };
}

const READ_EDIT = ["Read", "Edit"] as const;
const EDIT = ["Edit"] as const;

/** Every entry of a root's layout. Order matters only for the lists derived from it (deny rules, .gitignore lines). */
export const LAYOUT: readonly LayoutEntry[] = [
  {
    rel: ".longrun", kind: "dir", what: "longrun's state, lock, settings and tokens", name: "longrun", protect: "longrun_state",
    deny: { tools: READ_EDIT, glob: ".longrun/**", project: true, home: false }, gitignore: ".longrun/", placeholder: "dir", known: true, tracked: ".longrun/**",
    example: { match: ".longrun/anything", notMatch: ".longrun.bak/anything" },
  },
  { rel: ".longrun/state.json", kind: "file", what: "task state of an older root (now in memory.db)", name: "state", inode: "root", example: { match: ".longrun/state.json", notMatch: "state.json" } },
  { rel: ".longrun/http.json", kind: "file", what: "the HTTP server's address and token", name: "http", inode: "root", example: { match: ".longrun/http.json", notMatch: "http.json" } },
  { rel: ".longrun/hooks.json", kind: "file", what: "the hook's settings", name: "hooks", inode: "root", example: { match: ".longrun/hooks.json", notMatch: "hooks.json" } },
  { rel: ".longrun/pending_checkpoint.json", kind: "file", what: "a checkpoint waiting to be saved", name: "pending", inode: "root", example: { match: ".longrun/pending_checkpoint.json", notMatch: "pending_checkpoint.json" } },
  { rel: ".longrun/lock", kind: "file", what: "the root's lock", name: "lock", inode: "root", example: { match: ".longrun/lock", notMatch: "lock" } },
  { rel: ".longrun/settings.json", kind: "file", what: "the root's own settings", name: "settings", example: { match: ".longrun/settings.json", notMatch: "settings.json" } },
  { rel: ".longrun/gate.sock", kind: "file", what: "the resident gate's socket (longrun hook gate; only when hooks.json turns it on)", example: { match: ".longrun/gate.sock", notMatch: "gate.sock" } },
  { rel: ".longrun/turn_end_pending", kind: "file", what: "word of a turn a Stop hook could not end", name: "turnEnd", example: { match: ".longrun/turn_end_pending", notMatch: "turn_end_pending" } },
  {
    rel: "memory.db", kind: "file", what: "the memory database", name: "memoryDb", protect: "longrun_memory",
    deny: { tools: READ_EDIT, glob: "memory.db*", project: true, home: false }, gitignore: "memory.db*", placeholder: "file", inode: "root", known: true, tracked: "memory.db*",
    example: { match: "memory.db", notMatch: "memory.sqlite" },
  },
  { rel: "memory.db-wal", kind: "file", what: "the memory database's write-ahead log", protect: "longrun_memory", placeholder: "file", inode: "root", example: { match: "memory.db-wal", notMatch: "src/memory.db-wal" } },
  { rel: "memory.db-shm", kind: "file", what: "the memory database's shared memory", protect: "longrun_memory", placeholder: "file", inode: "root", example: { match: "memory.db-shm", notMatch: "src/memory.db-shm" } },
  { rel: "memory.db-journal", kind: "file", what: "the memory database's rollback journal", protect: "longrun_memory", placeholder: "file", example: { match: "memory.db-journal", notMatch: "src/memory.db-journal" } },
  {
    rel: "raw_data", kind: "dir", what: "long memory bodies", name: "rawData", protect: "longrun_raw",
    deny: { tools: READ_EDIT, glob: "raw_data/**", project: true, home: false }, gitignore: "raw_data/", placeholder: "dir", known: true, tracked: "raw_data/**",
    example: { match: "raw_data/body.txt", notMatch: "raw_data.txt" },
  },
  {
    rel: ".claude", kind: "dir", what: "Claude Code's settings, hooks and commands", protect: "claude_settings", placeholder: "dir", known: true, tracked: ".claude/**",
    example: { match: ".claude/agents/x.md", notMatch: "claude/agents/x.md" },
  },
  { rel: ".claude/settings.json", kind: "file", what: "Claude Code's shared settings", deny: { tools: EDIT, glob: ".claude/settings.json", project: true, home: true }, inode: "both", example: { match: ".claude/settings.json", notMatch: "claude/settings.json" } },
  { rel: ".claude/settings.local.json", kind: "file", what: "Claude Code's personal settings (longrun's hooks)", deny: { tools: EDIT, glob: ".claude/settings.local.json", project: true, home: true }, inode: "root", example: { match: ".claude/settings.local.json", notMatch: "claude/settings.local.json" } },
  { rel: ".claude/commands/approve.md", kind: "file", what: "the /approve command only the user can run", deny: { tools: EDIT, glob: ".claude/commands/approve.md", project: true, home: false }, example: { match: ".claude/commands/approve.md", notMatch: "claude/commands/approve.md" } },
  {
    rel: ".claude.json", kind: "file", what: "Claude Code's user configuration (in the home directory)", protect: "claude_json", deny: { tools: EDIT, glob: ".claude.json", project: false, home: true }, inode: "home", tracked: ".claude.json",
    example: { match: ".claude.json", notMatch: ".claude.jsonc" },
  },
  { rel: ".git/config", kind: "file", what: "git's configuration", protect: "git_config", placeholder: "file", example: { match: ".git/config", notMatch: ".git/HEAD" } },
  { rel: ".git/hooks", kind: "dir", what: "git's hooks", protect: "git_config", placeholder: "dir", example: { match: ".git/hooks/pre-commit", notMatch: ".git/HEAD" } },
  { rel: ".git/config.worktree", kind: "file", what: "git's per-worktree configuration", placeholder: "skip", gitRedirect: true, example: { match: ".git/config.worktree", notMatch: ".git/HEAD" } },
  { rel: ".git/commondir", kind: "file", what: "where git finds another directory's configuration", placeholder: "remove_after", gitRedirect: true, example: { match: ".git/commondir", notMatch: ".git/HEAD" } },
  { rel: ".git/info", kind: "dir", what: "git's attributes and excludes", placeholder: "dir", gitRedirect: true, example: { match: ".git/info/exclude", notMatch: ".git/HEAD" } },
];

function pathsByName(): Readonly<Record<RootPathName, string>> {
  const out: Partial<Record<RootPathName, string>> = {};
  for (const e of LAYOUT) if (e.name) out[e.name] = e.rel;
  return out as Record<RootPathName, string>;
}

/** The paths code opens, relative to the root: `ROOT_PATHS.memoryDb` is `memory.db`. */
export const ROOT_PATHS: Readonly<Record<RootPathName, string>> = pathsByName();

/**
 * The `segments` of a protected rule: one set of names per path segment, from the rule's rows
 * (`.git/config` and `.git/hooks` give `[[".git"], ["config", "hooks"]]`).
 */
export function ruleSegments(rule: string): string[][] {
  const out: string[][] = [];
  for (const e of LAYOUT) {
    if (e.protect !== rule) continue;
    e.rel.split("/").forEach((name, k) => {
      const names = (out[k] ??= []);
      if (!names.includes(name)) names.push(name);
    });
  }
  return out;
}

/** The lines install adds to a root's `.gitignore`. */
export const GITIGNORE_LINES: readonly string[] = LAYOUT.flatMap((e) => (e.gitignore ? [e.gitignore] : []));

/**
 * Claude Code permission deny rules for the root `root` (absolute): `/x` is relative to the project
 * (the settings file's source), `//x` is absolute, `~/x` is in the home directory.
 */
export function layoutDenyRules(root: string): string[] {
  const rules: string[] = [];
  for (const form of ["/", `/${root}/`]) {
    for (const e of LAYOUT) if (e.deny?.project) for (const tool of e.deny.tools) rules.push(`${tool}(${form}${e.deny.glob})`);
  }
  for (const e of LAYOUT) if (e.deny?.home) for (const tool of e.deny.tools) rules.push(`${tool}(~/${e.deny.glob})`);
  return rules;
}

/** Files whose inode is protected (a hard link to one is one of them), under the root and the home directory. */
export function inodeFiles(root: string, home: string): string[] {
  return LAYOUT.flatMap((e) => [
    ...(e.inode === "root" || e.inode === "both" ? [`${root}/${e.rel}`] : []),
    ...(e.inode === "home" || e.inode === "both" ? [`${home}/${e.rel}`] : []),
  ]);
}
