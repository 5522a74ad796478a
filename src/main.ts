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
// A person's command (at a terminal: status, resume, … and hook install) that fails says so in one
// line, exit 2, with no stack; a server (serve, http, mcp) that cannot start exits 1 (docs/reliability.md, docs/http.md).
const PERSON = new Set(["status", "resume", "checkpoint", "finish", "recover", "doctor"]);
const person = PERSON.has(argv[0] ?? "") || (argv[0] === "hook" && (argv[1] === "install" || argv[1] === "uninstall"));
const failure = (e: unknown) => {
  if (gating) process.stderr.write(`longrun: the hook failed (${(e as Error)?.message ?? e}); blocked (fail closed)\n`);
  else if (person) process.stderr.write(`longrun: ${argv[0] === "hook" ? "hook install" : (argv[0] ?? "longrun")} failed: ${oneLine(e)}\n`);
  else process.stderr.write(`longrun: ${(e as Error)?.stack ?? e}\n`);
  process.exit(gating || person ? 2 : 1);
};

/** An error as one line with the way out (a directory it may not write, a full disk). */
function oneLine(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  const message = String((e as Error)?.message ?? e).split("\n")[0] ?? "";
  if (code === "EACCES" || code === "EPERM") return `${message}; run it as a user who may write there (the directory's owner), or make it writable`;
  if (code === "EROFS") return `${message}: the file system is read-only; run it where the project can be written`;
  if (code === "ENOSPC") return `${message}: the disk is full; free space and run it again`;
  return message;
}
if (gating) {
  process.on("uncaughtException", failure);
  process.on("unhandledRejection", failure);
}

// The compiled executable starts with JavaScriptCore's tier-up thresholds scaled up, for the
// per-call hook processes, whose run-once code never pays back a JIT compile (scripts/compile.ts);
// every other command (the servers above all) goes back to the normal policy before it runs.
if (argv[0] !== "hook") (globalThis as { Bun?: { unsafe?: { setJITPolicy?: (scale: number) => void } } }).Bun?.unsafe?.setJITPolicy?.(1);

type Command = (argv: string[]) => Promise<number>;
(argv[0] === "hook"
  ? loadOwn<{ runHook: Command }>("hooks/command").then((m) => m.runHook(argv.slice(1)))
  : loadOwn<{ main: Command }>("cli/main").then((m) => m.main(argv))
).then(
  (code) => process.exit(code),
  failure,
);
