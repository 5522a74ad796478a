/**
 * `longrun hook install claude [--root DIR]` and `longrun hook uninstall claude [--root DIR]`.
 *
 * Install lays out the root, then writes into `DIR/.claude/settings.local.json` (personal, not the
 * shared settings.json), keeping every other setting and hook there and replacing only earlier
 * longrun entries (running it twice changes nothing):
 * - the hooks, with timeouts, and `onFailure: "block"` on the two that gate (a hook that cannot
 *   start, crashes or times out then blocks instead of letting the call through; Claude Code
 *   2.1.295 and later);
 * - permission deny rules for longrun's files (project-relative and absolute forms);
 * - Claude Code's Bash sandbox, with the protected paths (`PROTECTED`, src/hooks/protect.ts)
 *   denied to every sandboxed command and its children (the operating-system boundary behind the
 *   hook's best-effort parsing), `failIfUnavailable` (Claude Code refuses to start rather than run
 *   Bash unsandboxed), no way for a command to leave the sandbox, no allowed network domains, and
 *   no automatic approval of sandboxed commands;
 * and adds `.claude/commands/approve.md` (so a prompt starting with /approve is a real command the
 * model cannot invoke) and longrun's files to `.gitignore`. It then runs each hook once, in a
 * scratch root, to prove it answers. Uninstall removes what install added.
 *
 * On Linux the sandbox needs bubblewrap (working) and socat: without them install refuses (exit 2,
 * nothing written) unless `--without-os-sandbox` accepts best-effort protection, loudly.
 */
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, unlinkSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { resolveRoot } from "../root/root.ts";
import { selfArgv } from "../runtime/index.ts";
import { sandboxStatus } from "../sandbox/status.ts";
import { writeFileAtomic } from "../store/atomic.ts";
import { DEFAULT_MARKER } from "../core/approval.ts";
import { CLAUDE_EVENTS, type ClaudeEvent, eventColumn, HOOK_EVENTS, type HookEvent } from "./events.ts";
import { loadHookConfig } from "./config.ts";
import { GIT_ENTRIES } from "../sandbox/layout.ts";
import { PROTECTED } from "./protect.ts";
import { GITIGNORE_LINES, layoutDenyRules } from "../root/layout.ts";

const MARK = " hook claude ";

/** Seconds Claude Code waits for each hook; each answers on its own well before (the events table's `deadlineMs`). */
export const HOOK_TIMEOUTS: Readonly<Record<ClaudeEvent, number>> = eventColumn("timeoutSeconds");

const row = (event: ClaudeEvent): HookEvent => HOOK_EVENTS[event];

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
    const { matcher, blocking } = row(event);
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
function compiledExe(self: string[]): string | null {
  return self.length === 1 ? self[0]! : null;
}

export const APPROVE_COMMAND_MARK = "<!-- installed by longrun hook install -->";

/** `.claude/commands/approve.md`: makes `/approve …` a real command that only the user can run. */
export function approveCommand(marker = DEFAULT_MARKER): string {
  return [
    "---",
    "description: Approve file writes for this turn only (longrun write lease)",
    "argument-hint: [scope=src/**,docs/**] [ttl=10m] [uses=3] what to do",
    "disable-model-invocation: true",
    "---",
    APPROVE_COMMAND_MARK,
    `The user approved writes for this turn with ${marker} (longrun grants the lease; it ends with the turn). The user's instruction: $ARGUMENTS`,
    "",
  ].join("\n");
}

/** The block install adds to a root's .gitignore: a comment, then the layout's lines. */
export const GITIGNORE_BLOCK = ["# longrun: state, tokens and memory (memory holds the user's words verbatim)", ...GITIGNORE_LINES];

function addToGitignore(root: string): string[] {
  const file = join(root, ".gitignore");
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOENT") throw e;
  }
  const have = new Set(text.split(/\r?\n/).map((l) => l.trim()));
  const missing = GITIGNORE_BLOCK.slice(1).filter((l) => !have.has(l) && !have.has("/" + l));
  if (missing.length === 0) return [];
  const add = (text && !text.endsWith("\n") ? "\n" : "") + [GITIGNORE_BLOCK[0], ...missing].join("\n") + "\n";
  writeFileAtomic(file, text + add);
  return missing;
}

function runOnce(argv: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

function readSettings(file: string): Record<string, unknown> | string {
  try {
    const v = JSON.parse(readFileSync(file, "utf8"));
    if (typeof v !== "object" || v === null || Array.isArray(v)) return `${file} does not hold a JSON object; fix it first, nothing was changed`;
    return v as Record<string, unknown>;
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return {};
    return `${file} exists but is not valid JSON (${(e as Error).message}); fix it first, nothing was changed`;
  }
}

/** The executable `program` on `path` (the first one, as a shell finds it), or null. */
export function onPath(program: string, path = process.env.PATH ?? ""): string | null {
  for (const d of path.split(":")) {
    if (!d.startsWith("/")) continue;
    const p = join(d, program);
    try {
      if (statSync(p).isFile()) {
        accessSync(p, constants.X_OK);
        return p;
      }
    } catch {
      // not here
    }
  }
  return null;
}

/** What Claude Code's sandbox needs on this machine, as found. */
export interface OsSandboxFacts {
  platform: string;
  /** bubblewrap on PATH (Linux), or null. */
  bwrap: string | null;
  /** A probe with the sandbox's namespaces ran and exited 0 (a kernel or container may forbid them). */
  bwrapWorks: boolean;
  /** Why it did not work, in a few words. */
  bwrapError: string | null;
  socat: string | null;
}

/**
 * Looks for the sandbox's prerequisites: on Linux a bubblewrap that can set up its namespaces
 * (`sandboxStatus()`, the probe `longrun sandbox` uses, src/sandbox/status.ts) and `socat` on PATH;
 * macOS has Seatbelt built in.
 */
export function osSandboxFacts(env: Record<string, string | undefined> = process.env, platform: string = process.platform): OsSandboxFacts {
  const facts: OsSandboxFacts = { platform, bwrap: null, bwrapWorks: false, bwrapError: null, socat: null };
  if (platform !== "linux") return facts;
  const status = sandboxStatus(env);
  facts.bwrap = status.path;
  facts.bwrapWorks = status.available;
  facts.bwrapError = status.available ? null : status.reason;
  facts.socat = onPath("socat", env.PATH);
  return facts;
}

/** What the sandbox lacks on this machine, one phrase each; empty when Claude Code can sandbox Bash. */
export function osSandboxMissing(f: OsSandboxFacts): string[] {
  if (f.platform === "darwin") return [];
  if (f.platform !== "linux") return [`Claude Code has no command sandbox on ${f.platform}`];
  const missing: string[] = [];
  if (!f.bwrap) missing.push("bwrap (bubblewrap) is not on PATH");
  else if (!f.bwrapWorks) missing.push(`${f.bwrap} cannot create its sandbox (${f.bwrapError})`);
  if (!f.socat) missing.push("socat is not on PATH");
  return missing;
}

const INSTALL_HINT = "apt-get install bubblewrap socat";

/**
 * Why the executable the hooks will run is in a place that may not last (a temporary, virtual
 * environment or build directory), or null. A hook whose program is gone fails, and Claude Code
 * then blocks every tool call.
 */
export function unstableExeReason(exe: string, tmp = tmpdir()): string | null {
  let tmpReal = tmp;
  try {
    tmpReal = realpathSync(tmp);
  } catch {
    // as given
  }
  for (const t of new Set([tmp, tmpReal, "/tmp", "/var/tmp", "/dev/shm"])) if (exe.startsWith(t.replace(/\/+$/, "") + "/")) return "a temporary directory";
  const segs = exe.split("/");
  if (segs.some((s) => s === "site-packages" || s === "dist-packages" || s === ".venv" || s === "venv" || s === "virtualenvs")) return "a Python virtual environment";
  if (segs.some((s) => s === "node_modules")) return "node_modules";
  if (segs.slice(0, -1).some((s) => s === "dist" || s === "build" || s === "target" || s === "out" || s === "_build")) return "a build directory";
  return null;
}

/** The root's real path, or null after saying on stderr why it is not one. */
function rootOrReport(rootArg: string): string | null {
  try {
    return resolveRoot(rootArg);
  } catch (e) {
    process.stderr.write(`longrun: ${(e as Error).message}\n`);
    return null;
  }
}

export interface InstallOptions {
  /** Install even where Claude Code's sandbox cannot run (protection is then best effort), with a loud warning. */
  withoutOsSandbox?: boolean;
}

export async function installClaudeHooks(rootArg: string, options: InstallOptions = {}): Promise<number> {
  const root = rootOrReport(rootArg);
  if (root === null) return 2;
  const dir = join(root, ".claude");
  const file = join(dir, "settings.local.json");
  const settings = readSettings(file);
  if (typeof settings === "string") {
    process.stderr.write(`longrun: ${settings}\n`);
    return 1;
  }
  // before anything is written: without its prerequisites Claude Code runs every command unsandboxed
  const missing = osSandboxMissing(osSandboxFacts());
  if (missing.length && !options.withoutOsSandbox) {
    process.stderr.write(
      `longrun: Claude Code's sandbox cannot run here (${missing.join("; ")}): install them (${INSTALL_HINT}) and run this again, ` +
        "or pass --without-os-sandbox to install with best-effort protection only; nothing was written\n",
    );
    return 2;
  }
  // The root's files must exist before the sandbox can deny them.
  const { Root } = await import("../root/root.ts");
  await (await Root.open(root, { searchInWorker: false })).close();
  const self = selfArgv();
  mkdirSync(join(dir, "commands"), { recursive: true });
  writeFileAtomic(file, JSON.stringify(withLongrunHooks(settings, self, root, missing.length === 0), null, 2) + "\n");
  process.stdout.write(`wrote longrun hooks, deny rules and sandbox settings for ${root} into ${file}\n`);
  let marker: string;
  try {
    marker = loadHookConfig(root).approve_marker;
  } catch (e) {
    process.stderr.write(`longrun: ${(e as Error).message}; fix it and install again\n`);
    return 1;
  }
  const command = join(dir, "commands", `${marker.slice(1)}.md`);
  writeFileAtomic(command, approveCommand(marker));
  process.stdout.write(`wrote ${command} (${marker} is a command only the user can run)\n`);
  const ignored = addToGitignore(root);
  if (ignored.length) process.stdout.write(`added ${ignored.join(" ")} to ${join(root, ".gitignore")}\n`);
  if (missing.length) {
    process.stderr.write(
      `longrun: WARNING: installed WITHOUT the operating-system sandbox (${missing.join("; ")}): Claude Code runs Bash unsandboxed and longrun's files are protected ` +
        `by the hook's parsing alone, best effort; install them (${INSTALL_HINT}) and run longrun hook install claude again\n`,
    );
  }
  const exe = compiledExe(self);
  const unstable = exe ? unstableExeReason(exe) : null;
  if (exe && unstable) {
    process.stderr.write(
      `longrun: warning: the hooks run ${exe}, which lies in ${unstable}; if it moves or is removed every hook fails and Claude Code blocks every tool call: ` +
        "put longrun in a lasting place (install.sh, or ~/.local/bin) and install again from there\n",
    );
  }

  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "longrun-hook-check-")));
  let failed = 0;
  try {
    for (const event of CLAUDE_EVENTS) {
      const r = await runOnce([...self, "hook", "claude", event, "--root", scratch], JSON.stringify({ ...row(event).sample, cwd: scratch }));
      let ok = r.code === 0;
      let answer = "";
      try {
        const out = r.stdout.trim() ? JSON.parse(r.stdout) : {};
        const decision = out.hookSpecificOutput?.permissionDecision;
        answer = decision ? `${decision}` : "answered";
        const wanted = row(event).sampleDecision;
        if (wanted) ok &&= decision === wanted; // the gate's sample, a write with no task and no lease, must be refused
      } catch {
        ok = false;
        answer = `not JSON: ${r.stdout.slice(0, 80)}`;
      }
      if (!ok) failed++;
      process.stdout.write(`  ${ok ? "ok  " : "FAIL"} ${event}: ${answer}${r.stderr ? ` (${r.stderr.trim().split("\n").at(-1)})` : ""}\n`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  if (failed) {
    process.stderr.write(`longrun: ${failed} hook(s) did not answer as expected\n`);
    return 1;
  }
  process.stdout.write(`all ${CLAUDE_EVENTS.length} hooks answer; approve writes for one turn by starting a line of your prompt with ${marker}\n`);
  return 0;
}

export function uninstallClaudeHooks(rootArg: string): number {
  const root = rootOrReport(rootArg);
  if (root === null) return 2;
  const file = join(root, ".claude", "settings.local.json");
  const settings = readSettings(file);
  if (typeof settings === "string") {
    process.stderr.write(`longrun: ${settings}\n`);
    return 1;
  }
  if (existsSync(file)) {
    writeFileAtomic(file, JSON.stringify(withoutLongrun(settings, root, selfArgv()), null, 2) + "\n");
    process.stdout.write(`removed longrun's hooks, deny rules and sandbox paths from ${file} (the sandbox itself stays as it is)\n`);
  }
  let marker = DEFAULT_MARKER;
  try {
    marker = loadHookConfig(root).approve_marker;
  } catch {
    // a broken hooks.json: the default name
  }
  const command = join(root, ".claude", "commands", `${marker.slice(1)}.md`);
  try {
    if (readFileSync(command, "utf8").includes(APPROVE_COMMAND_MARK)) {
      unlinkSync(command);
      process.stdout.write(`removed ${command}\n`);
    }
  } catch {
    // not there
  }
  process.stdout.write("longrun's files (.longrun/, memory.db, raw_data/) and .gitignore lines are left in place: they hold your task and memory\n");
  return 0;
}
