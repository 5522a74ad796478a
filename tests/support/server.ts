/** A real `longrun serve` child process for protocol tests: the compiled binary, or `deno run`. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO, rootArgv, scriptArgv, until } from "./helpers.ts";

export interface Target {
  name: string;
  argv: string[];
}

export const BINARY = join(REPO, "dist", "longrun");
/** The same executable built with crash points kept (`scripts/compile.ts … --crash-points`), for crash tests. */
export const CRASH_BINARY = join(REPO, "dist", "longrun-crashtest");

export const TARGETS: Target[] = [
  { name: "the compiled binary", argv: [BINARY] },
  { name: "deno run src/main.ts", argv: [join(REPO, "node_modules", ".bin", "deno"), "run", "-A", "--no-check", "--quiet", join(REPO, "src", "main.ts")] },
];

/** The source run by this runtime (a change in `src/` shows up without a rebuild), and the compiled binary. */
export const SOURCE_AND_BINARY: Target[] = [
  { name: "the source (this runtime)", argv: scriptArgv(join(REPO, "src", "main.ts")) },
  { name: "the compiled binary", argv: [BINARY] },
];

export function requireBinary(path = BINARY): void {
  if (!existsSync(path)) throw new Error(`${path} is missing: build it with ./compile.sh (npm test builds both executables first)`);
}

/** Fails the test when `target` is the compiled binary and it is not built. */
export function requireTarget(target: Target): void {
  if (target.argv[0] === BINARY) requireBinary();
}

export class Server {
  readonly child: ChildProcessWithoutNullStreams;
  readonly answers: Record<string, unknown>[] = [];
  readonly rawLines: string[] = [];
  stderr = "";
  #buf = "";
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  #next = 1000;

  constructor(target: Target, args: string[], env: Record<string, string> = {}) {
    if (target.argv[0] === BINARY || target.argv[0] === CRASH_BINARY) requireBinary(target.argv[0]);
    this.child = spawn(target.argv[0]!, [...target.argv.slice(1), ...rootArgv(args)], { cwd: REPO, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.setEncoding("utf8").on("data", (d: string) => {
      this.#buf += d;
      let nl: number;
      while ((nl = this.#buf.indexOf("\n")) >= 0) {
        const line = this.#buf.slice(0, nl);
        this.#buf = this.#buf.slice(nl + 1);
        this.rawLines.push(line);
        this.answers.push(JSON.parse(line));
      }
    });
    this.child.stderr.setEncoding("utf8").on("data", (d: string) => (this.stderr += d));
    // a write to a server that was just killed fails through its callback (write() rejects); the
    // stream's own error event must not also crash the test process (Deno emits ECANCELED there)
    this.child.stdin.on("error", () => {});
    this.exited = new Promise((r) => this.child.on("close", (code, signal) => r({ code, signal })));
  }

  write(data: string | Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => this.child.stdin.write(data, (e) => (e ? reject(e) : resolve())));
  }

  /** Sends one request and waits for the answer with its id. */
  async call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.#next++;
    await this.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    return this.answer(id);
  }

  answer(id: unknown, deadlineMs = 15_000): Promise<Record<string, unknown>> {
    return until(() => {
      const a = this.answers.find((x) => x.id === id);
      if (!a && (this.child.exitCode !== null || this.child.signalCode !== null)) throw new Error(`the server exited before answering ${JSON.stringify(id)}`);
      return a;
    }, `an answer with id ${JSON.stringify(id)} (stderr: ${this.stderr})`, deadlineMs);
  }

  async result(method: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
    const a = await this.call(method, params);
    if (a.error) throw new Error(`${method} failed: ${JSON.stringify(a.error)}`);
    return a.result as Record<string, any>;
  }

  async error(method: string, params: Record<string, unknown> = {}): Promise<{ code: number; message: string; data: Record<string, any> }> {
    const a = await this.call(method, params);
    if (!a.error) throw new Error(`${method} unexpectedly succeeded: ${JSON.stringify(a.result)}`);
    return a.error as { code: number; message: string; data: Record<string, any> };
  }

  async close(): Promise<{ code: number | null; signal: string | null }> {
    this.child.stdin.end();
    return this.exited;
  }
}
