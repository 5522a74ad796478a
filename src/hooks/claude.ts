/**
 * The Claude Code adapter: one function per hook event, each taking the hook's JSON input and
 * returning what to print. The per-event command (`longrun hook claude <Event>`) runs one of these
 * and exits; src/hooks/events.ts lists the events.
 *
 * - PreToolUse, here: the gate. It answers deny (with the reason) or nothing, never "allow", so
 *   Claude Code's own permission rules and prompts still apply to whatever passes. It reads only
 *   the state file (no libSQL, no Worker).
 * - UserPromptSubmit, SessionStart, Stop and PreCompact, the turn's boundaries: src/hooks/turns.ts.
 */
import { LongrunError, WriteGateViolation } from "../core/errors.ts";
import type { HookConfig } from "./config.ts";
import { type HookInput, type HookOutput, LOCK_WAIT_MS, stateOnlyContract, turnEndPending } from "./hook_state.ts";
import { protectContext } from "./protect.ts";
import { decideTool, type ShellRun, type ToolContext } from "./tools.ts";
import { sandboxedCommand } from "./wrap.ts";

export { CLAUDE_EVENTS, type ClaudeEvent } from "./events.ts";
export { blockPrompt, type HookInput, type HookOutput, LOCK_WAIT_MS, stateOnlyContract, turnEndPath } from "./hook_state.ts";
export { GRANTED_BY, preCompact, sessionStart, stop, userPromptSubmit } from "./turns.ts";

export function denyOutput(reason: string): HookOutput {
  return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: `longrun: ${reason}` } };
}

/** What the gate decides a call against: the root, the working directory, and the root's hook settings. */
export function toolContext(input: HookInput, root: string, config: HookConfig): ToolContext {
  const cwd = typeof input.cwd === "string" && input.cwd.startsWith("/") ? input.cwd : root;
  const protect = protectContext(root, cwd);
  return {
    protect,
    env: { home: protect.home, cwd: protect.cwd, vars: { HOME: protect.home, PWD: protect.cwd, CLAUDE_PROJECT_DIR: root } },
    approveMarker: config.approve_marker,
    readOnlyTools: config.read_only_tools,
    leaseTools: config.lease_tools,
    bashReadOnly: config.bash_read_only,
    trustedPrograms: config.trusted_programs,
    path: process.env.PATH ?? "/usr/bin:/bin",
  };
}

const READ_TOOLS_HINT = "use the Read tool to look at files";

/**
 * A shell command that passed the gate, rewritten to run inside the OS boundary the lease chose
 * (`longrun sandbox`); the rest of the tool's input is kept as it was. Claude Code runs the
 * rewritten command and judges it by its own permission rules (the hook never answers "allow").
 */
function runInside(input: HookInput, shell: ShellRun, mode: "read" | "lease", root: string, config: HookConfig): HookOutput {
  if (config.sandbox === "off") return null;
  const args = (input.tool_input ?? {}) as Record<string, unknown>;
  const updatedInput = { ...args, [shell.field]: sandboxedCommand(shell.command, mode, root) };
  return { hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput } };
}

/** The gate. Deny with a reason, a shell command rewritten into its boundary, or nothing. */
export async function preToolUse(input: HookInput, root: string, config: HookConfig): Promise<HookOutput> {
  const d = await decideTool(input, toolContext(input, root, config));
  if (d.kind === "deny") return denyOutput(d.reason);
  if (d.kind === "pass") return d.shell ? runInside(input, d.shell, "read", root, config) : null;
  const ended = turnEndPending(root);
  if (ended) return denyOutput(`the last turn ended but longrun could not record it yet (${ended}), so writes are refused until the next message begins a turn`);
  const { contract, close } = await stateOnlyContract(root, LOCK_WAIT_MS.PreToolUse, true);
  const approve = `the user approves writes for one turn by starting a line of their message with ${config.approve_marker}`;
  try {
    await contract.requireWritable(d.action);
  } catch (e) {
    if (e instanceof WriteGateViolation) {
      const hint = d.shell && e.reason === "read_only" ? `; this command is not read-only (${d.notReadOnly ?? "unknown"}); in a read-only turn Bash runs only plain read commands (ls, cat, grep, git status/log/diff, …), or ${READ_TOOLS_HINT}` : "";
      const scoped = d.shell && e.reason === "out_of_scope" ? `; Bash can write anywhere, so a scoped lease covers it only when its scope includes Bash (${config.approve_marker} scope=…,Bash); use Edit or Write inside the scope` : "";
      return denyOutput(`${e.message}${hint}${scoped}; ${approve}`);
    }
    if (e instanceof LongrunError && e.kind === "no_active_task") {
      return denyOutput(`no task in ${root}, so nothing may be written; ${approve}${d.shell ? `; ${READ_TOOLS_HINT}` : ""}`);
    }
    throw e;
  } finally {
    close();
  }
  return d.shell ? runInside(input, d.shell, "lease", root, config) : null;
}
