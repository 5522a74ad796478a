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
 * The hooks never run a program from a place that does not last (a Python virtual environment, a
 * temporary or a build directory: `unstableExeReason`): install copies it first to
 * `stableExePath()` (`$XDG_DATA_HOME/longrun/bin/<version>/longrun`, else
 * `~/.local/share/longrun/bin/…`; atomically, 0755), says so in one line, and writes that path; when
 * it cannot, it refuses (exit 2) with the way out, before writing the settings.
 *
 * On Linux the sandbox needs bubblewrap (working) and socat: without them install refuses (exit 2,
 * nothing written) unless `--without-os-sandbox` accepts best-effort protection, loudly.
 *
 * The settings themselves are src/hooks/install_settings.ts; the machine's prerequisites are
 * src/hooks/os_sandbox.ts.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_MARKER } from "../core/approval.ts";
import { GITIGNORE_LINES } from "../root/layout.ts";
import { resolveRoot } from "../root/root.ts";
import { selfArgv } from "../runtime/index.ts";
import { writeFileAtomic } from "../store/atomic.ts";
import { loadHookConfig } from "./config.ts";
import { CLAUDE_EVENTS, eventRow } from "./events.ts";
import { compiledExe, withLongrunHooks, withoutLongrun } from "./install_settings.ts";
import { INSTALL_HINT, osSandboxFacts, osSandboxMissing, placeExe, stableExePath, unstableExeReason } from "./os_sandbox.ts";

export { allowRules, denyRules, HOOK_TIMEOUTS, hookCommand, type ProtectedPath, protectedPaths, sandboxPaths, withLongrunHooks, withoutLongrun } from "./install_settings.ts";
export { onPath, type OsSandboxFacts, osSandboxFacts, osSandboxMissing, placeExe, stableExePath, unstableExeReason } from "./os_sandbox.ts";

/**
 * The program the hooks run for this longrun (`self`, as `selfArgv()` gives it): the compiled
 * executable itself when it lies in a lasting place, else its lasting copy (`stableExePath()`,
 * which install writes); a runtime running the sources as it is.
 */
export function hookSelf(self: string[], env: Record<string, string | undefined> = process.env): string[] {
  const exe = compiledExe(self);
  return exe && unstableExeReason(exe) ? [stableExePath(env)] : self;
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
  // a program in a virtual environment, a temporary or a build directory: the hooks run a lasting copy
  const self = hookSelf(selfArgv());
  const exe = compiledExe(selfArgv());
  if (exe && self[0] !== exe) {
    const why = unstableExeReason(exe);
    try {
      placeExe(exe, self[0]!);
    } catch (e) {
      process.stderr.write(
        `longrun: ${exe} lies in ${why}, so the hooks must not run it (once it is gone every tool call is blocked), and it could not be copied to ${self[0]} ` +
          `(${(e as Error).message.split("\n")[0]}): put longrun in a lasting place (install.sh, or ~/.local/bin) and install from there, or set XDG_DATA_HOME to a writable directory; nothing was written into ${file}\n`,
      );
      return 2;
    }
    process.stderr.write(`longrun: warning: ${exe} lies in ${why}; the hooks run a copy of it, ${self[0]} (install again after upgrading longrun)\n`);
  }
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

  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "longrun-hook-check-")));
  let failed = 0;
  try {
    for (const event of CLAUDE_EVENTS) {
      const r = await runOnce([...self, "hook", "claude", event, "--root", scratch], JSON.stringify({ ...eventRow(event).sample, cwd: scratch }));
      let ok = r.code === 0;
      let answer = "";
      try {
        const out = r.stdout.trim() ? JSON.parse(r.stdout) : {};
        const decision = out.hookSpecificOutput?.permissionDecision;
        answer = decision ? `${decision}` : "answered";
        const wanted = eventRow(event).sampleDecision;
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
    writeFileAtomic(file, JSON.stringify(withoutLongrun(settings, root, hookSelf(selfArgv())), null, 2) + "\n");
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
