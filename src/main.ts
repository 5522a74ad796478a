/**
 * Entry point of the `longrun` executable (and of `bun src/main.ts` / `deno run -A src/main.ts`).
 *
 * It loads only what the command needs: a Claude Code hook (a fresh process per tool call, where
 * start-up is most of the cost) loads the hook command alone; everything else loads the command
 * line. In the compiled executable both are separate embedded bundles (scripts/compile.ts), so a
 * hook never pays for loading the servers' code.
 */
import { loadOwn } from "./runtime/load.ts";

const argv = process.argv.slice(2);
// A gating hook that crashes must block, never let the call through: exit status 2 is Claude
// Code's blocking answer (any other status lets the tool run).
const gating = argv[0] === "hook" && argv[1] === "claude" && (argv[2] === "PreToolUse" || argv[2] === "UserPromptSubmit");
const failure = (e: unknown) => {
  process.stderr.write(gating ? `longrun: the hook failed (${(e as Error)?.message ?? e}); blocked (fail closed)\n` : `longrun: ${(e as Error)?.stack ?? e}\n`);
  process.exit(gating ? 2 : 1);
};
if (gating) {
  process.on("uncaughtException", failure);
  process.on("unhandledRejection", failure);
}

type Command = (argv: string[]) => Promise<number>;
(argv[0] === "hook"
  ? loadOwn<{ runHook: Command }>("hooks/command").then((m) => m.runHook(argv.slice(1)))
  : loadOwn<{ main: Command }>("cli/main").then((m) => m.main(argv))
).then(
  (code) => process.exit(code),
  failure,
);
