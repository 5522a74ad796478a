/**
 * Runs the real Claude Code CLI (the pinned devDependency, node_modules/.bin/claude) in print mode
 * against a scripted Messages API (messages_server.ts), with HOME in a temp directory (never the
 * user's settings), no telemetry, no auto-update, no non-essential traffic, and a bounded run time.
 *
 *   const r = await runClaude({ cwd: root, home, prompt: "/approve write it", steps: [{ tool: "Write", input: { file_path, content } }, { text: "ok" }] });
 *   r.toolResults[0].content  // what the model was told
 *
 * A second call with `continue: true` (or `resume: r.sessionId`) and the same cwd and home
 * continues the conversation: turn 1, turn 2.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../support/helpers.ts";
import { MessagesServer, type RecordedRequest, type Step, type ToolResult } from "./messages_server.ts";

export const CLAUDE_VERSION = "2.1.328";
/** The wrapper package's bin (its postinstall puts the platform binary there). */
export const CLAUDE_BIN = join(REPO, "node_modules", ".bin", "claude");

let probed: { bin: string | null; reason: string } | null = null;

/**
 * The claude executable that runs here, or null with the reason. Falls back to the platform
 * package's binary when the wrapper's postinstall did not run (npm skipping install scripts).
 */
export function claudeBinary(): { bin: string | null; reason: string } {
  if (probed) return probed;
  const arch = process.arch === "x64" ? "x64" : process.arch;
  const candidates = [CLAUDE_BIN, join(REPO, "node_modules", "@anthropic-ai", `claude-code-${process.platform}-${arch}`, "claude")];
  const why: string[] = [];
  for (const bin of candidates) {
    if (!existsSync(bin)) {
      why.push(`${bin}: missing`);
      continue;
    }
    const r = spawnSync(bin, ["--version"], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent", DISABLE_AUTOUPDATER: "1" } });
    if (r.status === 0 && r.stdout.includes(CLAUDE_VERSION)) return (probed = { bin, reason: "" });
    why.push(`${bin}: ${r.error ? r.error.message : `exit ${r.status}: ${(r.stdout + r.stderr).trim().slice(0, 200)}`}`);
  }
  return (probed = { bin: null, reason: `Claude Code ${CLAUDE_VERSION} cannot run here (${why.join("; ")}); run npm ci` });
}

export type PermissionMode = "default" | "acceptEdits" | "auto" | "bypassPermissions" | "manual" | "dontAsk" | "plan";

export interface RunClaudeOptions {
  /** The working directory (the project). */
  cwd: string;
  /** HOME for the client: a temp directory the test owns (~/.claude and ~/.claude.json land there). */
  home: string;
  prompt: string;
  /** The model's turns (messages_server.ts). */
  steps: Step[];
  /** --permission-mode; none given: the client's default. */
  permissionMode?: PermissionMode;
  /** More arguments, before the prompt (e.g. ["--allowedTools", "Bash(ls:*)"]). */
  extraArgs?: string[];
  /** More environment for the client (over the harness's own). */
  env?: Record<string, string>;
  /** Kill the client (its whole process group) after this long; default 60 s. */
  timeoutMs?: number;
  /** --continue: the most recent conversation in cwd. */
  continue?: boolean;
  /** --resume <session id>. */
  resume?: string;
  /** --include-hook-events (default true: hook_started/hook_response events in `events`). */
  hookEvents?: boolean;
  /** Answers helper requests (no tools in the body). */
  sideAnswer?: (body: Record<string, unknown>) => string;
  /** input_tokens reported by each main-loop answer (default 10); near the context window, the client compacts on its own. */
  inputTokens?: number;
}

export interface StreamEvent {
  type: string;
  subtype?: string;
  [key: string]: unknown;
}

export interface ClaudeRun {
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  /** The parsed stream-json lines of stdout, in order. */
  events: StreamEvent[];
  /** The tool_results the model received, in order (each once). */
  toolResults: ToolResult[];
  /** Every request the Messages server got. */
  requests: RecordedRequest[];
  /** The tool names of the init event. */
  initTools: string[];
  /** The session id (from the init event), for `resume`. */
  sessionId: string | null;
  /** The final `result` event, if any. */
  result: StreamEvent | null;
  /** The hook_response events (with --include-hook-events). */
  hookResponses: StreamEvent[];
  stdout: string;
  stderr: string;
  argv: string[];
}

/** The environment the client runs with: nothing of the caller's Claude or Anthropic settings. */
export function claudeEnv(home: string, baseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  const tmp = join(home, "tmp"); // the client's scratch files (cwd tracking, sandbox) go with home
  mkdirSync(tmp, { recursive: true });
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    TMPDIR: tmp,
    LANG: "C.UTF-8",
    USER: process.env.USER ?? "test",
    SHELL: "/bin/bash",
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: "sk-test-fake",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_BUG_COMMAND: "1",
    CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: "1",
    CLAUDE_CODE_DISABLE_TERMINAL_TITLE: "1",
    CLAUDE_CODE_MAX_RETRIES: "1",
    // as root the client refuses bypassPermissions unless told it runs in a sandbox (a test machine)
    ...(process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {}),
    ...extra,
  };
}

export function parseEvents(stdout: string): StreamEvent[] {
  const out: StreamEvent[] = [];
  for (const line of stdout.split("\n")) {
    const t = line.trim();
    if (!t.startsWith("{")) continue;
    try {
      const v = JSON.parse(t);
      if (v && typeof v === "object" && typeof v.type === "string") out.push(v);
    } catch {
      // not a JSON line
    }
  }
  return out;
}

export async function runClaude(o: RunClaudeOptions): Promise<ClaudeRun> {
  const { bin, reason } = claudeBinary();
  if (!bin) throw new Error(reason);
  const server = await new MessagesServer(o.steps, o.sideAnswer, o.inputTokens).start();
  const args = ["-p", "--output-format", "stream-json", "--verbose"];
  if (o.hookEvents !== false) args.push("--include-hook-events");
  if (o.permissionMode) args.push("--permission-mode", o.permissionMode);
  if (o.continue) args.push("--continue");
  if (o.resume) args.push("--resume", o.resume);
  args.push(...(o.extraArgs ?? []), "--", o.prompt);
  const argv = [bin, ...args];
  try {
    const child = spawn(bin, args, { cwd: o.cwd, env: claudeEnv(o.home, server.url, o.env), stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, o.timeoutMs ?? 60_000);
    const { code, signal } = await new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code, signal) => resolve({ code, signal }));
    }).finally(() => clearTimeout(timer));
    killGroup(); // whatever the client left running in its group (hooks, shells)
    const events = parseEvents(stdout);
    const init = events.find((e) => e.type === "system" && e.subtype === "init");
    return {
      code,
      signal,
      timedOut,
      events,
      toolResults: server.toolResults,
      requests: server.requests,
      initTools: Array.isArray(init?.tools) ? (init!.tools as string[]) : [],
      sessionId: typeof init?.session_id === "string" ? init.session_id : null,
      result: events.findLast((e) => e.type === "result") ?? null,
      hookResponses: events.filter((e) => e.type === "system" && e.subtype === "hook_response"),
      stdout,
      stderr,
      argv,
    };
  } finally {
    await server.close();
  }
}

/** The result of the `call`-th tool call of step `step` (results arrive in the order the client sends them, not the order of the calls). */
export function resultOf(r: ClaudeRun, step: number, call = 0): ToolResult | undefined {
  return r.toolResults.find((t) => t.step === step && t.call === call);
}

/** A short account of a run for assertion messages. */
export function describeRun(r: ClaudeRun): string {
  const results = r.toolResults.map((t) => `${t.tool}${t.is_error ? " (error)" : ""}: ${t.content.slice(0, 300)}`).join("\n  ");
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ""}${r.timedOut ? " TIMED OUT" : ""}; tool results:\n  ${results || "(none)"}\nresult: ${JSON.stringify(r.result?.result ?? null)}\nstderr: ${r.stderr.slice(-800)}`;
}
