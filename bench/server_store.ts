/**
 * Benchmark (not a test): a root on a libSQL server (sqld on 127.0.0.1) against a local root, in
 * the same run — the gate check (`writes.require`), a progress checkpoint and a memory search,
 * each as sequential JSON-RPC calls to `dist/longrun serve` over stdio:
 *
 *   local    --root DIR
 *   http     --store http://127.0.0.1:PORT (Hrana over HTTP)
 *   ws       --store ws://127.0.0.1:PORT   (Hrana over WebSocket)
 *
 *   node_modules/.bin/bun bench/server_store.ts [calls per op, default 300] [rounds, default 3]
 *
 * Each store gets a task with a granted lease and 2,000 memories first. Rounds alternate the stores
 * (the machine is shared and noisy); prints p50/p95 per op and store over all rounds, and the ratio
 * of each server store's p50 to the local one.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pct, Serve } from "./lib/stdio_client.ts";
import { startSqld } from "../tests/support/sqld.ts";

const calls = Number(process.argv[2] ?? 300);
const rounds = Number(process.argv[3] ?? 3);
const MEMORIES = 2000;

const sqldHttp = await startSqld();
const sqldWs = await startSqld();
const dirs = [mkdtempSync(join(tmpdir(), "longrun-bench-store-")), mkdtempSync(join(tmpdir(), "longrun-bench-store-")), mkdtempSync(join(tmpdir(), "longrun-bench-store-"))];
const stores: Record<string, Serve> = {
  local: new Serve(dirs[0]!),
  http: new Serve(["--store", sqldHttp.url, "--project", "bench", "--state-dir", dirs[1]!]),
  ws: new Serve(["--store", sqldWs.ws, "--project", "bench", "--state-dir", dirs[2]!]),
};
const words = ["lease", "checkpoint", "ledger", "receipt", "budget", "replica", "gate", "memory", "turn", "epoch"];
for (const [name, s] of Object.entries(stores)) {
  const t0 = performance.now();
  await s.call("task.start", { description: "benchmark the store" });
  for (let i = 0; i < MEMORIES; i++) {
    await s.call("memory.save", { type: "note", title: `${words[i % 10]} note ${i}`, content: `${words[(i * 7) % 10]} and ${words[(i * 3) % 10]} body ${i}` });
  }
  console.log(`${name}: seeded ${MEMORIES} memories in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

type Op = "gate" | "checkpoint" | "search";
const samples: Record<string, Record<Op, number[]>> = {};
for (const name of Object.keys(stores)) samples[name] = { gate: [], checkpoint: [], search: [] };

async function time(s: Serve, method: string, params: Record<string, unknown>, into: number[]) {
  const t0 = performance.now();
  await s.call(method, params);
  into.push(performance.now() - t0);
}

for (let round = 0; round < rounds; round++) {
  for (const [name, s] of Object.entries(stores)) {
    await s.call("writes.enable", { reason: "bench" });
    for (let i = 0; i < calls; i++) await time(s, "writes.require", { action: "edit bench.md" }, samples[name]!.gate);
    for (let i = 0; i < calls; i++) await time(s, "task.checkpoint", { summary: `round ${round} step ${i}`, next_step: "go on", kind: "progress" }, samples[name]!.checkpoint);
    for (let i = 0; i < calls; i++) await time(s, "memory.search", { query: words[i % 10], limit: 10 }, samples[name]!.search);
  }
}

const ms = (x: number) => x.toFixed(3);
console.log(`\n${calls} calls per op per round, ${rounds} rounds, sequential, stdio JSON-RPC to dist/longrun serve; ${MEMORIES} memories per store`);
console.log("op          store   p50 ms   p95 ms   p50 / local");
for (const op of ["gate", "checkpoint", "search"] as const) {
  const local = pct(samples.local![op], 0.5);
  for (const name of Object.keys(stores)) {
    const xs = samples[name]![op];
    console.log(`${op.padEnd(11)} ${name.padEnd(6)} ${ms(pct(xs, 0.5)).padStart(7)}  ${ms(pct(xs, 0.95)).padStart(7)}   ${(pct(xs, 0.5) / local).toFixed(2)}x`);
  }
}

for (const s of Object.values(stores)) await s.close();
await sqldHttp.stop();
await sqldWs.stop();
for (const d of dirs) rmSync(d, { recursive: true, force: true });
