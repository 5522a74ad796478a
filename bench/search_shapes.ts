/**
 * Benchmark (not a test): memory search per query shape at 1M memories (or the size given), over
 * stdio through `dist/longrun serve` (or BIN), on a root that is built once and kept, so runs
 * after the first start at once (the same corpus and order as bench/search_scale.ts).
 *
 *   node_modules/.bin/bun bench/search_shapes.ts [size, default 1000000] [cache dir]
 *
 * Prints p50/p99 per query and over all 300 timed searches (bench/search_scale.ts's loop).
 * BIN=path picks another binary (for A/B runs against a copy of the old one).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { QUERIES, rng, sentence } from "../tests/fixtures/mixed_corpus.ts";
import { pct } from "./lib/stdio_client.ts";
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";

const n = Number(process.argv[2] ?? 1_000_000);
const root = process.argv[3] ?? `/tmp/longrun-search-shapes-${n}`;
const bin = process.env.BIN ?? join(new URL("..", import.meta.url).pathname, "dist", "longrun");

class Serve {
  readonly child: ChildProcessByStdio<Writable, Readable, null>;
  #buf = "";
  #waiting = new Map<number, (v: { result?: unknown; error?: { message: string } }) => void>();
  #id = 1;
  constructor(dir: string) {
    this.child = spawn(bin, ["serve", "--root", dir], { stdio: ["pipe", "pipe", "inherit"] });
    this.child.stdout.setEncoding("utf8").on("data", (d: string) => {
      this.#buf += d;
      let nl: number;
      while ((nl = this.#buf.indexOf("\n")) >= 0) {
        const msg = JSON.parse(this.#buf.slice(0, nl));
        this.#buf = this.#buf.slice(nl + 1);
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
  async close(): Promise<void> {
    this.child.stdin.end();
    await new Promise((r) => this.child.on("close", r));
  }
}

const marker = join(root, ".built");
if (!existsSync(marker)) {
  mkdirSync(root, { recursive: true });
  const r = rng(7);
  const s = new Serve(root);
  for (let i = 0; i < n; i += 1000) {
    const items = Array.from({ length: Math.min(1000, n - i) }, () => ({ type: "note", title: sentence(r).slice(0, 40), content: `${sentence(r)} ${sentence(r)}` }));
    await s.call("memory.save_many", { items });
  }
  await s.close();
  writeFileSync(marker, String(n));
  console.error(`built ${root}`);
}
const s = new Serve(root);
const t0 = performance.now();
await s.call("memory.search", { query: "warmup", limit: 10 });
console.error(`first search ${(performance.now() - t0).toFixed(0)} ms (includes any reindex)`);
for (const q of QUERIES) await s.call("memory.search", { query: q, limit: 10 });
const per = new Map<string, number[]>();
const all: number[] = [];
for (let i = 0; i < 300; i++) {
  const q = QUERIES[i % QUERIES.length]!;
  const a = performance.now();
  await s.call("memory.search", { query: q, limit: 10 });
  const t = performance.now() - a;
  all.push(t);
  per.set(q, [...(per.get(q) ?? []), t]);
}
await s.close();
for (const [q, ts] of per) console.log(`${q.padEnd(14)} p50 ${pct(ts, 0.5).toFixed(2)}  max ${Math.max(...ts).toFixed(2)} ms`);
console.log(`all 300: p50 ${pct(all, 0.5).toFixed(2)} p99 ${pct(all, 0.99).toFixed(2)} max ${Math.max(...all).toFixed(2)} ms`);
