/** `longrun http` as a child process: started, its first stdout line (URL, token file, login link) read. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { REPO, until } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";

export interface HttpChild {
  child: ChildProcessWithoutNullStreams;
  /** The first stdout line: `url`, `token_file`, `tokens`, `page` (the one-time login link). */
  info: { url: string; token_file: string; page: string };
  port: number;
  stderr: () => string;
  exited: Promise<number | null>;
  /** SIGTERM unless it already ended; resolves once it has. */
  stop(): Promise<void>;
}

/** Runs `argv… http <args>` (argv: the binary, or `deno run … src/main.ts`) and waits for its first line. */
export async function startHttpChild(argv: readonly string[], args: readonly string[], env: Record<string, string> = {}): Promise<HttpChild> {
  if (argv[0] === BINARY) requireBinary();
  const child = spawn(argv[0]!, [...argv.slice(1), "http", ...args], { cwd: REPO, env: { ...process.env, ...env } });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  const line = await until(() => {
    if (child.exitCode !== null) throw new Error(`longrun http exited with ${child.exitCode}: ${err}`);
    return out.split("\n").find((l) => l.startsWith("{"));
  }, `the http server's first line (stderr: ${err})`, 30_000);
  const info = JSON.parse(line) as HttpChild["info"];
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  return { child, info, port: Number(new URL(info.url).port), stderr: () => err, exited, stop };
}
