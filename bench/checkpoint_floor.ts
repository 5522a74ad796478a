/**
 * Benchmark (not a test): `task.checkpoint` over stdio against its floor over stdio, a server
 * doing one durable insert per request, measured in the same run, interleaved (ABBA) so machine
 * noise hits both (issue 26's row "task.checkpoint p50 over stdio"; target <= 1.3x).
 *
 *   node_modules/.bin/bun bench/checkpoint_floor.ts [rounds] [runs]
 *
 * - A: `longrun serve --root DIR` ($LONGRUN_BIN, default dist/longrun), a task started and a lease
 *   granted, then `task.checkpoint` with kind "progress" (the task stays in progress, so every
 *   round is the same work) and a summary of about 300 characters;
 * - B: this file run as `--serve-insert DB`: longrun's own stdio server and framing (`serveStdio`,
 *   as bench/echo.ts) whose dispatcher does one `INSERT` of a row of about a rendered checkpoint's
 *   size into a plain table of a libSQL database opened the same way (WAL, synchronous=FULL), in
 *   its own transaction, and answers.
 * - with LONGRUN_BIN_VS=PATH, a second longrun (say, the build before a change) checkpoints the same
 *   way in the same rounds (A, B, C in turn, the order rotating), for a before/after ratio.
 * Each round trip is one request written and its answer read, one in flight. Prints, per run, the
 * p50 of each and their ratio, then min/median/max of the ratios over the runs.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const REPO = new URL("..", import.meta.url).pathname;

if (process.argv[2] === "--serve-insert") {
  const { Database } = await import("../src/db/database.ts");
  const { serveStdio } = await import("../src/stdio/server.ts");
  const db = await Database.open(pathToFileURL(process.argv[3]!).href);
  await db.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  const text = "x".repeat(900); // about the size of a rendered checkpoint
  const dispatcher = {
    async handleText(line: string): Promise<string | null> {
      const id = (JSON.parse(line) as { id?: unknown }).id ?? null;
      await db.write((tx) => tx.execute({ sql: "INSERT INTO t(body) VALUES (?)", args: [text] }));
      return JSON.stringify({ jsonrpc: "2.0", id, result: { ok: true } });
    },
  };
  // deno-lint-ignore no-explicit-any
  await serveStdio({ dispatcher: dispatcher as any, input: process.stdin, output: process.stdout });
  await db.close();
  process.exit(0);
}

class Child {
  readonly proc;
  #buf = "";
  #wait: ((line: string) => void) | null = null;
  #id = 1;
  constructor(argv: string[]) {
    this.proc = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
    this.proc.stdout.setEncoding("utf8").on("data", (d: string) => {
      this.#buf += d;
      let nl: number;
      while ((nl = this.#buf.indexOf("\n")) >= 0) {
        const line = this.#buf.slice(0, nl);
        this.#buf = this.#buf.slice(nl + 1);
        const w = this.#wait;
        this.#wait = null;
        w?.(line);
      }
    });
  }
  async call(method: string, params: Record<string, unknown>): Promise<number> {
    const msg = JSON.stringify({ jsonrpc: "2.0", id: this.#id++, method, params }) + "\n";
    const t0 = performance.now();
    const line = await new Promise<string>((resolve) => {
      this.#wait = resolve;
      this.proc.stdin.write(msg);
    });
    const ms = performance.now() - t0;
    const answer = JSON.parse(line) as { error?: { message: string } };
    if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
    return ms;
  }
  async close(): Promise<void> {
    this.proc.stdin.end();
    await new Promise((r) => this.proc.on("close", r));
  }
}

const pct = (xs: readonly number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

const rounds = Number(process.argv[2] ?? 300);
const runs = Number(process.argv[3] ?? 3);
const bin = process.env.LONGRUN_BIN ?? join(REPO, "dist", "longrun");
const bun = join(REPO, "node_modules", ".bin", "bun");
const summary = "Adapters for suppliers one and two are done; the third needs the new auth flow. ".repeat(4);
const cp = { summary, next_step: "wire the auth flow", kind: "progress" };

const vsBin = process.env.LONGRUN_BIN_VS;

async function run(): Promise<{ a: number; b: number; c: number | null }> {
  const dir = mkdtempSync(join(tmpdir(), "longrun-bench-cpf-"));
  const dirC = mkdtempSync(join(tmpdir(), "longrun-bench-cpf-vs-"));
  const ref = mkdtempSync(join(tmpdir(), "longrun-bench-cpf-ref-"));
  const a = new Child([bin, "serve", "--root", dir]);
  const b = new Child([bun, import.meta.filename ?? new URL(import.meta.url).pathname, "--serve-insert", join(ref, "ref.db")]);
  const c = vsBin ? new Child([vsBin, "serve", "--root", dirC]) : null;
  try {
    for (const x of c ? [a, c] : [a]) {
      await x.call("task.start", { description: "benchmark the checkpoint over stdio" });
      await x.call("writes.enable", { reason: "bench" });
    }
    const times = { a: [] as number[], b: [] as number[], c: [] as number[] };
    const steps: (() => Promise<void>)[] = [
      async () => void times.a.push(await a.call("task.checkpoint", cp)),
      async () => void times.b.push(await b.call("insert", {})),
      ...(c ? [async () => void times.c.push(await c.call("task.checkpoint", cp))] : []),
    ];
    for (let i = 0; i < 30 + rounds; i++) {
      for (let k = 0; k < steps.length; k++) await steps[(i + k) % steps.length]!();
      if (i === 29) for (const t of Object.values(times)) t.length = 0; // the warm-up rounds are not counted
    }
    return { a: pct(times.a, 0.5), b: pct(times.b, 0.5), c: c ? pct(times.c, 0.5) : null };
  } finally {
    await a.close();
    await b.close();
    await c?.close();
    for (const d of [dir, dirC, ref]) rmSync(d, { recursive: true, force: true });
  }
}

console.log(`task.checkpoint over stdio (${bin}) vs a stdio server doing one durable insert; ${rounds} rounds each, interleaved, ${runs} runs\n`);
console.log(`| run | checkpoint p50 ms | insert p50 ms | ratio |${vsBin ? " vs checkpoint p50 ms | vs ratio | A/vs |" : ""}`);
console.log(`|---|---:|---:|---:|${vsBin ? "---:|---:|---:|" : ""}`);
const ratios: number[] = [];
const vsRatios: number[] = [];
const ab: number[] = [];
for (let r = 1; r <= runs; r++) {
  const { a, b, c } = await run();
  ratios.push(a / b);
  if (c !== null) vsRatios.push(c / b), ab.push(a / c);
  console.log(`| ${r} | ${a.toFixed(3)} | ${b.toFixed(3)} | ${(a / b).toFixed(2)}x |${c !== null ? ` ${c.toFixed(3)} | ${(c / b).toFixed(2)}x | ${(a / c).toFixed(2)} |` : ""}`);
}
const mmm = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return `${s[0]!.toFixed(2)} / ${s[Math.floor(s.length / 2)]!.toFixed(2)} / ${s.at(-1)!.toFixed(2)}`;
};
console.log(`\nratio p50 min/median/max: ${mmm(ratios)}x (target <= 1.3x)`);
if (vsBin) console.log(`vs (${vsBin}) ratio p50 min/median/max: ${mmm(vsRatios)}x; A/vs checkpoint p50: ${mmm(ab)}`);
