/**
 * Benchmark (not a test): `task.checkpoint` against the floor it cannot beat, one durable libSQL
 * insert, measured in the same run, interleaved so machine noise hits both.
 *
 *   node_modules/.bin/bun bench/checkpoint.ts [rounds] [worker|inline|stdio] [--json]
 *
 * - checkpoint: `root.contract.checkpoint` on a real root (kind "progress", so the task stays in
 *   progress and every round is the same work): render, memory record + FTS index + state row,
 *   one commit. `worker` (the default) is how the servers run it: the transaction's statements go
 *   to the writer Worker; `inline` is how a hook or the CLI runs it;
 * - reference: one `INSERT` of a row of the same size into a plain table of another libSQL
 *   database opened the same way (WAL, synchronous=FULL), in its own transaction.
 * `stdio` measures both over stdio, as a host sees them: `task.checkpoint` sent to `dist/longrun
 * serve` ($LONGRUN_BIN) against bench/insert_server.ts, a stdio server on longrun's own framing that
 * does the reference insert per request.
 * Prints p50/p90 of each and the ratio (`--json`: one JSON object, for bench/run.ts). Targets:
 * issue 9, in-process within 1.5x of the insert; issue 26, over stdio within 1.3x.
 * `LONGRUN_BIN_VS=<another build>` (stdio): that build's `serve` too, on its own root, in the same
 * rounds (a change measured paired against the build before it): `vs_p50_ms` and `paired`, the
 * median of the per-round ratios of this build's checkpoint to that one's.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Database } from "../src/db/database.ts";
import { Root } from "../src/root/root.ts";
import { REPO, Serve } from "./lib/stdio_client.ts";

const args = process.argv.slice(2).filter((a) => a !== "--json");
const json = process.argv.includes("--json");
const rounds = Number(args[0] ?? 300);
const mode = args[1] === "inline" ? "inline" : args[1] === "stdio" ? "stdio" : "worker";
const dir = mkdtempSync(join(tmpdir(), "longrun-bench-cp-"));
const ref = mkdtempSync(join(tmpdir(), "longrun-bench-ref-"));

const summary = "Adapters for suppliers one and two are done; the third needs the new auth flow. ".repeat(4);
const cp = { summary, next_step: "wire the auth flow", kind: "progress" };
const text = "x".repeat(900); // about the size of a rendered checkpoint
const times = { checkpoint: [] as number[], insert: [] as number[], vs: [] as number[] };
const VS = mode === "stdio" ? process.env.LONGRUN_BIN_VS : undefined;
const vsDir = VS ? mkdtempSync(join(tmpdir(), "longrun-bench-cp-vs-")) : null;

let checkpoint: () => Promise<unknown>;
let vs: (() => Promise<unknown>) | null = null;
let insert: () => Promise<unknown>;
let close: () => Promise<void>;
if (mode === "stdio") {
  const lr = new Serve(dir);
  const server = new Serve(ref, [join(REPO, "node_modules/.bin/bun"), join(REPO, "bench/insert_server.ts"), ref]);
  await lr.call("task.start", { description: "benchmark the checkpoint" });
  checkpoint = () => lr.call("task.checkpoint", cp);
  insert = () => server.call("insert", {});
  const other = VS && vsDir ? new Serve(vsDir, [VS, "serve", "--root", vsDir]) : null;
  if (other) {
    await other.call("task.start", { description: "benchmark the checkpoint" });
    vs = () => other.call("task.checkpoint", cp);
  }
  close = async () => {
    await lr.close();
    await server.close();
    await other?.close();
  };
} else {
  const root = await Root.open(dir, { searchInWorker: mode === "worker" });
  const db = await Database.open(pathToFileURL(join(ref, "ref.db")).href);
  await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  await root.contract.startTask("benchmark the checkpoint");
  checkpoint = () => root.contract.checkpoint(cp);
  insert = () => db.write((tx) => tx.execute({ sql: "INSERT INTO t(body) VALUES (?)", args: [text] }));
  close = async () => {
    await root.close();
    await db.close();
  };
}

type Op = "checkpoint" | "insert" | "vs";
async function once(which: Op): Promise<number> {
  const t0 = performance.now();
  await (which === "checkpoint" ? checkpoint() : which === "insert" ? insert() : vs!());
  return performance.now() - t0;
}

const ops: Op[] = vs ? ["checkpoint", "insert", "vs"] : ["checkpoint", "insert"];
for (let i = 0; i < 20; i++) for (const w of ops) await once(w);
for (let i = 0; i < rounds; i++) {
  const order = i % 2 ? ops : [...ops].reverse();
  for (const w of order) times[w].push(await once(w));
}
await close();
rmSync(dir, { recursive: true, force: true });
rmSync(ref, { recursive: true, force: true });
if (vsDir) rmSync(vsDir, { recursive: true, force: true });

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const cp50 = pct(times.checkpoint, 0.5);
const in50 = pct(times.insert, 0.5);
const paired = vs ? { vs_p50_ms: pct(times.vs, 0.5), paired: pct(times.checkpoint.map((x, i) => x / times.vs[i]!), 0.5) } : {};
if (json) {
  console.log(JSON.stringify({ mode, rounds, checkpoint_p50_ms: cp50, insert_p50_ms: in50, checkpoint_p90_ms: pct(times.checkpoint, 0.9), insert_p90_ms: pct(times.insert, 0.9), ...paired }));
  process.exit(0);
}
const where = mode === "stdio" ? "over stdio (dist/longrun serve)" : `in-process, writes ${mode === "worker" ? "in the writer Worker" : "inline"}`;
const target = mode === "stdio" ? 1.3 : 1.5;
console.log(`task.checkpoint (${mode}) vs one durable insert, ${rounds} rounds each, interleaved (${new Date().toISOString().slice(0, 10)})\n`);
console.log("| case | p50 ms | p90 ms |");
console.log("|---|---:|---:|");
console.log(`| task.checkpoint (progress), ${where} | ${cp50.toFixed(3)} | ${pct(times.checkpoint, 0.9).toFixed(3)} |`);
console.log(`| reference: one durable libSQL insert${mode === "stdio" ? " (bench/insert_server.ts, over stdio)" : ""} | ${in50.toFixed(3)} | ${pct(times.insert, 0.9).toFixed(3)} |`);
console.log(`\nratio p50: ${(cp50 / in50).toFixed(2)}x (target <= ${target}x: ${cp50 / in50 <= target ? "met" : "NOT met"})`);
if (vs) console.log(`against ${VS}: its p50 ${paired.vs_p50_ms!.toFixed(3)} ms; this build / that one, median of the per-round ratios: ${paired.paired!.toFixed(2)}x`);
