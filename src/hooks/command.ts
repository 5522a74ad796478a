/**
 * `longrun hook claude <Event> [--root DIR]`, `longrun hook install claude [--root DIR]` and
 * `longrun hook uninstall claude [--root DIR]`.
 *
 * A hook reads its event's JSON from stdin and prints its answer on stdout. It fails closed:
 * - PreToolUse and UserPromptSubmit answer within a deadline well under the timeout the installer
 *   sets; when the deadline passes, or anything at all goes wrong, the tool call or the prompt is
 *   blocked (exit 2 with the reason on stderr, the documented blocking exit);
 * - Stop, PreCompact and SessionStart never block (a blocking Stop would make the model go on):
 *   they report the problem and exit 0.
 */
import { readFileSync, writeSync } from "node:fs";
import { parseArgs } from "node:util";
import { CLAUDE_EVENTS, type ClaudeEvent, type HookInput, type HookOutput, preCompact, preToolUse, sessionStart, stop, turnEndPath, userPromptSubmit } from "./claude.ts";
import { loadHookConfig } from "./config.ts";
import { HOOK_EVENTS } from "./events.ts";
import { loadOwn } from "../runtime/load.ts";
import { protectedRootRefusal } from "../root/place.ts";

/** How long each hook may take before it answers on its own (installed timeouts are far longer). */
export const DEADLINE_MS: Readonly<Record<ClaudeEvent, number>> = Object.fromEntries(CLAUDE_EVENTS.map((e) => [e, HOOK_EVENTS[e].deadlineMs])) as Record<ClaudeEvent, number>;

/** The events whose failure blocks (a hook that cannot decide denies): the table's `blocking` column. */
const BLOCKING: ReadonlySet<string> = new Set(CLAUDE_EVENTS.filter((e) => HOOK_EVENTS[e].blocking));

/** The largest hook input read; Claude Code's payloads are far smaller. */
const MAX_INPUT_BYTES = 8 * 1024 * 1024;

/** One Int32 shared with the watchdog: the thread that changes it from 0 to 1 answers. */
const claim = new SharedArrayBuffer(4);

/** Writes the one answer of this process (later attempts are ignored) and returns its exit code. */
function answer(out: HookOutput, code = 0, stderr = ""): number {
  if (Atomics.compareExchange(new Int32Array(claim), 0, 0, 1) !== 0) return code;
  if (out !== null) writeSync(1, JSON.stringify(out) + "\n");
  if (stderr) writeSync(2, stderr.endsWith("\n") ? stderr : stderr + "\n");
  return code;
}

/** A blocking event that cannot decide: blocked, by exit status 2 with the reason on stderr. */
function failClosed(event: string, reason: string): number {
  const what = event === "PreToolUse" ? "the tool call is denied" : "the prompt is blocked";
  return answer(null, 2, `longrun: ${reason}; ${what} (fail closed)`);
}

/**
 * The whole of stdin, read with one synchronous call on descriptor 0: touching `process.stdin`
 * costs a compiled Bun executable about 10 ms of start-up, more than the gate's own work.
 */
function readStdin(): string {
  const bytes = readFileSync(0);
  if (bytes.length > MAX_INPUT_BYTES) throw new Error(`the hook input is larger than ${MAX_INPUT_BYTES} bytes`);
  return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
}

function rootFor(flag: string | undefined, input: HookInput): string {
  const root = flag ?? process.env.CLAUDE_PROJECT_DIR ?? (typeof input.cwd === "string" ? input.cwd : undefined);
  if (!root || !root.startsWith("/")) throw new Error("no project root: pass --root, or run under Claude Code (CLAUDE_PROJECT_DIR)");
  return root.replace(/\/+$/, "") || "/";
}

async function handle(event: ClaudeEvent, rootFlag: string | undefined): Promise<HookOutput> {
  const text = readStdin();
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    throw new Error("the hook input is not JSON");
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) throw new Error("the hook input is not a JSON object");
  const payload = input as HookInput;
  const root = rootFor(rootFlag, payload);
  const refused = protectedRootRefusal(root); // the same rule as resolveRoot's, before anything reads or lays out the root
  if (refused) throw new Error(refused);
  const config = loadHookConfig(root);
  switch (event) {
    case "PreToolUse":
      return preToolUse(payload, root, config);
    case "UserPromptSubmit":
      return userPromptSubmit(payload, root, config);
    case "SessionStart":
      return sessionStart(payload, root, config);
    case "Stop":
      return payload.stop_hook_active === true ? null : stop(payload, root);
    case "PreCompact":
      return preCompact(payload, root);
  }
}

export async function runClaudeHook(event: string, rootFlag: string | undefined): Promise<number> {
  if (!(CLAUDE_EVENTS as readonly string[]).includes(event)) {
    return failClosed(event, `unknown hook event ${JSON.stringify(event)} (known: ${CLAUDE_EVENTS.join(", ")})`);
  }
  const ev = event as ClaudeEvent;
  const blocking = BLOCKING.has(ev);
  const deadline = DEADLINE_MS[ev];
  // a Stop that runs out of time has not ended its turn: the watchdog leaves word of it, as Stop would
  startWatchdog(ev, blocking, deadline, ev === "Stop" && rootFlag ? turnEndPath(rootFlag.replace(/\/+$/, "") || "/") : undefined);
  try {
    const out = await handle(ev, rootFlag);
    return answer(out);
  } catch (e) {
    const message = (e as Error)?.message ?? String(e);
    return blocking ? failClosed(ev, message) : answer({ systemMessage: `longrun: ${message}` }, 0, `longrun hook: ${message}`);
  }
}

/** Where the watchdog Worker's module is: embedded beside this bundle, or beside this source. */
function watchdogUrl(): string {
  const main = process.argv[1] ?? "";
  if (/^(\/\$bunfs\/|[A-Za-z]:[\\/]~BUN[\\/])/.test(main)) return main.slice(0, Math.max(main.lastIndexOf("/"), main.lastIndexOf("\\"))) + "/hooks/watchdog.js";
  return new URL("./watchdog.ts", import.meta.url).href;
}

/**
 * The hard bound: a Worker that answers deny (or, for a non-blocking event, a note) and ends the
 * process when the deadline passes, even while this thread is stuck in a synchronous check or in
 * reading a stdin that never closes.
 */
function startWatchdog(ev: ClaudeEvent, blocking: boolean, deadline: number, mark?: string): void {
  const message = blocking
    ? `longrun: no decision within ${deadline / 1000} s; ${ev === "PreToolUse" ? "the tool call is denied" : "the prompt is blocked"} (fail closed)`
    : JSON.stringify({ systemMessage: `longrun: the ${ev} hook gave up after ${deadline / 1000} s` });
  const worker = new Worker(watchdogUrl(), { type: "module" }) as Worker & { unref?: () => void };
  worker.unref?.();
  worker.postMessage({ claim, deadlineMs: deadline, blocking, message, mark });
}

export async function runHook(args: string[]): Promise<number> {
  let values: { root?: string; "without-os-sandbox"?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args, options: { root: { type: "string" }, "without-os-sandbox": { type: "boolean" } }, allowPositionals: true, strict: true }));
    if (values["without-os-sandbox"] && positionals[0] !== "install") throw new Error("--without-os-sandbox is an option of longrun hook install claude only");
  } catch (e) {
    if (args[0] === "claude" && BLOCKING.has(args[1] ?? "")) return failClosed(args[1]!, (e as Error).message);
    process.stderr.write(`longrun: ${(e as Error).message}; see longrun --help\n`);
    return 2;
  }
  const [a, b] = positionals;
  if (a === "claude" && b && positionals.length === 2) return runClaudeHook(b, values.root);
  if ((a === "install" || a === "uninstall") && b === "claude" && positionals.length === 2) {
    const { installClaudeHooks, uninstallClaudeHooks } = await loadOwn<typeof import("./install.ts")>("hooks/install");
    return a === "install" ? installClaudeHooks(values.root ?? process.cwd(), { withoutOsSandbox: values["without-os-sandbox"] === true }) : uninstallClaudeHooks(values.root ?? process.cwd());
  }
  process.stderr.write("longrun: usage: longrun hook claude <Event> [--root DIR] | longrun hook install claude [--root DIR] [--without-os-sandbox] | longrun hook uninstall claude [--root DIR]\n");
  return 2;
}
