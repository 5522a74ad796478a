/**
 * Benchmark (not a test): `task.checkpoint` against the floor it cannot beat, one durable libSQL
 * insert, measured in the same run, interleaved so machine noise hits both.
 *
 *   node_modules/.bin/bun bench/checkpoint.ts [rounds] [worker|inline]
 *
 * - checkpoint: `root.contract.checkpoint` on a real root (kind "progress", so the task stays in
 *   progress and every round is the same work): render, memory record + FTS index + state row,
 *   one commit. `worker` (the default) is how the servers run it: the transaction's statements go
 *   to the writer Worker; `inline` is how a hook or the CLI runs it;
 * - reference: one `INSERT` of a row of the same size into a plain table of another libSQL
 *   database opened the same way (WAL, synchronous=FULL), in its own transaction.
 * Prints p50/p90 of each and the ratio. Target (issue 9): checkpoint p50 within 1.5x of the insert.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Database } from "../src/db/database.ts";
import { Root } from "../src/root/root.ts";

const rounds = Number(process.argv[2] ?? 300);
const mode = process.argv[3] === "inline" ? "inline" : "worker";
const dir = mkdtempSync(join(tmpdir(), "longrun-bench-cp-"));
const ref = mkdtempSync(join(tmpdir(), "longrun-bench-ref-"));
const root = await Root.open(dir, { searchInWorker: mode === "worker" });
const db = await Database.open(pathToFileURL(join(ref, "ref.db")).href);
await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
await root.contract.startTask("benchmark the checkpoint");

const summary = "Adapters for suppliers one and two are done; the third needs the new auth flow. ".repeat(4);
const cp = { summary, next_step: "wire the auth flow", kind: "progress" };
const text = "x".repeat(900); // about the size of a rendered checkpoint
const times = { checkpoint: [] as number[], insert: [] as number[] };

async function once(which: "checkpoint" | "insert"): Promise<number> {
  const t0 = performance.now();
  if (which === "checkpoint") await root.contract.checkpoint(cp);
  else await db.write((tx) => tx.execute({ sql: "INSERT INTO t(body) VALUES (?)", args: [text] }));
  return performance.now() - t0;
}

for (let i = 0; i < 20; i++) {
  await once("checkpoint");
  await once("insert");
}
for (let i = 0; i < rounds; i++) {
  const order: ("checkpoint" | "insert")[] = i % 2 ? ["checkpoint", "insert"] : ["insert", "checkpoint"];
  for (const w of order) times[w].push(await once(w));
}
await root.close();
await db.close();
rmSync(dir, { recursive: true, force: true });
rmSync(ref, { recursive: true, force: true });

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const cp50 = pct(times.checkpoint, 0.5);
const in50 = pct(times.insert, 0.5);
console.log(`task.checkpoint (${mode}) vs one durable insert, ${rounds} rounds each, interleaved (${new Date().toISOString().slice(0, 10)})\n`);
console.log("| case | p50 ms | p90 ms |");
console.log("|---|---:|---:|");
console.log(`| task.checkpoint (progress), in-process, writes ${mode === "worker" ? "in the writer Worker" : "inline"} | ${cp50.toFixed(3)} | ${pct(times.checkpoint, 0.9).toFixed(3)} |`);
console.log(`| reference: one durable libSQL insert | ${in50.toFixed(3)} | ${pct(times.insert, 0.9).toFixed(3)} |`);
console.log(`\nratio p50: ${(cp50 / in50).toFixed(2)}x (target <= 1.5x: ${cp50 / in50 <= 1.5 ? "met" : "NOT met"})`);
