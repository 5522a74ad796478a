/**
 * Benchmark (not a test): memory search at 10k, 100k and 1M memories in one root, through the
 * protocol, with what the import costs.
 *
 *   node_modules/.bin/bun bench/search_scale.ts [sizes, default 10000,100000,1000000] [--cache] [--rounds R] [--json]
 *
 * For each size, a fresh root is filled through `dist/longrun serve` ($LONGRUN_BIN) over stdio with
 * `memory.save_many` (1,000 records a call) from a generated mixed Chinese / Korean / English
 * corpus (the one tests/memory/recall.test.ts uses, scaled up); then 300 searches over the query
 * classes (English words, one, two and longer CJK terms, mixed terms) are timed one at a time,
 * after a warm-up, each a JSON-RPC round trip. Prints import rate, database size per 100k,
 * the server's peak RSS, and search p50/p99 per size. Target (issue 9): p99 < 20 ms at 1M; issue
 * 26: < 5 ms.
 * `--cache`: each root is built once under dist/bench-cache/search-<n>/ and searched again on
 * later runs (delete it to rebuild; the import rate printed is the one measured when it was built).
 * `--rounds R`: R rounds of 300 timed searches, each a new `serve` (a fresh process, warm cache).
 * `--json`: one JSON object (for bench/run.ts). LONGRUN_BENCH_KEEP=1 keeps each fresh root (its
 * path goes to stderr) for profiling.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { QUERIES, rng, sentence } from "../tests/fixtures/mixed_corpus.ts";
import { pct, REPO, Serve } from "./lib/stdio_client.ts";

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: { cache: { type: "boolean", default: false }, rounds: { type: "string", default: "1" }, json: { type: "boolean", default: false } },
});
const sizes = (positionals[0] ?? "10000,100000,1000000").split(",").map(Number);
const rounds = Number(opts.rounds);

/** Fills a new root with `n` memories through `save_many`; returns the import rate (records/s). */
async function fill(root: string, n: number): Promise<number> {
  const r = rng(7);
  const s = new Serve(root);
  const t0 = performance.now();
  for (let i = 0; i < n; i += 1000) {
    const items = Array.from({ length: Math.min(1000, n - i) }, () => ({ type: "note", title: sentence(r).slice(0, 40), content: `${sentence(r)} ${sentence(r)}` }));
    await s.call("memory.save_many", { items });
  }
  const rate = n / ((performance.now() - t0) / 1000);
  await s.close();
  return rate;
}

/** A root of `n` memories: cached (built on first use) or fresh. */
async function rootOf(n: number): Promise<{ root: string; rate: number; fresh: boolean }> {
  if (!opts.cache) {
    const root = mkdtempSync(join(tmpdir(), "longrun-bench-search-"));
    return { root, rate: await fill(root, n), fresh: true };
  }
  const root = join(REPO, "dist", "bench-cache", `search-${n}`);
  const done = join(root, ".bench-built.json");
  if (!existsSync(done)) {
    mkdirSync(join(REPO, "dist", "bench-cache"), { recursive: true });
    const tmp = `${root}.tmp.${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp);
    console.error(`building ${n.toLocaleString("en-US")} memories in ${root} (once)`);
    const rate = await fill(tmp, n);
    writeFileSync(join(tmp, ".bench-built.json"), JSON.stringify({ n, rate, built: new Date().toISOString() }));
    rmSync(root, { recursive: true, force: true });
    renameSync(tmp, root);
  }
  return { root, rate: (JSON.parse(readFileSync(done, "utf8")) as { rate: number }).rate, fresh: false };
}

interface Result {
  n: number;
  rate: number;
  mbPer100k: number;
  rssMb: number;
  rounds: { p50: number; p99: number; max: number }[];
}
const results: Result[] = [];
for (const n of sizes) {
  const { root, rate, fresh } = await rootOf(n);
  const perRound: Result["rounds"] = [];
  let rss = 0;
  for (let round = 0; round < rounds; round++) {
    const s = new Serve(root);
    for (const q of QUERIES) await s.call("memory.search", { query: q, limit: 10 });
    const times: number[] = [];
    for (let i = 0; i < 300; i++) {
      const q = QUERIES[i % QUERIES.length]!;
      const a = performance.now();
      await s.call("memory.search", { query: q, limit: 10 });
      times.push(performance.now() - a);
    }
    rss = Math.max(rss, s.peakRssMb());
    await s.close();
    perRound.push({ p50: pct(times, 0.5), p99: pct(times, 0.99), max: Math.max(...times) });
  }
  const bytes = readdirSync(root).filter((f) => f.startsWith("memory.db")).reduce((sum, f) => sum + statSync(join(root, f)).size, 0);
  results.push({ n, rate, mbPer100k: ((bytes / n) * 100_000) / 1e6, rssMb: rss, rounds: perRound });
  if (fresh && process.env.LONGRUN_BENCH_KEEP) console.error(`kept ${root}`);
  else if (fresh) rmSync(root, { recursive: true, force: true });
  if (!opts.json) console.error(`done ${n}`);
}
if (opts.json) {
  console.log(JSON.stringify({ queries: QUERIES.length, timed: 300, results }));
} else {
  console.log(`memory search through longrun serve (stdio), ${QUERIES.length} queries of every class, 300 timed per round, ${rounds} round(s) (${new Date().toISOString().slice(0, 10)})\n`);
  console.log("| memories | import rate (records/s, save_many over stdio) | MB per 100k | server peak RSS MB | search p50 ms | p99 ms | max ms |");
  console.log("|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of results) {
    const med = (f: (x: Result["rounds"][number]) => number) => [...r.rounds.map(f)].sort((a, b) => a - b)[Math.floor(r.rounds.length / 2)]!;
    console.log(`| ${r.n.toLocaleString("en-US")} | ${Math.round(r.rate).toLocaleString("en-US")} | ${r.mbPer100k.toFixed(1)} | ${r.rssMb.toFixed(0)} | ${med((x) => x.p50).toFixed(2)} | ${med((x) => x.p99).toFixed(2)} | ${med((x) => x.max).toFixed(1)} |`);
  }
}
