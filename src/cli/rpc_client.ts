/**
 * A minimal JSON-RPC client over a child process's stdio: what the demo uses to drive
 * `longrun serve` in a separate process, the way any host would.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";

export class RpcCallError extends Error {
  constructor(readonly code: number, message: string, readonly data: Record<string, unknown>) {
    super(message);
    this.name = "RpcCallError";
  }
  get kind(): string {
    return String(this.data?.kind ?? "");
  }
}

export class ChildRpc {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #buf = "";
  #next = 1;
  readonly exited: Promise<number | null>;

  constructor(argv: string[], env?: Record<string, string | undefined>) {
    this.#child = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...env } });
    this.#child.stdout.setEncoding("utf8").on("data", (d: string) => this.#onData(d));
    this.#child.stderr.setEncoding("utf8").on("data", (d: string) => process.stderr.write(d));
    this.exited = new Promise((resolve) => this.#child.on("close", (code) => {
      for (const w of this.#waiting.values()) w.reject(new Error(`longrun serve exited (code ${code}) before answering`));
      this.#waiting.clear();
      resolve(code);
    }));
  }

  #onData(d: string): void {
    this.#buf += d;
    let nl: number;
    while ((nl = this.#buf.indexOf("\n")) >= 0) {
      const line = this.#buf.slice(0, nl);
      this.#buf = this.#buf.slice(nl + 1);
      if (!line.trim()) continue;
      const msg = JSON.parse(line);
      const w = this.#waiting.get(msg.id);
      if (!w) continue;
      this.#waiting.delete(msg.id);
      if (msg.error) w.reject(new RpcCallError(msg.error.code, msg.error.message, msg.error.data ?? {}));
      else w.resolve(msg.result);
    }
  }

  call<T = Record<string, unknown>>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }

  /** Closes stdin (the server's cue to finish) and waits for the exit code. */
  close(): Promise<number | null> {
    this.#child.stdin.end();
    return this.exited;
  }
}
