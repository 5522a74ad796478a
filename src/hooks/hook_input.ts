/** A hook's input read as a JSON object, and the root it is about: shared by the per-call hook and the resident gate. */
import type { HookInput } from "./hook_state.ts";

/** The root a call is about: `--root`, else Claude Code's project directory, else the input's cwd. */
export function rootFor(flag: string | undefined, input: HookInput, env: Record<string, string | undefined> = process.env): string {
  const root = flag ?? env.CLAUDE_PROJECT_DIR ?? (typeof input.cwd === "string" ? input.cwd : undefined);
  if (!root || !root.startsWith("/")) throw new Error("no project root: pass --root, or run under Claude Code (CLAUDE_PROJECT_DIR)");
  return root.replace(/\/+$/, "") || "/";
}

/** The hook's input as a JSON object, or the error that blocks it. */
export function parseInput(text: string): HookInput {
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    throw new Error("the hook input is not JSON");
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) throw new Error("the hook input is not a JSON object");
  return input as HookInput;
}
