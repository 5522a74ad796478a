/**
 * Benchmark (not a test): `longrun serve`'s start, from spawning the process to its first answer,
 * in roots holding 1k, 100k and 1M memories (issue 26: "starts independent of size").
 *
 *   node_modules/.bin/bun bench/serve_start.ts [--runs N] [--sizes 1000,100000,1000000] [--method writes.require|system.describe]
 *   LONGRUN_BENCH_BIN=path/to/other/longrun …   (time another build over the same roots)
 *
 * Each root is made once and cached under dist/bench-cache/serve-start-<n>/ (delete it to rebuild):
 * `dist/longrun` lays it out (schema, migrations), then memories are inserted directly with SQL
 * in big transactions (rows as `memory.save` writes them, indexed in their slices; one in 500
 * with a long body in raw_data/, as a save over INLINE_BODY_BYTES makes it), a few artifacts
 * and contexts with their blobs too, and one orphan blob old enough to be collected. Each root is
 * The first request is `writes.require` (a gate check, which opens the root) unless `--method`
 * names another (`system.describe` answers without opening it). Each root is
 * then started once untimed (a migration the binary adds runs there, and the page cache is warm).
 * The runs are interleaved across sizes (1k, 100k, 1M, 1k, ...), so load from other processes
 * on the machine falls on every size alike. Prints min/median/max per size and the ratios
 * 1M/1k and 100k/1k: of the medians, of the minimums, and min/median/max of each round's own
 * ratio. Target: ratio ≈ 1.
 */
import { Database as Sqlite } from "bun:sqlite";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHash, randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { indexSteps, SLICE_SIZE_SQL, sliceSizeOf } from "../src/memory/slices.ts";
import { indexColumns } from "../src/memory/segment.ts";
import { rng, sentence } from "../tests/fixtures/mixed_corpus.ts";
import { BIN as DEFAULT_BIN, REPO } from "./lib/stdio_client.ts";

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    sizes: { type: "string", default: "1000,100000,1000000" },
    method: { type: "string", default: "writes.require" },
  },
});
const RUNS = Math.max(3, Number(args.runs));
const SIZES = args.sizes!.split(",").map(Number);
const METHOD = args.method!;
const CACHE = join(REPO, "dist", "bench-cache");
/** The binary timed (LONGRUN_BENCH_BIN: another build, e.g. the one before a change, for an A/B). */
const BIN = process.env.LONGRUN_BENCH_BIN ?? DEFAULT_BIN;
const LONG_EVERY = 500;

/** Starts `serve --root root`, sends one request at once, resolves with ms from spawn to its answer. */
function firstAnswer(root: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(BIN, ["serve", "--root", root], { stdio: ["pipe", "pipe", "pipe"] });
    let buf = "";
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      buf += d;
      if (!buf.includes("\n")) return;
      const ms = performance.now() - t0;
      const msg = JSON.parse(buf.slice(0, buf.indexOf("\n")));
      child.stdin.end();
      // the gate's refusal in a root with no task is an answer too (it had to read the task state)
      const failed = msg.error && !["no_active_task", "write_gate_violation"].includes(msg.error.data?.kind);
      child.on("close", () => (failed ? reject(new Error(`${METHOD}: ${JSON.stringify(msg.error)} ${err}`)) : resolve(ms)));
    });
    child.on("error", reject);
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: METHOD, params: METHOD === "writes.require" ? { action: "edit src/a.ts", root } : {} }) + "\n");
  });
}

/** Lays a root out through the binary (its schema as this longrun makes it), then closes it. */
async function layOut(root: string): Promise<void> {
  mkdirSync(root, { recursive: true });
  await firstAnswer(root);
}

function blobName(prefix: string, body: Uint8Array): { ref: string; sha: string } {
  const sha = createHash("sha256").update(body).digest("hex");
  return { ref: `raw_data/${prefix}-${sha.slice(0, 16)}-${randomBytes(4).toString("hex")}.txt`, sha };
}

/** A root with `n` memories, built once (cached). */
async function fixture(n: number): Promise<string> {
  const root = join(CACHE, `serve-start-${n}`);
  if (existsSync(join(root, ".built"))) return root;
  const tmp = `${root}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
  await layOut(tmp);
  const db = new Sqlite(join(tmp, "memory.db"));
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF");
  const size = sliceSizeOf(db.query(SLICE_SIZE_SQL).all() as Record<string, unknown>[]);
  const r = rng(n);
  const ins = db.prepare(
    `INSERT INTO memories(seq, type, title, content, keywords, task_id, dedupe_key, raw_ref, sha256, size, created_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)`,
  );
  const stmts = new Map<string, ReturnType<typeof db.prepare>>();
  const run = (sql: string, a: (string | number)[]) => {
    let s = stmts.get(sql);
    if (!s) stmts.set(sql, (s = db.prepare(sql)));
    s.run(...a);
  };
  const base = Number((db.query("SELECT COALESCE(MAX(seq), 0) AS m FROM memories").get() as { m: number }).m);
  const at = new Date().toISOString();
  const BATCH = 20_000;
  for (let i = 0; i < n; i += BATCH) {
    db.transaction(() => {
      for (let j = i; j < Math.min(n, i + BATCH); j++) {
        const seq = base + j + 1;
        const title = sentence(r).slice(0, 40);
        let content = `${sentence(r)} ${sentence(r)}`;
        let rawRef: string | null = null;
        let stored = content;
        if (j % LONG_EVERY === LONG_EVERY - 1) {
          content = `${content} ${"long body. ".repeat(800)}`;
          const bytes = new TextEncoder().encode(content);
          const { ref } = blobName("m", bytes);
          writeFileSync(join(tmp, ref), bytes, { mode: 0o600 });
          rawRef = ref;
          stored = content.slice(0, 400);
        }
        const bytes = new TextEncoder().encode(content);
        ins.run(seq, "note", title, stored, "[]", null, rawRef, createHash("sha256").update(bytes).digest("hex"), bytes.length, at);
        for (const step of indexSteps(seq, size, indexColumns({ title, content, keywords: [], type: "note" }))) run(step.sql, step.args);
      }
    })();
    if (n >= 100_000) console.error(`serve_start: root ${n}: ${Math.min(n, i + BATCH)} memories`);
  }
  // an artifact and a context with their blobs, and one orphan old enough to collect
  db.transaction(() => {
    for (const [prefix, table] of [["a", "artifacts"], ["c", "contexts"]] as const) {
      const body = new TextEncoder().encode(`${prefix} body ${n}`);
      const { ref, sha } = blobName(prefix, body);
      writeFileSync(join(tmp, ref), body, { mode: 0o600 });
      if (table === "artifacts") {
        db.prepare(`INSERT INTO artifacts(task_id, name, version, kind, supersedes, run_seq, ref, size, sha256, note, created_at) VALUES ('t', 'a', 1, 'full', '[]', NULL, ?, ?, ?, '', ?)`)
          .run(ref, body.length, sha, at);
      } else {
        db.prepare(`INSERT INTO contexts(run_seq, task_id, label, source, path, size, sha256, created_at) VALUES (NULL, 't', 'c', NULL, ?, ?, ?, ?)`).run(ref, body.length, sha, at);
      }
    }
  })();
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  const orphan = join(tmp, blobName("m", new TextEncoder().encode(`orphan ${n}`)).ref);
  writeFileSync(orphan, "orphan");
  const old = new Date(Date.now() - 3600_000);
  utimesSync(orphan, old, old);
  writeFileSync(join(tmp, ".built"), `${n}\n`);
  renameSync(tmp, root);
  return root;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const roots = new Map<number, string>();
for (const n of SIZES) roots.set(n, await fixture(n));
for (const n of SIZES) await firstAnswer(roots.get(n)!); // untimed: migrations, a warm page cache
const times = new Map<number, number[]>(SIZES.map((n) => [n, []]));
for (let i = 0; i < RUNS; i++) for (const n of SIZES) times.get(n)!.push(await firstAnswer(roots.get(n)!));

console.log(`longrun serve: spawn to first answer (${METHOD}), ${RUNS} runs per size, interleaved (${new Date().toISOString().slice(0, 10)})\n`);
console.log("| memories | min ms | median ms | max ms |");
console.log("|---:|---:|---:|---:|");
for (const n of SIZES) {
  const t = times.get(n)!;
  console.log(`| ${n.toLocaleString("en-US")} | ${Math.min(...t).toFixed(1)} | ${median(t).toFixed(1)} | ${Math.max(...t).toFixed(1)} |`);
}
const ref = SIZES[0]!;
for (const n of SIZES.slice(1)) {
  const a = times.get(n)!, b = times.get(ref)!;
  const paired = a.map((x, i) => x / b[i]!); // each round's ratio: the two starts ran back to back
  console.log(
    `ratio ${n}/${ref}: of the medians ${(median(a) / median(b)).toFixed(2)}x, of the minimums ${(Math.min(...a) / Math.min(...b)).toFixed(2)}x; ` +
      `paired per round min/median/max ${Math.min(...paired).toFixed(2)}/${median(paired).toFixed(2)}/${Math.max(...paired).toFixed(2)}x`,
  );
}
