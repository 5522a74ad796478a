/**
 * `longrun hook install claude [--root DIR]`: writes longrun's hooks into
 * `DIR/.claude/settings.local.json` (personal, not the shared settings.json), keeping every other
 * setting and hook there, replacing only earlier longrun entries (so running it twice changes
 * nothing), then runs each hook once, in a scratch root, to prove it answers.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveRoot } from "../root.ts";
import { selfArgv } from "../runtime/index.ts";
import { writeFileAtomic } from "../store/atomic.ts";
import { CLAUDE_EVENTS, type ClaudeEvent } from "./claude.ts";

const MARK = " hook claude ";

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_\/.:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function hookCommand(self: string[], event: ClaudeEvent, root: string): string {
  return [...self, "hook", "claude", event, "--root", root].map(shellQuote).join(" ");
}

type Group = { matcher?: string; hooks: { type: string; command: string; timeout?: number }[] };

/**
 * Claude Code's own permission rules for longrun's files: a Read deny rule also covers the Grep
 * and Glob tools, which search whole directories (a `grep` for "token" over the project would
 * otherwise read `.longrun/http.json`); Edit covers NotebookEdit. Defence in depth beside the hook.
 */
export const DENY_RULES = [
  "Read(./.longrun/**)",
  "Edit(./.longrun/**)",
  "Read(./memory.db*)",
  "Edit(./memory.db*)",
  "Read(./raw_data/**)",
  "Edit(./raw_data/**)",
];

/** `settings` with longrun's hooks for `root` in place of any earlier longrun hooks, and its deny rules added. */
export function withLongrunHooks(settings: Record<string, unknown>, self: string[], root: string): Record<string, unknown> {
  const hooks = { ...((settings.hooks as Record<string, Group[]> | undefined) ?? {}) };
  for (const event of CLAUDE_EVENTS) {
    const kept = (hooks[event] ?? []).filter((g) => !g.hooks?.some((h) => typeof h.command === "string" && h.command.includes(MARK)));
    const group: Group = {
      ...(event === "PreToolUse" ? { matcher: "*" } : {}),
      hooks: [{ type: "command", command: hookCommand(self, event, root), timeout: event === "PreToolUse" ? 10 : 60 }],
    };
    hooks[event] = [...kept, group];
  }
  const permissions = { ...((settings.permissions as Record<string, unknown> | undefined) ?? {}) };
  const deny = Array.isArray(permissions.deny) ? (permissions.deny as unknown[]) : [];
  permissions.deny = [...deny, ...DENY_RULES.filter((r) => !deny.includes(r))];
  return { ...settings, hooks, permissions };
}

const SAMPLES: Record<ClaudeEvent, Record<string, unknown>> = {
  SessionStart: { hook_event_name: "SessionStart", source: "startup" },
  UserPromptSubmit: { hook_event_name: "UserPromptSubmit", prompt: "hello" },
  PreToolUse: { hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: "x.txt", content: "x" } },
  Stop: { hook_event_name: "Stop", stop_hook_active: false },
  PreCompact: { hook_event_name: "PreCompact", trigger: "manual" },
};

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

export async function installClaudeHooks(rootArg: string): Promise<number> {
  let root: string;
  try {
    root = resolveRoot(rootArg);
  } catch (e) {
    process.stderr.write(`longrun: ${(e as Error).message}\n`);
    return 2;
  }
  const dir = join(root, ".claude");
  const file = join(dir, "settings.local.json");
  let settings: Record<string, unknown> = {};
  try {
    settings = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOENT") {
      process.stderr.write(`longrun: ${file} exists but is not valid JSON (${(e as Error).message}); fix it first, nothing was changed\n`);
      return 1;
    }
  }
  const self = selfArgv();
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(file, JSON.stringify(withLongrunHooks(settings, self, root), null, 2) + "\n");
  process.stdout.write(`wrote longrun hooks for ${root} into ${file}\n`);

  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "longrun-hook-check-")));
  let failed = 0;
  try {
    for (const event of CLAUDE_EVENTS) {
      const r = await runOnce([...self, "hook", "claude", event, "--root", scratch], JSON.stringify({ ...SAMPLES[event], cwd: scratch }));
      let ok = r.code === 0;
      let answer = "";
      try {
        const out = r.stdout.trim() ? JSON.parse(r.stdout) : {};
        const decision = out.hookSpecificOutput?.permissionDecision;
        answer = decision ? `${decision}` : "answered";
        if (event === "PreToolUse") ok &&= decision === "deny"; // a write with no task and no lease must be refused
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
  process.stdout.write(`all ${CLAUDE_EVENTS.length} hooks answer; approve writes for one turn by starting a line of your prompt with /approve\n`);
  return 0;
}
