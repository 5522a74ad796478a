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
import { join } from "node:path";
import { LongrunError, WriteGateViolation } from "../core/errors.ts";
import { type Lang, say } from "../core/messages/catalog.ts";
import { protocolText } from "../core/messages/protocol.ts";
import { ROOT_PATHS } from "../root/layout.ts";
import type { HookConfig } from "./config.ts";
import { type HookInput, type HookOutput, LOCK_WAIT_MS, stateOnlyContract, turnEndPending } from "./hook_state.ts";
import { settingsLang } from "./grant_path.ts";
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

/** The language the root's people read refusals in (read only when refusing: a pass pays nothing for it). */
const langOf = (root: string): Lang => settingsLang(join(root, ROOT_PATHS.settings));

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
  if (d.kind === "deny") {
    const lang = langOf(root);
    return denyOutput(d.message ? say(d.message[0], lang, d.message[1]) : say("hook.denied", lang, { detail: d.reason }));
  }
  if (d.kind === "pass") return d.shell ? runInside(input, d.shell, "read", root, config) : null;
  const ended = turnEndPending(root);
  if (ended) return denyOutput(say("hook.turn_not_recorded", langOf(root), { why: ended }));
  const { contract, close } = await stateOnlyContract(root, LOCK_WAIT_MS.PreToolUse, true);
  try {
    await contract.requireWritable(d.action);
  } catch (e) {
    const lang = e instanceof LongrunError ? langOf(root) : "en";
    const marker = config.approve_marker;
    const approve = say("hook.approve_line", lang, { marker });
    if (e instanceof WriteGateViolation) {
      const hint = d.shell && e.reason === "read_only" ? say("hook.not_read_only", lang, { why: d.notReadOnly ?? "unknown" }) : "";
      const scoped = d.shell && e.reason === "out_of_scope" ? say("hook.scoped_bash", lang, { marker }) : "";
      return denyOutput(`${protocolText(e, lang)}${hint}${scoped}${approve}`);
    }
    if (e instanceof LongrunError && e.kind === "no_active_task") {
      return denyOutput(`${say("hook.no_task", lang, { root })}${approve}${d.shell ? say("hook.read_tools", lang) : ""}`);
    }
    throw e;
  } finally {
    close();
  }
  return d.shell ? runInside(input, d.shell, "lease", root, config) : null;
}
