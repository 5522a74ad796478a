/**
 * Benchmark (not a test): a root on a libSQL server (sqld on 127.0.0.1) against a local root, in
 * the same run — the gate check (`writes.require`), a progress checkpoint and a memory search,
 * each as sequential JSON-RPC calls to `dist/longrun serve` over stdio:
 *
 *   local    --root DIR
 *   http     --store http://127.0.0.1:PORT (Hrana over HTTP)
 *   ws       --store ws://127.0.0.1:PORT   (Hrana over WebSocket)
 *
 *   node_modules/.bin/bun bench/server_store.ts [calls per op, default 300] [rounds, default 3] [--json]
 *
 * Each store gets a task with a granted lease and 2,000 memories first (`memory.save_many`). Rounds
 * alternate the stores (the machine is shared and noisy); prints p50/p95 per op and store over all
 * rounds, and the ratio of each server store's p50 to the local one. Two references run in the
 * same rounds, from this process through `@libsql/client` to each sqld (issue 26): `SELECT 1` (the
 * least a request to the server costs; target for the gate check: <= 1.2x) and one `batch` of an
 * `INSERT` of about a rendered checkpoint's size in a write transaction (one durable round trip;
 * what a checkpoint in one batch would cost). `--json`: per round p50s, one JSON object (bench/run.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { pct, Serve } from "./lib/stdio_client.ts";
import { startSqld } from "../tests/support/sqld.ts";

const args = process.argv.slice(2).filter((a) => a !== "--json");
const json = process.argv.includes("--json");
const calls = Number(args[0] ?? 300);
const rounds = Number(args[1] ?? 3);
const say = json ? (_: string) => {} : (line: string) => console.log(line);
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
  for (let i = 0; i < MEMORIES; i += 500) {
    const items = Array.from({ length: 500 }, (_, k) => i + k).map((j) => ({ type: "note", title: `${words[j % 10]} note ${j}`, content: `${words[(j * 7) % 10]} and ${words[(j * 3) % 10]} body ${j}` }));
    await s.call("memory.save_many", { items });
  }
  say(`${name}: seeded ${MEMORIES} memories in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

// the references: this process to each sqld through @libsql/client
const refClients = { http: createClient({ url: sqldHttp.url }), ws: createClient({ url: sqldWs.ws }) };
for (const c of Object.values(refClients)) await c.execute("CREATE TABLE IF NOT EXISTS bench_ref (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
const text = "x".repeat(900);
type RefOp = "select1" | "insert";
const refSamples: Record<string, Record<RefOp, number[]>> = { http: { select1: [], insert: [] }, ws: { select1: [], insert: [] } };

type Op = "gate" | "checkpoint" | "search";
const samples: Record<string, Record<Op, number[]>> = {};
for (const name of Object.keys(stores)) samples[name] = { gate: [], checkpoint: [], search: [] };
/** Per round: the p50 of every op of every store and reference (bench/run.ts takes min/median/max over rounds). */
const perRound: Record<string, number>[] = [];

async function time(s: Serve, method: string, params: Record<string, unknown>, into: number[]) {
  const t0 = performance.now();
  await s.call(method, params);
  into.push(performance.now() - t0);
}

async function timeRef(fn: () => Promise<unknown>, into: number[]) {
  const t0 = performance.now();
  await fn();
  into.push(performance.now() - t0);
}

for (let round = 0; round < rounds; round++) {
  const p50s: Record<string, number> = {};
  for (const [name, s] of Object.entries(stores)) {
    const mark = { gate: samples[name]!.gate.length, checkpoint: samples[name]!.checkpoint.length, search: samples[name]!.search.length };
    await s.call("writes.enable", { reason: "bench" });
    for (let i = 0; i < calls; i++) await time(s, "writes.require", { action: "edit bench.md" }, samples[name]!.gate);
    for (let i = 0; i < calls; i++) await time(s, "task.checkpoint", { summary: `round ${round} step ${i}`, next_step: "go on", kind: "progress" }, samples[name]!.checkpoint);
    for (let i = 0; i < calls; i++) await time(s, "memory.search", { query: words[i % 10], limit: 10 }, samples[name]!.search);
    for (const op of ["gate", "checkpoint", "search"] as const) p50s[`${name}.${op}`] = pct(samples[name]![op].slice(mark[op]), 0.5);
    const ref = refClients[name as keyof typeof refClients];
    if (ref) {
      const into = refSamples[name]!;
      const m = { select1: into.select1.length, insert: into.insert.length };
      for (let i = 0; i < calls; i++) await timeRef(() => ref.execute("SELECT 1"), into.select1);
      for (let i = 0; i < calls; i++) await timeRef(() => ref.batch([{ sql: "INSERT INTO bench_ref(body) VALUES (?)", args: [text] }], "write"), into.insert);
      p50s[`${name}.select1`] = pct(into.select1.slice(m.select1), 0.5);
      p50s[`${name}.insert`] = pct(into.insert.slice(m.insert), 0.5);
    }
  }
  perRound.push(p50s);
}
for (const c of Object.values(refClients)) c.close();
if (json) {
  console.log(JSON.stringify({ calls, rounds, memories: MEMORIES, rounds_p50_ms: perRound }));
  for (const s of Object.values(stores)) await s.close();
  await sqldHttp.stop();
  await sqldWs.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  process.exit(0);
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
console.log("\nreferences through @libsql/client from this process, and the ratios of longrun's p50 to them");
console.log("ref         store   p50 ms   p95 ms   gate / ref   checkpoint / ref");
for (const name of ["http", "ws"] as const) {
  for (const op of ["select1", "insert"] as const) {
    const xs = refSamples[name]![op];
    const r50 = pct(xs, 0.5);
    console.log(`${op.padEnd(11)} ${name.padEnd(6)} ${ms(r50).padStart(7)}  ${ms(pct(xs, 0.95)).padStart(7)}   ${(pct(samples[name]!.gate, 0.5) / r50).toFixed(2)}x        ${(pct(samples[name]!.checkpoint, 0.5) / r50).toFixed(2)}x`);
  }
}

for (const s of Object.values(stores)) await s.close();
await sqldHttp.stop();
await sqldWs.stop();
for (const d of dirs) rmSync(d, { recursive: true, force: true });
