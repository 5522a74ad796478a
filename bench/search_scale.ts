/**
 * Benchmark (not a test): memory search at 10k, 100k and 1M memories in one root, through the
 * protocol, with what the import costs.
 *
 *   node_modules/.bin/bun bench/search_scale.ts [sizes, default 10000,100000,1000000]
 *
 * For each size, a fresh root is filled through `dist/longrun serve` over stdio with
 * `memory.save_many` (1,000 records a call) from a generated mixed Chinese / Korean / English
 * corpus (the one tests/memory/recall.test.ts uses, scaled up); then 300 searches over the query
 * classes (English words, one, two and longer CJK terms, mixed terms) are timed one at a time,
 * after a warm-up, each a JSON-RPC round trip. Prints import rate, database size per 100k,
 * the server's peak RSS, and search p50/p99 per size. Target (issue 9): p99 < 20 ms at 1M.
 * LONGRUN_BENCH_KEEP=1 keeps each root (its path goes to stderr) for profiling.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QUERIES, rng, sentence } from "../tests/fixtures/mixed_corpus.ts";
import { pct, Serve } from "./lib/stdio_client.ts";

const sizes = (process.argv[2] ?? "10000,100000,1000000").split(",").map(Number);
const r = rng(7);

const rows: string[] = [];
for (const n of sizes) {
  const root = mkdtempSync(join(tmpdir(), "longrun-bench-search-"));
  const s = new Serve(root);
  const t0 = performance.now();
  for (let i = 0; i < n; i += 1000) {
    const items = Array.from({ length: Math.min(1000, n - i) }, () => ({ type: "note", title: sentence(r).slice(0, 40), content: `${sentence(r)} ${sentence(r)}` }));
    await s.call("memory.save_many", { items });
  }
  const importSec = (performance.now() - t0) / 1000;
  for (const q of QUERIES) await s.call("memory.search", { query: q, limit: 10 });
  const times: number[] = [];
  for (let i = 0; i < 300; i++) {
    const q = QUERIES[i % QUERIES.length]!;
    const a = performance.now();
    await s.call("memory.search", { query: q, limit: 10 });
    times.push(performance.now() - a);
  }
  const rss = s.peakRssMb();
  await s.close();
  const bytes = readdirSync(root).filter((f) => f.startsWith("memory.db")).reduce((sum, f) => sum + statSync(join(root, f)).size, 0);
  rows.push(`| ${n.toLocaleString("en-US")} | ${Math.round(n / importSec).toLocaleString("en-US")} | ${((bytes / n) * 100_000 / 1e6).toFixed(1)} | ${rss.toFixed(0)} | ${pct(times, 0.5).toFixed(2)} | ${pct(times, 0.99).toFixed(2)} | ${Math.max(...times).toFixed(1)} |`);
  if (process.env.LONGRUN_BENCH_KEEP) console.error(`kept ${root}`);
  else rmSync(root, { recursive: true, force: true });
  console.error(`done ${n}`);
}
console.log(`memory search through longrun serve (stdio), ${QUERIES.length} queries of every class, 300 timed (${new Date().toISOString().slice(0, 10)})\n`);
console.log("| memories | import rate (records/s, save_many over stdio) | MB per 100k | server peak RSS MB | search p50 ms | p99 ms | max ms |");
console.log("|---:|---:|---:|---:|---:|---:|---:|");
for (const row of rows) console.log(row);
