/**
 * Benchmark (not a test): a parent run's `budget.status` with many finished child runs against the
 * same call on a parent with none, measured in the same run, interleaved so machine noise hits both.
 *
 *   node_modules/.bin/bun bench/child_budget.ts [children] [rounds] [--sqld] [--json]
 *
 * Two `dist/longrun serve` processes ($LONGRUN_BIN), each on its own root (local, or `--sqld`: each
 * on its own sqld on 127.0.0.1): in one, a running parent with `children` (default 500) finished
 * child runs, each with one receipt and two charges; in the other, the same parent with the same
 * spend and no children (the floor: one run's status). Prints p50/p90 of each and the ratio of the
 * p50s; a parent's status should not grow with the children it has finished.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSqld } from "../tests/support/sqld.ts";
import { pct, Serve } from "./lib/stdio_client.ts";

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const json = process.argv.includes("--json");
const onSqld = process.argv.includes("--sqld");
const children = Number(args[0] ?? 500);
const rounds = Number(args[1] ?? 300);
const dirs = [mkdtempSync(join(tmpdir(), "longrun-bench-child-")), mkdtempSync(join(tmpdir(), "longrun-bench-child-"))];
const servers = onSqld ? [await startSqld(), await startSqld()] : [];
const open = (i: number) => (onSqld ? new Serve(["--store", servers[i]!.url, "--project", "bench", "--state-dir", dirs[i]!]) : new Serve(dirs[i]!));

async function parent(s: Serve, n: number): Promise<string> {
  await s.call("task.start", { description: "survey the funds" });
  const run = (await s.call("run.start", { owner: "lead", tools: ["fetch"], budget: { requests: 10 * children + 10, cost: 10 * children + 10 } })).run;
  for (let i = 0; i < n; i++) {
    const c = (await s.call("run.child", { run_id: run.run_id, epoch: 1, owner: `sub-${i}`, budget: { requests: 3, cost: 3 } })).run;
    const r = (await s.call("receipt.begin", { run_id: c.run_id, epoch: 1, tool: "fetch", idempotency_key: `k-${i}`, args: { i } })).receipt;
    await s.call("receipt.settle", { run_id: c.run_id, epoch: 1, receipt_id: r.receipt_id, outcome: "completed", result_ref: `r-${i}` });
    await s.call("budget.charge", { run_id: c.run_id, epoch: 1, requests: 1, cost: 0.5 });
    await s.call("budget.charge", { run_id: c.run_id, epoch: 1, requests: 1, cost: 0.25 });
    await s.call("run.finish", { run_id: c.run_id, epoch: 1, outcome: "read one report" });
  }
  // the same spend without children, so both parents report the same numbers
  if (n === 0) await s.call("budget.charge", { run_id: run.run_id, epoch: 1, requests: 2 * children, cost: 0.75 * children });
  return run.run_id;
}

const many = open(0);
const none = open(1);
const ids = [await parent(many, children), await parent(none, 0)];
const a = (await many.call("budget.status", { run_id: ids[0] })).budget;
const b = (await none.call("budget.status", { run_id: ids[1] })).budget;
if (a.spent.requests !== b.spent.requests) throw new Error(`the two parents differ: ${a.spent.requests} vs ${b.spent.requests} requests spent`);

const times = { many: [] as number[], none: [] as number[] };
const time = async (s: Serve, id: string, into: number[]) => {
  const t = performance.now();
  await s.call("budget.status", { run_id: id });
  into.push(performance.now() - t);
};
for (let i = 0; i < 20; i++) await Promise.all([time(many, ids[0]!, []), time(none, ids[1]!, [])]);
for (let i = 0; i < rounds; i++) {
  if (i % 2) {
    await time(many, ids[0]!, times.many);
    await time(none, ids[1]!, times.none);
  } else {
    await time(none, ids[1]!, times.none);
    await time(many, ids[0]!, times.many);
  }
}
await many.close();
await none.close();
for (const s of servers) await s.stop();
for (const d of dirs) rmSync(d, { recursive: true, force: true });

const out = {
  store: onSqld ? "sqld" : "local",
  children,
  rounds,
  many_p50_ms: pct(times.many, 0.5),
  many_p90_ms: pct(times.many, 0.9),
  none_p50_ms: pct(times.none, 0.5),
  none_p90_ms: pct(times.none, 0.9),
  ratio: pct(times.many, 0.5) / pct(times.none, 0.5),
};
if (json) console.log(JSON.stringify(out));
else {
  const f = (x: number) => x.toFixed(3);
  console.log(`budget.status of a parent (${out.store}), ${rounds} rounds`);
  console.log(`  ${children} finished children  p50 ${f(out.many_p50_ms)} ms  p90 ${f(out.many_p90_ms)} ms`);
  console.log(`  no children            p50 ${f(out.none_p50_ms)} ms  p90 ${f(out.none_p90_ms)} ms`);
  console.log(`  ratio (p50)            ${out.ratio.toFixed(2)}x`);
}
