/** The command line: parses argv and hands off to one command. */
import { parseArgs } from "node:util";
import { VERSION } from "../version.ts";
import { runDemo } from "./demo.ts";
import { runHuman } from "./human.ts";
import { runServe } from "./serve.ts";

export const HELP = `longrun ${VERSION} - a runtime contract for long-running AI agents

Usage:
  longrun demo                      the seed's five steps in a temporary root (no LLM, no key)
  longrun serve [--root DIR]        JSON-RPC 2.0 over stdin/stdout, one message per line
  longrun status [--root DIR]       the task, its lease and any pending checkpoint
  longrun resume [--root DIR]       start a new turn, read-only, replaying a pending checkpoint
  longrun checkpoint --summary S --next-step N [--phase P] [--root DIR]
  longrun --version | --help

DIR must be an existing absolute directory; it defaults to the working directory.
Everything of a project lives under it: .longrun/state.json, .longrun/pending_checkpoint.json,
memory.db, raw_data/. Logs go to stderr; in serve mode stdout carries protocol only.
`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === "--version" || command === "-v" || command === "version") {
    process.stdout.write(`longrun ${VERSION}\n`);
    return 0;
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: rest,
      options: {
        root: { type: "string" },
        summary: { type: "string" },
        "next-step": { type: "string" },
        phase: { type: "string" },
        keep: { type: "boolean" },
      },
      allowPositionals: false,
      strict: true,
    }).values;
  } catch (e) {
    process.stderr.write(`longrun: ${(e as Error).message}; see longrun --help\n`);
    return 2;
  }
  const root = typeof values.root === "string" ? values.root : null;
  switch (command) {
    case "serve":
      return runServe({ root });
    case "demo":
      return runDemo(undefined, values.keep === true);
    case "status":
    case "resume":
    case "checkpoint":
      return runHuman(command, { root, summary: values.summary, nextStep: values["next-step"], phase: values.phase });
    default:
      process.stderr.write(`longrun: unknown command ${JSON.stringify(command)}; see longrun --help\n`);
      return 2;
  }
}
