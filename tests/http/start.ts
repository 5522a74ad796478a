/** `longrun http` as a child process: started, its first stdout line (URL, token file, login link) read. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createServer } from "node:net";
import { REPO, until } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";

export interface HttpChild {
  child: ChildProcessWithoutNullStreams;
  /**
   * The first stdout line: `url`, `token_file`, `tokens`, and `page`, the one-time login link
   * (asked for with `--login-link` unless `loginLink: false`; then `login` says how to get one).
   */
  info: { url: string; token_file: string; tokens: string; page: string; login?: string };
  port: number;
  stderr: () => string;
  exited: Promise<number | null>;
  /** `signal` (SIGTERM) unless it already ended; resolves to its exit code once it has. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs `argv… http <args>` (argv: the binary, or `deno run … src/main.ts`) and waits for its first
 * line. `env` is added to this process's environment; with `cleanEnv`, to it without its LONGRUN_
 * variables (the configuration by environment is then only what the test gives). `--login-link`
 * is added unless `loginLink` is false.
 */
export async function startHttpChild(
  argv: readonly string[],
  args: readonly string[],
  env: Record<string, string> = {},
  options: { cleanEnv?: boolean; loginLink?: boolean } = {},
): Promise<HttpChild> {
  if (argv[0] === BINARY) requireBinary();
  const base = options.cleanEnv ? Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LONGRUN_"))) : process.env;
  const link = options.loginLink === false ? [] : ["--login-link"];
  const child = spawn(argv[0]!, [...argv.slice(1), "http", ...args, ...link], { cwd: REPO, env: { ...base, ...env } });
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
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, signal); // not child.kill: under Deno the exit code was then null where SIGTERM exits 0
    return exited;
  };
  return { child, info, port: Number(new URL(info.url).port), stderr: () => err, exited, stop };
}

/** A port free now (there is a window before the server binds it; good enough on one test machine). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
