/** What the tests that send corpus calls to the binary's PreToolUse hook share: the payload, the decision read from an answer, a small process pool. */
import { homedir } from "node:os";
import { basename } from "node:path";
import type { Call } from "./corpus.ts";

export interface Answer {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A corpus call as the JSON Claude Code sends, its ROOT, ROOTNAME and `~/` filled in. */
export function payload(root: string, call: Call): string {
  const text = JSON.stringify({ hook_event_name: "PreToolUse", cwd: root, session_id: "s", tool_use_id: "t", ...call });
  return text.replaceAll("ROOTNAME", basename(root)).replaceAll("ROOT", root).replaceAll('"~/', `"${homedir()}/`);
}

/** "deny", "none" (no decision: passes, also when rewritten to run inside longrun's sandbox), or what else came. */
export function decisionOf(a: Answer): "deny" | "none" | string {
  if (a.code === 2) return "deny";
  if (a.code !== 0) return `exit ${a.code}`;
  if (a.stdout.trim() === "") return "none";
  const out = JSON.parse(a.stdout);
  if (out.hookSpecificOutput?.permissionDecision === undefined && out.hookSpecificOutput?.updatedInput !== undefined) return "none";
  return out.hookSpecificOutput?.permissionDecision ?? `unexpected ${a.stdout}`;
}

/** Runs `items` through `fn` with `width` processes at a time. */
export async function pool<T, R>(items: readonly T[], fn: (t: T) => Promise<R>, width = 4): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  }));
  return out;
}
