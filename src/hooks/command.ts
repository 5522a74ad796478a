/**
 * `longrun hook claude <Event> [--root DIR]` and `longrun hook install claude [--root DIR]`.
 * A hook reads its event's JSON from stdin and prints its answer as JSON on stdout, exit 0.
 * PreToolUse fails closed: whatever goes wrong, it answers deny with a reason (an exit status
 * other than 0 or 2 would let the tool run silently).
 */
import { parseArgs } from "node:util";
import { CLAUDE_EVENTS, type ClaudeEvent, checkpointOn, failClosed, type HookInput, type HookOutput, preToolUse, sessionStart, stateOnlyContract, userPromptSubmit } from "./claude.ts";
import { loadHookConfig } from "./config.ts";

async function readStdin(): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
  return new TextDecoder().decode(Buffer.concat(chunks));
}

function print(out: HookOutput): Promise<void> {
  return new Promise((resolve) => process.stdout.write(JSON.stringify(out) + "\n", () => resolve()));
}

function rootFor(flag: string | undefined, input: HookInput): string {
  const root = flag ?? process.env.CLAUDE_PROJECT_DIR ?? (typeof input.cwd === "string" ? input.cwd : undefined);
  if (!root || !root.startsWith("/")) throw new Error("no project root: pass --root, or run under Claude Code (CLAUDE_PROJECT_DIR)");
  return root.replace(/\/+$/, "") || "/";
}

export async function runClaudeHook(event: string, rootFlag: string | undefined): Promise<number> {
  const isGate = event === "PreToolUse";
  let input: HookInput = {};
  try {
    if (!(CLAUDE_EVENTS as readonly string[]).includes(event)) throw new Error(`unknown hook event ${JSON.stringify(event)} (known: ${CLAUDE_EVENTS.join(", ")})`);
    const text = await readStdin();
    input = text.trim() ? (JSON.parse(text) as HookInput) : {};
    if (typeof input !== "object" || input === null) throw new Error("hook input is not a JSON object");
    const root = rootFor(rootFlag, input);
    const config = loadHookConfig(root);
    let out: HookOutput;
    switch (event as ClaudeEvent) {
      case "PreToolUse":
        out = await preToolUse(input, root, config);
        break;
      case "UserPromptSubmit":
        try {
          out = await userPromptSubmit(input, root, config);
        } catch (e) {
          // The turn could not begin: make sure no lease from an earlier turn stays valid.
          await stateOnlyContract(root).contract.endTurn("turn could not begin").catch(() => {});
          out = { systemMessage: `longrun: could not begin the turn (${(e as Error).message}); writes stay refused` };
        }
        break;
      case "SessionStart":
        out = await sessionStart(input, root);
        break;
      default:
        out = await checkpointOn(event as "Stop" | "PreCompact", input, root);
    }
    await print(out);
    return 0;
  } catch (e) {
    const message = (e as Error)?.message ?? String(e);
    process.stderr.write(`longrun hook: ${message}\n`);
    await print(isGate ? failClosed(message) : { systemMessage: `longrun: ${message}` });
    return 0;
  }
}

export async function runHook(args: string[]): Promise<number> {
  let values: { root?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args, options: { root: { type: "string" } }, allowPositionals: true, strict: true }));
  } catch (e) {
    if (args[0] === "claude" && args[1] === "PreToolUse") {
      await print(failClosed((e as Error).message));
      return 0;
    }
    process.stderr.write(`longrun: ${(e as Error).message}; see longrun --help\n`);
    return 2;
  }
  const [a, b] = positionals;
  if (a === "claude" && b && positionals.length === 2) return runClaudeHook(b, values.root);
  if (a === "install" && b === "claude" && positionals.length === 2) {
    const { installClaudeHooks } = await import("./install.ts");
    return installClaudeHooks(values.root ?? process.cwd());
  }
  process.stderr.write("longrun: usage: longrun hook claude <Event> [--root DIR] | longrun hook install claude [--root DIR]\n");
  return 2;
}
