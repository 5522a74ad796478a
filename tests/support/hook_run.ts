/** Runs `longrun hook claude <event>` as Claude Code does: the JSON payload on stdin of a real process of the binary. */
import { run } from "./helpers.ts";
import { BINARY, requireBinary } from "./server.ts";

export async function hook(root: string, event: string, payload: Record<string, unknown>, env: Record<string, string> = {}) {
  requireBinary();
  const r = await run([BINARY, "hook", "claude", event, "--root", root], { input: JSON.stringify({ hook_event_name: event, cwd: root, session_id: "s1", ...payload }), env });
  return { ...r, out: r.stdout.trim() ? JSON.parse(r.stdout) : null };
}

/** A PreToolUse answer: "deny" (a deny decision, or exit 2) or whatever else it said (nothing: undefined). */
export const decision = (o: { out: any; code: number | null }) => (o.code === 2 ? "deny" : o.out?.hookSpecificOutput?.permissionDecision);

/** A PreToolUse answer that lets the call through: exit 0 and no permission decision at all (never "allow"). */
export const passed = (o: { out: any; code: number | null }) => o.code === 0 && (o.out === null || (o.out.hookSpecificOutput?.hookEventName === "PreToolUse" && o.out.hookSpecificOutput.permissionDecision === undefined));

/** The command a passing shell call was rewritten to (`longrun sandbox …`), or null when it was not rewritten. */
export const rewritten = (o: { out: any }): string | null => o.out?.hookSpecificOutput?.updatedInput?.command ?? null;
