/**
 * `longrun sandbox --mode read|lease --root ROOT -- PROGRAM [ARGS...]`: runs one command inside
 * the operating system's boundary the lease allows (src/sandbox/). Claude Code's PreToolUse hook
 * rewrites every Bash command it lets through into this. Per command, so its static imports stay
 * small: no libSQL, no root opened.
 *
 * Exit status: the command's own (128+N when a signal ended it); 126 when the boundary could not
 * be made (the command did not run); 2 for bad usage. Either of the last two is one line on stderr.
 */
import { parseArgs } from "node:util";
import { runSandboxed, SandboxError } from "../sandbox/run.ts";

function say(line: string): void {
  process.stderr.write(`longrun sandbox: ${line.replace(/\s*\n\s*/g, " ")}\n`);
}

function usage(line: string): number {
  say(`${line}; usage: longrun sandbox --mode read|lease --root DIR -- PROGRAM [ARGS...]`);
  return 2;
}

export async function runSandbox(argv: string[]): Promise<number> {
  const dash = argv.indexOf("--");
  if (dash < 0) return usage("the command goes after --");
  const command = argv.slice(dash + 1);
  if (command.length === 0) return usage("no command after --");
  let values: { mode?: string; root?: string };
  try {
    values = parseArgs({ args: argv.slice(0, dash), options: { mode: { type: "string" }, root: { type: "string" } }, allowPositionals: false, strict: true }).values;
  } catch (e) {
    return usage((e as Error).message);
  }
  if (values.mode === undefined) return usage("--mode is missing");
  if (values.root === undefined) return usage("--root is missing");
  try {
    return await runSandboxed({ mode: values.mode, root: values.root, command });
  } catch (e) {
    // whatever stopped it (a full temporary directory, …), the command did not run unconfined
    say(e instanceof SandboxError ? e.message : `${(e as Error).message}, so the command was not run`);
    return 126;
  }
}
