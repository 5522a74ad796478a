/**
 * `longrun doctor`'s judgement, pure: given the facts gathered about a machine and a root (src/cli/doctor.ts
 * gathers them), which protections the operating system enforces right now and which rest on the
 * hook's parsing. No I/O here.
 */

/** The Claude Code events longrun installs hooks for (src/hooks/claude.ts `CLAUDE_EVENTS`). */
export type HookEvent = string;

/** What `hook install` put into settings.local.json for one root, read back. */
export interface HookFacts {
  /** Events with a longrun hook for this root. */
  installed: HookEvent[];
  /** Events without one. */
  missing: HookEvent[];
  /** The programs those hooks run (the first word of each command), each once. */
  programs: string[];
  /** Those run as `<program> hook claude …` (a compiled longrun, not a runtime running its sources). */
  direct: string[];
}

export interface ProgramFacts {
  path: string;
  exists: boolean;
  executable: boolean;
  /** The first line `PROGRAM --version` printed (a longrun run directly); null when it did not answer so; undefined when not asked. */
  version?: string | null;
  /** Why the program's place may not last (a virtual environment, a temporary or a build directory), or null. */
  unstable?: string | null;
}

/** A file holding the HTTP server's tokens: the root's `.longrun/http.json`, or one a `LONGRUN_*_TOKEN_FILE` variable names. */
export interface TokenFileFacts {
  /** `.longrun/http.json`, or the variable that names it. */
  source: string;
  path: string;
  exists: boolean;
  /** Its permission bits; null when it could not be looked at. */
  mode: number | null;
}

export interface SandboxSettingsFacts {
  enabled: unknown;
  failIfUnavailable: unknown;
  allowUnsandboxedCommands: unknown;
  denyWrite: string[];
  denyRead: string[];
}

export interface ProtectedPathFacts {
  path: string;
  rule: string;
  what: string;
  /** Reading is to be denied too. */
  read: boolean;
}

export interface DoctorFacts {
  root: string;
  /** The home directory (to show paths under it as `~/…`). */
  home: string;
  platform: string;
  /** Linux: bubblewrap on PATH and whether it can set up its namespaces (src/sandbox/status.ts's probe). */
  bwrap: { path: string | null; works: boolean; error: string | null };
  socat: string | null;
  settingsFile: string;
  /** Why the settings file could not be read as JSON; null when it was read (or is absent). */
  settingsError: string | null;
  hooks: HookFacts;
  programs: ProgramFacts[];
  sandbox: SandboxSettingsFacts;
  paths: ProtectedPathFacts[];
  /** The Landlock ABI version (Linux, under Bun); null when unavailable, undefined when not looked up. */
  landlockAbi?: number | null;
  /** This longrun, as `--version` says it (`longrun 0.1.0 (linux-x64, commit …)`). */
  version?: string;
  /** The HTTP server's token files found or named (undefined: not looked at). */
  tokens?: TokenFileFacts[];
}

export type Enforcement = "os" | "hook" | "none";

export interface DoctorCheck {
  id: string;
  ok: boolean;
  /** One line for a person, without the status word. */
  line: string;
}

export interface DoctorPath extends ProtectedPathFacts {
  enforcement: Enforcement;
}

export interface DoctorReport {
  /** Every protection is OS-enforced (exit 0); else exit 1. */
  ok: boolean;
  root: string;
  platform: string;
  checks: DoctorCheck[];
  paths: DoctorPath[];
  landlock_abi: number | null | undefined;
  /** This longrun's version line (null when not known). */
  version: string | null;
  /** The report as printed: one line per check and per protection (a rule of the table), then a summary line. */
  lines: string[];
}

const ENFORCEMENT_TEXT: Record<Enforcement, string> = {
  os: "OS-enforced (sandbox)",
  hook: "best effort (hook parser)",
  none: "not protected (no longrun hooks installed)",
};

const RANK: Record<Enforcement, number> = { none: 0, hook: 1, os: 2 };

/** Paths as a person reads them: relative to the root, `~/…` under home; names in both written once, "(root and ~)". */
function shownPaths(paths: readonly string[], root: string, home: string): string {
  const inRoot: string[] = [];
  const inHome: string[] = [];
  const other: string[] = [];
  for (const p of paths) {
    if (p.startsWith(root + "/")) inRoot.push(p.slice(root.length + 1));
    else if (home && p.startsWith(home + "/")) inHome.push(p.slice(home.length + 1));
    else other.push(p);
  }
  const both = inRoot.filter((r) => inHome.includes(r));
  const parts = [
    ...(both.length ? [`${both.join(", ")} (root and ~)`] : []),
    ...inRoot.filter((r) => !both.includes(r)),
    ...inHome.filter((h) => !both.includes(h)).map((h) => `~/${h}`),
    ...other,
  ];
  return parts.join(", ");
}

/** One line per protection (a rule of the table): its paths, and the weakest enforcement among them. */
function ruleLines(paths: readonly DoctorPath[], root: string, home: string): { ok: boolean; line: string }[] {
  const byRule = new Map<string, DoctorPath[]>();
  for (const p of paths) byRule.set(p.rule, [...(byRule.get(p.rule) ?? []), p]);
  return [...byRule.values()].map((ps) => {
    const weakest = ps.reduce((w, p) => (RANK[p.enforcement] < RANK[w] ? p.enforcement : w), "os" as Enforcement);
    const shown = shownPaths(ps.map((p) => p.path), root, home);
    return { ok: weakest === "os", line: `${weakest === "os" ? "ok  " : "FAIL"}  ${ps[0]!.what}, ${ps[0]!.read ? "reads and writes" : "writes"}: ${shown}: ${ENFORCEMENT_TEXT[weakest]}` };
  });
}

export const INSTALL_HINT = "apt-get install bubblewrap socat";

/** The checks of the machine's sandbox (Linux: bubblewrap and socat; macOS: Seatbelt). */
function machineChecks(f: DoctorFacts): DoctorCheck[] {
  if (f.platform === "darwin") return [{ id: "seatbelt", ok: true, line: "Seatbelt: built into macOS (Claude Code's sandbox needs nothing else)" }];
  if (f.platform !== "linux") return [{ id: "os_sandbox", ok: false, line: `Claude Code has no command sandbox on ${f.platform}` }];
  const bw: DoctorCheck = !f.bwrap.path
    ? { id: "bubblewrap", ok: false, line: `bubblewrap: bwrap is not on PATH (${INSTALL_HINT})` }
    : f.bwrap.works
      ? { id: "bubblewrap", ok: true, line: `bubblewrap: ${f.bwrap.path} works` }
      : { id: "bubblewrap", ok: false, line: `bubblewrap: ${f.bwrap.path} cannot create its sandbox (${f.bwrap.error ?? "its probe failed"})` };
  const socat: DoctorCheck = f.socat ? { id: "socat", ok: true, line: `socat: ${f.socat}` } : { id: "socat", ok: false, line: `socat: not on PATH (${INSTALL_HINT}); Claude Code's sandbox needs it for its network proxy` };
  return [bw, socat];
}

function hookCheck(f: DoctorFacts): DoctorCheck {
  const install = `longrun hook install claude --root ${f.root}`;
  if (f.settingsError) return { id: "hooks", ok: false, line: `hooks: ${f.settingsFile} cannot be read (${f.settingsError})` };
  const { installed, missing } = f.hooks;
  if (installed.length === 0) return { id: "hooks", ok: false, line: `hooks: not installed in ${f.settingsFile} (run ${install})` };
  if (missing.length) return { id: "hooks", ok: false, line: `hooks: ${installed.length} of ${installed.length + missing.length} installed, missing ${missing.join(", ")} (run ${install})` };
  const bad = f.programs.filter((p) => !p.exists || !p.executable);
  if (bad.length) {
    const why = bad.map((p) => `${p.path} ${p.exists ? "is not executable" : "does not exist"}`).join("; ");
    return { id: "hooks", ok: false, line: `hooks: all ${installed.length} installed, but ${why}: every hook fails and Claude Code blocks every tool call (run ${install} with the longrun you mean)` };
  }
  return { id: "hooks", ok: true, line: `hooks: all ${installed.length} installed in ${f.settingsFile}, running ${f.programs.map((p) => p.path).join(", ")} (exists, executable)` };
}

function sandboxCheck(f: DoctorFacts): DoctorCheck {
  const s = f.sandbox;
  const wrong: string[] = [];
  if (s.enabled !== true) wrong.push("sandbox.enabled is not true");
  if (s.failIfUnavailable !== true) wrong.push("sandbox.failIfUnavailable is not true (without the sandbox Claude Code would run Bash unsandboxed)");
  if (s.allowUnsandboxedCommands !== false) wrong.push("sandbox.allowUnsandboxedCommands is not false (a command may ask to leave the sandbox)");
  if (wrong.length) return { id: "sandbox_settings", ok: false, line: `sandbox settings: ${wrong.join("; ")} (run longrun hook install claude --root ${f.root})` };
  return { id: "sandbox_settings", ok: true, line: "sandbox settings: enabled, failIfUnavailable, allowUnsandboxedCommands false" };
}

/**
 * The program the installed hooks run, when they are all there: it answers `--version` (a longrun
 * run directly) and lies in a place that lasts. Null when the hooks are not (all) installed.
 */
function hookProgramCheck(f: DoctorFacts, hooksOk: boolean): DoctorCheck | null {
  if (!hooksOk) return null;
  const install = `longrun hook install claude --root ${f.root}`;
  const bad: string[] = [];
  const good: string[] = [];
  for (const p of f.programs) {
    const why: string[] = [];
    if (p.version === null) why.push("does not answer --version as longrun does");
    if (p.unstable) why.push(`lies in ${p.unstable} (once it moves or is gone every hook fails and Claude Code blocks every tool call)`);
    if (why.length) bad.push(`${p.path} ${why.join(" and ")}`);
    else good.push(p.version === undefined ? p.path : `${p.path} (${p.version})`);
  }
  if (bad.length) return { id: "hook_program", ok: false, line: `hook program: ${bad.join("; ")}: run ${install} (from a place that does not last it copies longrun to a lasting one)` };
  return { id: "hook_program", ok: true, line: `hook program: ${good.join(", ")}, in a lasting place` };
}

/** Each token file of the HTTP server: there and readable by its owner only (0600). */
function tokenChecks(f: DoctorFacts): DoctorCheck[] {
  if (f.tokens === undefined) return [];
  if (f.tokens.length === 0) return [{ id: "tokens", ok: true, line: "http tokens: no token file here (longrun http writes .longrun/http.json, 0600, when it starts)" }];
  return f.tokens.map((t): DoctorCheck => {
    if (!t.exists) return { id: "tokens", ok: false, line: `http tokens: ${t.source} names ${t.path}, which does not exist (longrun http would not start)` };
    if (t.mode === null) return { id: "tokens", ok: false, line: `http tokens: ${t.source} ${t.path} cannot be looked at` };
    const mode = (t.mode & 0o777).toString(8).padStart(4, "0");
    if (t.mode & 0o077) return { id: "tokens", ok: false, line: `http tokens: ${t.source} ${t.path} is mode ${mode}, readable by others: chmod 600 ${t.path}` };
    return { id: "tokens", ok: true, line: `http tokens: ${t.source} ${t.path} (mode ${mode})` };
  });
}

/**
 * The report for `facts`: a protected path is OS-enforced when the machine can sandbox, the
 * settings require the sandbox, and the path is in its deny lists (reads too where they are
 * protected); else best effort while the hooks are installed; else not protected.
 */
export function doctorReport(f: DoctorFacts): DoctorReport {
  const machine = machineChecks(f);
  const hooks = hookCheck(f);
  const sandbox = sandboxCheck(f);
  const osSandbox = machine.every((c) => c.ok) && sandbox.ok;
  const paths: DoctorPath[] = f.paths.map((p) => {
    const denied = f.sandbox.denyWrite.includes(p.path) && (!p.read || f.sandbox.denyRead.includes(p.path));
    const enforcement: Enforcement = osSandbox && denied ? "os" : hooks.ok ? "hook" : "none";
    return { ...p, enforcement };
  });
  const checks = [...machine, hooks, sandbox];
  const others = [hookProgramCheck(f, hooks.ok), ...tokenChecks(f)].filter((c): c is DoctorCheck => c !== null);
  const enforced = checks.every((c) => c.ok) && paths.every((p) => p.enforcement === "os");
  const failed = others.filter((c) => !c.ok).length;
  const ok = enforced && failed === 0;
  const rules = ruleLines(paths, f.root, f.home);
  const shown = (c: DoctorCheck) => `${c.ok ? "ok  " : "FAIL"}  ${c.line}`;
  const lines = [...(f.version ? [`info  ${f.version}`] : []), ...checks.map(shown), ...rules.map((r) => r.line), ...others.map(shown)];
  if (f.landlockAbi !== undefined) lines.push(`info  landlock: ${f.landlockAbi === null ? "not available" : `ABI ${f.landlockAbi}`}`);
  const weak = checks.filter((c) => !c.ok).length + rules.filter((r) => !r.ok).length;
  const more = failed ? `${failed} other check(s) failed (above)` : "";
  lines.push(
    ok
      ? "every protection is OS-enforced"
      : enforced
        ? `every protection is OS-enforced, but ${more}`
        : `${weak} of ${checks.length + rules.length} not OS-enforced: longrun's protection there is best effort at most${more ? `; ${more}` : ""}`,
  );
  return { ok, root: f.root, platform: f.platform, version: f.version ?? null, checks: [...checks, ...others], paths, landlock_abi: f.landlockAbi, lines };
}

/** The first word of a command `hook install` wrote (plain, or in single quotes with `'\''` inside). */
export function firstWord(command: string): string {
  let out = "";
  let i = 0;
  while (i < command.length && command[i] !== " ") {
    if (command[i] === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) return out + command.slice(i + 1);
      out += command.slice(i + 1, end);
      i = end + 1;
    } else if (command[i] === "\\" && i + 1 < command.length) {
      out += command[i + 1];
      i += 2;
    } else out += command[i++];
  }
  return out;
}

const quoted = (s: string) => (/^[A-Za-z0-9_\/.:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** Which of `events` have a longrun hook for `root` in `settings` (parsed settings.local.json), and the programs they run. */
export function readHooks(settings: unknown, root: string, events: readonly string[]): HookFacts {
  const hooks = (settings as { hooks?: unknown } | null)?.hooks;
  const installed: string[] = [];
  const missing: string[] = [];
  const programs = new Set<string>();
  const direct = new Set<string>();
  for (const event of events) {
    const groups = hooks && typeof hooks === "object" ? (hooks as Record<string, unknown>)[event] : undefined;
    const tail = ` hook claude ${event} --root ${quoted(root)}`;
    let found = false;
    for (const g of Array.isArray(groups) ? groups : []) {
      for (const h of Array.isArray((g as { hooks?: unknown })?.hooks) ? ((g as { hooks: unknown[] }).hooks) : []) {
        const command = (h as { command?: unknown })?.command;
        if (typeof command !== "string" || !command.endsWith(tail)) continue;
        found = true;
        const prog = firstWord(command);
        programs.add(prog);
        if (command === `${quoted(prog)}${tail}`) direct.add(prog);
      }
    }
    (found ? installed : missing).push(event);
  }
  return { installed, missing, programs: [...programs], direct: [...direct] };
}

/** The sandbox settings that matter, read from parsed settings (anything malformed counts as unset). */
export function readSandbox(settings: unknown): SandboxSettingsFacts {
  const s = (settings as { sandbox?: Record<string, unknown> } | null)?.sandbox;
  const sb = s && typeof s === "object" ? s : {};
  const fs = (sb.filesystem && typeof sb.filesystem === "object" ? sb.filesystem : {}) as Record<string, unknown>;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  return { enabled: sb.enabled, failIfUnavailable: sb.failIfUnavailable, allowUnsandboxedCommands: sb.allowUnsandboxedCommands, denyWrite: strings(fs.denyWrite), denyRead: strings(fs.denyRead) };
}
