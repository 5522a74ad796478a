/**
 * One hook event decided from its input's text: the work behind `longrun hook claude <Event>`,
 * loaded on demand (its own bundle in the executable), by the per-call command when no resident
 * gate answers and by the resident gate for every call it answers (src/hooks/gate_server.ts). It
 * never throws: whatever goes wrong is a result, blocking events failing closed.
 */
import { type ClaudeEvent, type HookInput, type HookOutput, preCompact, preToolUse, sessionStart, stop, userPromptSubmit } from "./claude.ts";
import { loadHookConfig } from "./config.ts";
import { HOOK_EVENTS } from "./events.ts";
import { parseInput, rootFor } from "./hook_input.ts";
import { failClosedResult, type HookResult, noteResult, outputResult } from "./hook_result.ts";
import { protectedRootRefusal } from "../root/place.ts";

async function handle(event: ClaudeEvent, rootFlag: string | undefined, text: string): Promise<HookOutput> {
  const payload = parseInput(text);
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

/** Decides `event` for the input `text` (already read from stdin). */
export async function runEvent(event: ClaudeEvent, rootFlag: string | undefined, text: string): Promise<HookResult> {
  try {
    return outputResult(await handle(event, rootFlag, text));
  } catch (e) {
    const message = (e as Error)?.message ?? String(e);
    return HOOK_EVENTS[event].blocking ? failClosedResult(event, message) : noteResult(message);
  }
}

export { turnEndPath } from "./hook_state.ts";
