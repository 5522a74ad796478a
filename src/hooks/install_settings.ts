/**
 * What install writes into a root's `.claude/settings.local.json`, as pure functions of the
 * settings found there: longrun's hooks (from the events table, src/hooks/events.ts), the
 * permission deny rules and the one allow rule, and Claude Code's Bash sandbox with every
 * protected path denied; and the same taken out again, leaving every other setting as it was.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { layoutDenyRules } from "../root/layout.ts";
import { GIT_ENTRIES } from "../sandbox/layout.ts";
import { CLAUDE_EVENTS, type ClaudeEvent, eventColumn, eventRow } from "./events.ts";
import { PROTECTED } from "./protect_table.ts";

const MARK = " hook claude ";

/** Seconds Claude Code waits for each hook; each answers on its own well before (the events table's `deadlineMs`). */
export const HOOK_TIMEOUTS: Readonly<Record<ClaudeEvent, number>> = eventColumn("timeoutSeconds");

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_\/.:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function hookCommand(self: string[], event: ClaudeEvent, root: string): string {
  return [...self, "hook", "claude", event, "--root", root].map(shellQuote).join(" ");
}

type HookEntry = { type: string; command: string; timeout?: number; onFailure?: string };
type Group = { matcher?: string; hooks: HookEntry[] };

/** One protected path of a root, as the sandbox is told to deny it. */
export interface ProtectedPath {
  path: string;
  /** The `PROTECTED` rule it comes from (`longrun_state`, `claude_settings`, …), or `longrun_exe`. */
  rule: string;
  what: string;
  /** Reading is denied too, not only writing. */
  read: boolean;
}

/**
 * The protected paths of `root` as concrete paths, from the one table (`PROTECTED`): rules that
 * hold directly inside a longrun root under `root`; rules that hold anywhere under `root` and the
 * home directory; longrun's executable. The `/proc` rules are left out: the sandbox mounts a /proc
 * of its own (a new PID namespace) in which no other process is visible.
 */
export function protectedPaths(root: string, exe: string | null, home = homedir()): ProtectedPath[] {
  const out: ProtectedPath[] = [];
  const seen = new Set<string>();
  for (const rule of PROTECTED) {
    if (rule.where === "absolute") continue;
    let rels: string[] = [""];
    for (const names of rule.segments) rels = rels.flatMap((r) => names.filter((n) => n !== "*").map((n) => (r ? `${r}/${n}` : n)));
    for (const base of rule.where === "longrun_root" ? [root] : [root, home]) {
      for (const rel of rels) {
        const path = join(base, rel);
        if (seen.has(path)) continue;
        seen.add(path);
        out.push({ path, rule: rule.id, what: rule.what, read: rule.read });
      }
    }
  }
  // what else makes git run programs or read another configuration (the sandbox's own layout)
  for (const e of GIT_ENTRIES) {
    const path = join(root, ".git", e.rel);
    if (e.rule !== "git_redirect" || seen.has(path)) continue;
    seen.add(path);
    out.push({ path, rule: e.rule, what: "git's configuration from elsewhere (commondir, info/, config.worktree)", read: false });
  }
  if (exe && !seen.has(exe)) out.push({ path: exe, rule: "longrun_exe", what: "longrun's own executable", read: false });
  return out;
}

/**
 * Claude Code permission deny rules, from the root's layout (src/root/layout.ts): `/x` is relative
 * to the project (the settings file's source), `//x` is absolute. A Read deny also covers Grep and
 * Glob; Edit covers every file tool.
 */
export function denyRules(root: string): string[] {
  return layoutDenyRules(root);
}

/** Paths the sandbox keeps from every Bash command and its children: every protected path from writes, the secret ones from reads too. */
export function sandboxPaths(root: string, exe: string | null, home = homedir()): { denyWrite: string[]; denyRead: string[] } {
  const all = protectedPaths(root, exe, home);
  return { denyWrite: all.map((p) => p.path), denyRead: all.filter((p) => p.read).map((p) => p.path) };
}

/** Paths earlier versions of install added (taken out again by install and uninstall). */
function legacySandboxPaths(home = homedir()): string[] {
  return [join(home, ".claude", "settings.json")];
}

const isOurs = (h: { command?: unknown }) => typeof h.command === "string" && h.command.includes(MARK);

/**
 * `settings` with longrun's hooks, deny rules and sandbox for `root` in place of any earlier ones.
 * `osSandbox: false` (installed with --without-os-sandbox where the sandbox cannot run) leaves
 * `failIfUnavailable` off, else Claude Code would refuse to start at all.
 */
export function withLongrunHooks(settings: Record<string, unknown>, self: string[], root: string, osSandbox = true): Record<string, unknown> {
  const base = withoutLongrun(settings, root, self);
  const hooks = { ...((base.hooks as Record<string, Group[]> | undefined) ?? {}) };
  for (const event of CLAUDE_EVENTS) {
    const { matcher, blocking } = eventRow(event);
    const entry: HookEntry = { type: "command", command: hookCommand(self, event, root), timeout: HOOK_TIMEOUTS[event] };
    // the gate and the turn boundary: a hook that cannot answer blocks instead of letting the call through
    if (blocking) entry.onFailure = "block";
    hooks[event] = [...(hooks[event] ?? []), { ...(matcher !== undefined ? { matcher } : {}), hooks: [entry] }];
  }
  const permissions = { ...((base.permissions as Record<string, unknown> | undefined) ?? {}) };
  const deny = Array.isArray(permissions.deny) ? (permissions.deny as unknown[]) : [];
  permissions.deny = [...deny, ...denyRules(root).filter((r) => !deny.includes(r))];
  const allow = Array.isArray(permissions.allow) ? (permissions.allow as unknown[]) : [];
  permissions.allow = [...allow, ...allowRules(self).filter((r) => !allow.includes(r))];
  const sandbox = { ...((base.sandbox as Record<string, unknown> | undefined) ?? {}) };
  const fs = { ...((sandbox.filesystem as Record<string, unknown> | undefined) ?? {}) };
  const paths = sandboxPaths(root, compiledExe(self));
  for (const key of ["denyWrite", "denyRead"] as const) {
    const have = Array.isArray(fs[key]) ? (fs[key] as unknown[]) : [];
    fs[key] = [...have, ...paths[key].filter((p) => !have.includes(p))];
  }
  const network = { ...((sandbox.network as Record<string, unknown> | undefined) ?? {}) };
  // no domain a sandboxed command may reach without asking (the user's own list is kept)
  if (!Array.isArray(network.allowedDomains)) network.allowedDomains = [];
  sandbox.enabled = true;
  sandbox.failIfUnavailable = osSandbox;
  sandbox.allowUnsandboxedCommands = false;
  sandbox.autoAllowBashIfSandboxed = false;
  sandbox.filesystem = fs;
  sandbox.network = network;
  return { ...base, hooks, permissions, sandbox };
}

/** `settings` with everything longrun added for `root` taken out again (hooks, rules, sandbox paths). */
export function withoutLongrun(settings: Record<string, unknown>, root: string, self: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...settings };
  if (settings.hooks && typeof settings.hooks === "object") {
    const hooks: Record<string, Group[]> = {};
    for (const [event, groups] of Object.entries(settings.hooks as Record<string, Group[]>)) {
      const kept = (Array.isArray(groups) ? groups : []).filter((g) => !g.hooks?.some(isOurs));
      if (kept.length) hooks[event] = kept;
    }
    out.hooks = hooks;
  }
  if (settings.permissions && typeof settings.permissions === "object") {
    const p = { ...(settings.permissions as Record<string, unknown>) };
    if (Array.isArray(p.deny)) {
      const ours = new Set(denyRules(root));
      p.deny = (p.deny as unknown[]).filter((r) => !(typeof r === "string" && ours.has(r)));
    }
    if (Array.isArray(p.allow)) {
      const ours = new Set(allowRules(self));
      const kept = (p.allow as unknown[]).filter((r) => !(typeof r === "string" && ours.has(r)));
      if (kept.length) p.allow = kept;
      else delete p.allow;
    }
    out.permissions = p;
  }
  if (settings.sandbox && typeof settings.sandbox === "object") {
    const s = { ...(settings.sandbox as Record<string, unknown>) };
    if (s.filesystem && typeof s.filesystem === "object") {
      const fs = { ...(s.filesystem as Record<string, unknown>) };
      const ours = sandboxPaths(root, compiledExe(self));
      const legacy = legacySandboxPaths();
      for (const key of ["denyWrite", "denyRead"] as const) {
        if (Array.isArray(fs[key])) fs[key] = (fs[key] as unknown[]).filter((x) => !(typeof x === "string" && (ours[key].includes(x) || legacy.includes(x))));
      }
      s.filesystem = fs;
    }
    out.sandbox = s;
  }
  return out;
}

/**
 * The one allow rule install adds: longrun's read-only sandbox, the form a read-only Bash command
 * is rewritten to by the gate. Claude Code judges the rewritten command, so without it every
 * read-only command would ask; with it, they run, confined by the kernel to reading. The gate
 * refuses a command the model writes that starts with longrun itself, so the model cannot use the
 * rule for a command of its own. Commands under a lease (`--mode lease`) get no rule: Claude Code
 * asks as it would have for the command itself.
 */
export function allowRules(self: string[]): string[] {
  const exe = compiledExe(self);
  return exe ? [`Bash(${exe} sandbox --mode read:*)`] : [];
}

/** The executable to protect: the compiled binary itself (not a runtime running the sources). */
export function compiledExe(self: string[]): string | null {
  return self.length === 1 ? self[0]! : null;
}
