/**
 * What one hook call ends with: its exit status and what it writes on stdout and stderr. The
 * per-call command writes it itself (src/hooks/command.ts); the resident gate sends it to the
 * per-call command that asked (src/hooks/gate_server.ts), which writes it the same way, so both
 * paths answer byte for byte alike.
 */
import type { HookOutput } from "./hook_state.ts";

export interface HookResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** An answer (or none), exit status 0. */
export function outputResult(out: HookOutput, code = 0, stderr = ""): HookResult {
  return { code, stdout: out === null ? "" : JSON.stringify(out) + "\n", stderr: stderr && !stderr.endsWith("\n") ? stderr + "\n" : stderr };
}

/** A blocking event that cannot decide: blocked, by exit status 2 with the reason on stderr. */
export function failClosedResult(event: string, reason: string): HookResult {
  const what = event === "PreToolUse" ? "the tool call is denied" : "the prompt is blocked";
  return outputResult(null, 2, `longrun: ${reason}; ${what} (fail closed)`);
}

/** A non-blocking event that failed: a note for the user, status 0. */
export function noteResult(message: string): HookResult {
  return outputResult({ systemMessage: `longrun: ${message}` }, 0, `longrun hook: ${message}`);
}
