/** A minimal JSON-RPC client for `longrun serve` over stdio, for benchmarks. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const REPO = new URL("../..", import.meta.url).pathname;
/** The executable under test: $LONGRUN_BIN (bench/run.ts sets it), else dist/longrun. */
export const BIN = process.env.LONGRUN_BIN || join(REPO, "dist", "longrun");

export class Serve {
  readonly child: ChildProcessWithoutNullStreams;
  #buf = "";
  #waiting = new Map<number, (v: { result?: unknown; error?: { message: string } }) => void>();
  #id = 1;
  /**
   * `root`: a directory (`--root`), or the arguments that name the root (`--store URL --project KEY …`).
   * `command`: another stdio JSON-RPC server to speak to instead of `longrun serve` (a reference).
   */
  constructor(root: string | string[], command?: readonly string[]) {
    const argv = command ?? [BIN, "serve", ...(typeof root === "string" ? ["--root", root] : root)];
    this.child = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.setEncoding("utf8").on("data", (d: string) => {
      this.#buf += d;
      let nl: number;
      while ((nl = this.#buf.indexOf("\n")) >= 0) {
        const line = this.#buf.slice(0, nl);
        this.#buf = this.#buf.slice(nl + 1);
        const msg = JSON.parse(line);
        this.#waiting.get(msg.id)?.(msg);
        this.#waiting.delete(msg.id);
      }
    });
  }
  // deno-lint-ignore no-explicit-any
  call(method: string, params: Record<string, unknown>): Promise<any> {
    const id = this.#id++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, (m) => (m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result)));
      this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }
  peakRssMb(): number {
    const s = readFileSync(`/proc/${this.child.pid}/status`, "utf8");
    return Number(/VmHWM:\s+(\d+)/.exec(s)![1]) / 1024;
  }
  async close(): Promise<void> {
    this.child.stdin.end();
    await new Promise((r) => this.child.on("close", r));
  }
}

/** The p-th quantile (0..1) of xs, nearest rank. */
export const pct = (xs: readonly number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
