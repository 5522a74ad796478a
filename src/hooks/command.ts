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
 *
 * A PreToolUse call goes first to the root's resident gate when one runs (`longrun hook gate`,
 * src/hooks/gate_server.ts; src/hooks/gate_client.ts says when its answer is taken), and is decided
 * here when none answers. Everything that decides is in src/hooks/event_run.ts, loaded on demand:
 * this module stays small, so a call the resident gate answers evaluates next to nothing.
 */
import { readFileSync, writeSync } from "node:fs";
import { CLAUDE_EVENTS, type ClaudeEvent, HOOK_EVENTS } from "./events.ts";
import { askResidentGate } from "./gate_client.ts";
import { gateIdentity } from "./gate_socket.ts";
import { failClosedResult, type HookResult, noteResult } from "./hook_result.ts";
import { loadOwn } from "../runtime/load.ts";

/** How long each hook may take before it answers on its own (installed timeouts are far longer). */
export const DEADLINE_MS: Readonly<Record<ClaudeEvent, number>> = Object.fromEntries(CLAUDE_EVENTS.map((e) => [e, HOOK_EVENTS[e].deadlineMs])) as Record<ClaudeEvent, number>;

/** The events whose failure blocks (a hook that cannot decide denies): the table's `blocking` column. */
const BLOCKING: ReadonlySet<string> = new Set(CLAUDE_EVENTS.filter((e) => HOOK_EVENTS[e].blocking));

/** The largest hook input read; Claude Code's payloads are far smaller. */
const MAX_INPUT_BYTES = 8 * 1024 * 1024;

/** One Int32 shared with the watchdog: the thread that changes it from 0 to 1 answers. */
const claim = new SharedArrayBuffer(4);

/** Writes the one answer of this process (later attempts are ignored) and returns its exit code. */
function answer(r: HookResult): number {
  if (Atomics.compareExchange(new Int32Array(claim), 0, 0, 1) !== 0) return r.code;
  if (r.stdout) writeSync(1, r.stdout);
  if (r.stderr) writeSync(2, r.stderr);
  return r.code;
}

/** A blocking event that cannot decide: blocked, by exit status 2 with the reason on stderr. */
function failClosed(event: string, reason: string): number {
  return answer(failClosedResult(event, reason));
}

/** How long a PreToolUse call waits for the resident gate's answer before deciding on its own. */
export const RESIDENT_WAIT_MS = 3_000;

/**
 * The whole of stdin, read with one synchronous call on descriptor 0: touching `process.stdin`
 * costs a compiled Bun executable about 10 ms of start-up, more than the gate's own work.
 */
function readStdin(): string {
  return decodeInput(readFileSync(0));
}

/** The input's bytes as text, refused when too large or not UTF-8. */
function decodeInput(bytes: Uint8Array): string {
  if (bytes.length > MAX_INPUT_BYTES) throw new Error(`the hook input is larger than ${MAX_INPUT_BYTES} bytes`);
  return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
}

export async function runClaudeHook(event: string, rootFlag: string | undefined): Promise<number> {
  if (!(CLAUDE_EVENTS as readonly string[]).includes(event)) {
    return failClosed(event, `unknown hook event ${JSON.stringify(event)} (known: ${CLAUDE_EVENTS.join(", ")})`);
  }
  const ev = event as ClaudeEvent;
  // the resident gate serves the compiled executable only (src/hooks/gate_socket.ts)
  if (ev === "PreToolUse" && gateIdentity() !== null) return preToolUseCall(rootFlag);
  const blocking = BLOCKING.has(ev);
  const deadline = DEADLINE_MS[ev];
  // a Stop that runs out of time has not ended its turn: the watchdog leaves word of it, as Stop would
  startWatchdog(ev, blocking, deadline, ev === "Stop" && rootFlag ? await turnEndMark(rootFlag) : undefined);
  let text: string;
  try {
    text = readStdin();
  } catch (e) {
    return blocking ? failClosed(ev, (e as Error).message) : answer(noteResult((e as Error).message));
  }
  return answer(await (await decider()).runEvent(ev, rootFlag, text));
}

/** The cold path's decision (its own bundle in the executable). */
function decider(): Promise<typeof import("./event_run.ts")> {
  return loadOwn<typeof import("./event_run.ts")>("hooks/event_run");
}

async function turnEndMark(rootFlag: string): Promise<string> {
  return (await decider()).turnEndPath(rootFlag.replace(/\/+$/, "") || "/");
}

/**
 * PreToolUse: stdin is read without blocking this thread (a timer bounds the wait for the resident
 * gate, and a stdin that never closes), then the resident gate is asked; when it does not answer,
 * the call is decided here, under the watchdog, with the deadline counted afresh.
 */
async function preToolUseCall(rootFlag: string | undefined): Promise<number> {
  const deadline = DEADLINE_MS.PreToolUse;
  const bound = setTimeout(() => process.exit(failClosed("PreToolUse", `no decision within ${deadline / 1000} s`)), deadline);
  let text: string;
  try {
    text = decodeInput(await Bun.stdin.bytes());
  } catch (e) {
    return failClosed("PreToolUse", (e as Error).message);
  }
  const resident = await askResidentGate(rootFlag, text, RESIDENT_WAIT_MS);
  clearTimeout(bound);
  if (resident) return answer(resident);
  startWatchdog("PreToolUse", true, deadline);
  return answer(await (await decider()).runEvent("PreToolUse", rootFlag, text));
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

/**
 * `claude <Event>` with at most `--root DIR` (or `--root=DIR`), the shape Claude Code runs, read
 * without `node:util` (loading it is a good part of a small hook's start): what parseArgs would
 * make of it, or null for anything else, which parseArgs reads.
 */
function hookCall(args: readonly string[]): { event: string; root: string | undefined } | null {
  if (args[0] !== "claude" || args[1] === undefined || args[1].startsWith("-")) return null;
  if (args.length === 2) return { event: args[1], root: undefined };
  if (args.length === 3 && args[2]!.startsWith("--root=")) return { event: args[1], root: args[2]!.slice("--root=".length) };
  if (args.length === 4 && args[2] === "--root" && !args[3]!.startsWith("-")) return { event: args[1], root: args[3] };
  return null;
}

export async function runHook(args: string[]): Promise<number> {
  const quick = hookCall(args);
  if (quick) return runClaudeHook(quick.event, quick.root);
  const { parseArgs } = await import("node:util");
  let values: { root?: string; "without-os-sandbox"?: boolean; "idle-exit"?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args, options: { root: { type: "string" }, "without-os-sandbox": { type: "boolean" }, "idle-exit": { type: "string" } }, allowPositionals: true, strict: true }));
    if (values["without-os-sandbox"] && positionals[0] !== "install") throw new Error("--without-os-sandbox is an option of longrun hook install claude only");
    if (values["idle-exit"] !== undefined && positionals[0] !== "gate") throw new Error("--idle-exit is an option of longrun hook gate only");
  } catch (e) {
    if (args[0] === "claude" && BLOCKING.has(args[1] ?? "")) return failClosed(args[1]!, (e as Error).message);
    process.stderr.write(`longrun: ${(e as Error).message}; see longrun --help\n`);
    return 2;
  }
  const [a, b] = positionals;
  if (a === "claude" && b && positionals.length === 2) return runClaudeHook(b, values.root);
  if (a === "gate" && positionals.length === 1) return runGate(values.root ?? process.cwd(), values["idle-exit"]);
  if ((a === "install" || a === "uninstall") && b === "claude" && positionals.length === 2) {
    const { installClaudeHooks, uninstallClaudeHooks } = await loadOwn<typeof import("./install.ts")>("hooks/install");
    return a === "install" ? installClaudeHooks(values.root ?? process.cwd(), { withoutOsSandbox: values["without-os-sandbox"] === true }) : uninstallClaudeHooks(values.root ?? process.cwd());
  }
  process.stderr.write("longrun: usage: longrun hook claude <Event> [--root DIR] | longrun hook install claude [--root DIR] [--without-os-sandbox] | longrun hook uninstall claude [--root DIR] | longrun hook gate [--root DIR] [--idle-exit SECONDS]\n");
  return 2;
}

/** The default of `--idle-exit`: a resident gate nobody asked for this long ends. */
export const GATE_IDLE_EXIT_S = 900;

/** `longrun hook gate`: the root's resident gate, in the foreground until it ends (src/hooks/gate_server.ts). */
async function runGate(root: string, idleExit: string | undefined): Promise<number> {
  const seconds = idleExit === undefined ? GATE_IDLE_EXIT_S : Number(idleExit);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 86_400) {
    process.stderr.write(`longrun: --idle-exit must be a whole number of seconds from 1 to 86400, got ${JSON.stringify(idleExit)}; see longrun --help\n`);
    return 2;
  }
  const { runGateServer } = await loadOwn<typeof import("./gate_server.ts")>("hooks/gate_server");
  return runGateServer({ root, idleExitMs: seconds * 1000 });
}
