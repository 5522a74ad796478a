/**
 * `npm run bench`: every figure of issue 26's table against its reference, in one run, by calling
 * the bench/ scripts (each measures a figure and its reference side by side, interleaved) and
 * reading their `--json` answers. Prints one table: figure, longrun, reference, ratio (min /
 * median / max over at least 3 runs or rounds), target, met?; the raw answers go to
 * bench/results/run-<time>.json.
 *
 *   npm run bench [-- --quick] [-- --large] [-- --build] [-- --only hook,stdio,...]
 *
 * - `--quick`: fewer calls and shorter windows (still 3 runs of each figure), for a check that
 *   every bench works;
 * - `--large`: build the 1M-memory search root if it is not cached yet (dist/bench-cache/
 *   search-1000000, a few minutes; bench/search_scale.ts --cache); without it, search p99 at 1M is
 *   measured only when that root is there;
 * - `--build`: first build the working tree into dist/bench-longrun (scripts/compile.ts) and
 *   measure that, instead of dist/longrun ($LONGRUN_BIN overrides both);
 * - `--only`: a comma-separated subset of hook, stdio, http, checkpoint, mcp, search1m, start,
 *   sqld, load.
 *
 * `serve`'s start is bench/serve_start.ts (its roots cached in dist/bench-cache/serve-start-<n>);
 * sqld figures need tools/sqld (`bash scripts/sqld.sh`). A figure whose script or tool is missing
 * is reported as not run, never as met.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sqldBinary } from "../tests/support/sqld.ts";
import { REPO } from "./lib/stdio_client.ts";

const { values: opts } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    large: { type: "boolean", default: false },
    build: { type: "boolean", default: false },
    only: { type: "string" },
  },
});
const QUICK = opts.quick!;
const RUNS = 3;
const BUN = join(REPO, "node_modules/.bin/bun");
const only = opts.only ? new Set(opts.only.split(",")) : null;
const CACHE = join(REPO, "dist", "bench-cache");

const gitHead = () => spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO, encoding: "utf8" }).stdout.trim();
/** HEAD when the run starts (and so when --build builds), and whether the tree had uncommitted changes then. */
const headAtStart = gitHead();
const dirtyAtStart = spawnSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: REPO, encoding: "utf8" }).stdout.trim() !== "";
let bin = process.env.LONGRUN_BIN || join(REPO, "dist", "longrun");
if (opts.build && !process.env.LONGRUN_BIN) {
  bin = join(REPO, "dist", "bench-longrun");
  const tmp = `${bin}.tmp.${process.pid}`;
  const built = spawnSync(BUN, [join(REPO, "scripts/compile.ts"), tmp], { cwd: REPO, stdio: ["ignore", "ignore", "inherit"] });
  if (built.status !== 0) throw new Error("bench: building dist/bench-longrun failed");
  spawnSync("mv", ["-f", tmp, bin]);
}
if (!existsSync(bin)) throw new Error(`bench: no ${bin}: build it first (./compile.sh, or npm run bench -- --build)`);
const env = { ...process.env, LONGRUN_BIN: bin };

// ---- running the scripts -------------------------------------------------------------------

const raw: Record<string, unknown[]> = {};

/** Runs one script and returns its stdout's last line as JSON (its logs pass through on stderr). */
function json<T>(key: string, argv: string[]): T {
  const t0 = performance.now();
  const p = spawnSync(argv[0]!, argv.slice(1), { cwd: REPO, env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 << 20 });
  const line = (p.stdout ?? "").trim().split("\n").at(-1) ?? "";
  if (p.status !== 0 || !line.startsWith("{")) throw new Error(`${argv.join(" ")} exited ${p.status}: ${p.stdout?.slice(-500)}`);
  const value = JSON.parse(line) as T;
  (raw[key] ??= []).push(value);
  console.error(`bench: ${key} ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return value;
}

/** Runs one script and returns its whole stdout (for scripts that print only a table). */
function text(key: string, argv: string[]): string {
  const p = spawnSync(argv[0]!, argv.slice(1), { cwd: REPO, env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (p.status !== 0) throw new Error(`${argv.join(" ")} exited ${p.status}`);
  (raw[key] ??= []).push(p.stdout);
  return p.stdout;
}

// ---- the table -----------------------------------------------------------------------------

interface Row {
  figure: string;
  /** longrun's figure per run (ms, µs, req/s…), its unit */
  longrun: number[];
  unit: string;
  /** the reference's figure per run, same unit; empty: no reference */
  reference: number[];
  referenceName: string;
  /** per run; "lower": reference / longrun (how many times lower longrun is) */
  ratios: number[];
  target: { op: "<=" | ">=" | "<"; value: number; of: "ratio" | "value"; text: string };
  note?: string;
}
const rows: Row[] = [];
const notRun: { figure: string; why: string; failed: boolean }[] = [];
/** A figure left out on purpose (an optional root or tool missing), not a failure. */
class Skip extends Error {}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number) => (x >= 1000 ? Math.round(x).toLocaleString("en-US") : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const triple = (xs: readonly number[], unit = "") => (xs.length ? `${fmt(Math.min(...xs))} / ${fmt(median(xs))} / ${fmt(Math.max(...xs))}${unit}` : "—");

function met(r: Row): boolean {
  const x = r.target.of === "ratio" ? median(r.ratios) : median(r.longrun);
  return r.target.op === "<=" ? x <= r.target.value : r.target.op === "<" ? x < r.target.value : x >= r.target.value;
}

function figure(key: string, name: string, fn: () => void) {
  if (only && !only.has(key)) return;
  try {
    fn();
  } catch (e) {
    const failed = !(e instanceof Skip);
    notRun.push({ figure: name, why: (e as Error).message.split("\n")[0]!.slice(0, 300), failed });
    console.error(`bench: ${name}: ${failed ? (e as Error).stack : (e as Error).message}`);
  }
}

// 1. The PreToolUse hook against the floor (a compiled Bun program: readFileSync(0), one line out).
figure("hook", "PreToolUse hook", () => {
  // each case twice: the hook deciding in its own process (cold), and answered by the root's
  // resident gate (`longrun hook gate`, .longrun/gate.sock); a root with no .longrun/ has no gate
  const cases: [string, string][] = [
    ["gate, Read passes", "PreToolUse hook: Read"],
    ["resident gate, Read passes", "PreToolUse hook: Read, resident gate"],
    ["gate, Write denied (no task)", "PreToolUse hook: Write denied (no task)"],
    ["gate, Write denied (read-only turn)", "PreToolUse hook: Write denied (read-only turn)"],
    ["resident gate, Write denied (read-only turn)", "PreToolUse hook: Write denied (read-only turn), resident gate"],
    ["gate, read-only Bash `git status` passes", "PreToolUse hook: `git status`"],
    ["resident gate, read-only Bash `git status` passes", "PreToolUse hook: `git status`, resident gate"],
    ["gate, Bash under the lease passes", "PreToolUse hook: Bash under a lease"],
    ["resident gate, Bash under the lease passes", "PreToolUse hook: Bash under a lease, resident gate"],
  ];
  const runs = Array.from({ length: RUNS }, () =>
    json<{ reference_ms: number; cases: Record<string, number> }>("hook", ["python3", "bench/hook_gate.py", String(QUICK ? 10 : 40), "--json"])
  );
  for (const [key, name] of cases) {
    if (runs.some((r) => r.cases[key] === undefined)) continue; // a case this hook_gate.py does not time
    rows.push({
      figure: name,
      longrun: runs.map((r) => r.cases[key]!),
      unit: " ms",
      reference: runs.map((r) => r.reference_ms),
      referenceName: "compiled Bun program, `readFileSync(0)` + one line",
      ratios: runs.map((r) => r.cases[key]! / r.reference_ms),
      target: { op: "<=", value: 1.3, of: "ratio", text: "≤ 1.3x" },
    });
  }
});

// 2. stdio writes.require p50 against an echo over the same framing (bench/echo.ts), unpinned and pinned.
figure("stdio", "stdio writes.require p50", () => {
  const pinned = spawnSync("taskset", ["-c", "0", "true"]).status === 0;
  for (const pin of pinned ? [false, true] : [false]) {
    const runs = Array.from({ length: RUNS }, () =>
      json<{ rows: Record<string, { p50_us: number }>; ratio: number }>("stdio", [
        ...(pin ? ["taskset", "-c", "0"] : []),
        "python3", "bench/stdio_roundtrip.py", "--calls", String(QUICK ? 1000 : 5000), "--warmup", "300", "--starts", "0", "--no-client", "--json",
      ])
    );
    rows.push({
      figure: `stdio \`writes.require\` p50 (${pin ? "pinned to one core" : "unpinned"})`,
      longrun: runs.map((r) => r.rows["longrun writes.require"]!.p50_us),
      unit: " µs",
      reference: runs.map((r) => r.rows["echo (same request)"]!.p50_us),
      referenceName: "echo over longrun's own stdio server and framing (bench/echo.ts)",
      ratios: runs.map((r) => r.ratio),
      target: { op: "<=", value: 1.3, of: "ratio", text: "≤ 1.3x" },
    });
  }
});

// 3. HTTP writes.require, 16 connections, against bare Bun.serve with the same JSON.
figure("http", "HTTP writes.require", () => {
  const r = json<{ longrun_rps: number[]; bare_rps: number[] }>("http", [BUN, "bench/http_throughput.ts", String(QUICK ? 1 : 4), String(RUNS), "--json"]);
  rows.push({
    figure: "HTTP `writes.require`, 16 connections",
    longrun: r.longrun_rps,
    unit: " req/s",
    reference: r.bare_rps,
    referenceName: "bare `Bun.serve`, same JSON",
    ratios: r.longrun_rps.map((x, i) => x / r.bare_rps[i]!),
    target: { op: ">=", value: 0.7, of: "ratio", text: "≥ 0.7x" },
  });
});

// 4. task.checkpoint p50 over stdio against a stdio server doing one durable insert (and in-process).
figure("checkpoint", "task.checkpoint p50", () => {
  for (const mode of ["stdio", "worker"] as const) {
    const runs = Array.from({ length: RUNS }, () =>
      json<{ checkpoint_p50_ms: number; insert_p50_ms: number }>("checkpoint", [BUN, "bench/checkpoint.ts", String(QUICK ? 60 : 300), mode, "--json"])
    );
    rows.push({
      figure: mode === "stdio" ? "`task.checkpoint` p50 over stdio" : "`task.checkpoint` p50 in-process (diagnostic)",
      longrun: runs.map((r) => r.checkpoint_p50_ms),
      unit: " ms",
      reference: runs.map((r) => r.insert_p50_ms),
      referenceName: mode === "stdio" ? "stdio server doing one durable insert (bench/insert_server.ts)" : "one durable insert, in-process",
      ratios: runs.map((r) => r.checkpoint_p50_ms / r.insert_p50_ms),
      target: { op: "<=", value: 1.3, of: "ratio", text: "≤ 1.3x" },
    });
  }
});

// 5. Search over MCP at 10k against @modelcontextprotocol/server-memory, same SDK client.
figure("mcp", "MCP search at 10k", () => {
  const r = json<{ rows: { n: number; rounds: { lr50: number; sm50: number }[]; lrRecall: number; smRecall: number }[] }>("mcp", [
    BUN, "bench/search_vs_server_memory.ts", "10000", "--rounds", String(RUNS), "--calls", String(QUICK ? 40 : 150), "--json",
  ]);
  const row = r.rows[0]!;
  rows.push({
    figure: "search over MCP at 10k, same SDK client (p50)",
    longrun: row.rounds.map((x) => x.lr50),
    unit: " ms",
    reference: row.rounds.map((x) => x.sm50),
    referenceName: "`@modelcontextprotocol/server-memory`",
    ratios: row.rounds.map((x) => x.sm50 / x.lr50),
    target: { op: ">=", value: 60, of: "ratio", text: "≥ 60x lower" },
    note: `recall ${row.lrRecall.toFixed(4)} vs ${row.smRecall.toFixed(4)}; ratio = how many times lower`,
  });
});

// 6. Search p99 at 1M over stdio (cached root; built only with --large).
figure("search1m", "search p99 at 1M", () => {
  const cached = existsSync(join(CACHE, "search-1000000", ".bench-built.json"));
  if (!cached && !opts.large) throw new Skip("no cached 1M root (dist/bench-cache/search-1000000): run with --large to build it (a few minutes)");
  const r = json<{ results: { rounds: { p50: number; p99: number }[] }[] }>("search1m", [BUN, "bench/search_scale.ts", "1000000", "--cache", "--rounds", String(RUNS), "--json"]);
  const rounds = r.results[0]!.rounds;
  rows.push({
    figure: "search p99 at 1M (stdio)",
    longrun: rounds.map((x) => x.p99),
    unit: " ms",
    reference: [],
    referenceName: "—",
    ratios: [],
    target: { op: "<", value: 5, of: "value", text: "< 5 ms" },
    note: `p50 ${triple(rounds.map((x) => x.p50), " ms")}`,
  });
});

// 7. serve's first answer at 1k vs 100k vs 1M memories (bench/serve_start.ts, cached roots).
figure("start", "`serve` first answer", () => {
  if (!existsSync(join(REPO, "bench/serve_start.ts"))) throw new Skip("bench/serve_start.ts is missing");
  const sizes = [1000, 100000, ...(existsSync(join(CACHE, "serve-start-1000000")) || opts.large ? [1000000] : [])];
  const medians = new Map<number, number[]>(sizes.map((n) => [n, []]));
  for (let i = 0; i < RUNS; i++) {
    const out = text("start", [BUN, "bench/serve_start.ts", "--runs", String(QUICK ? 3 : 7), "--sizes", sizes.join(",")]);
    for (const n of sizes) {
      const m = new RegExp(`^\\| ${n.toLocaleString("en-US")} \\| [\\d.]+ \\| ([\\d.]+) \\|`, "m").exec(out);
      if (!m) throw new Error(`bench/serve_start.ts: no row for ${n}:\n${out}`);
      medians.get(n)!.push(Number(m[1]));
    }
    console.error(`bench: start run ${i + 1}`);
  }
  for (const n of sizes.slice(1)) {
    rows.push({
      figure: `\`serve\`, spawn to first answer, ${n.toLocaleString("en-US")} memories`,
      longrun: medians.get(n)!,
      unit: " ms",
      reference: medians.get(1000)!,
      referenceName: "the same at 1,000 memories",
      ratios: medians.get(n)!.map((x, i) => x / medians.get(1000)![i]!),
      target: { op: "<=", value: 1.15, of: "ratio", text: "independent of size (≤ 1.15x)" },
    });
  }
});

// 8. sqld: gate check and checkpoint against the least requests through @libsql/client.
figure("sqld", "sqld", () => {
  if (!sqldBinary()) throw new Skip("no sqld: run `bash scripts/sqld.sh`");
  const r = json<{ rounds_p50_ms: Record<string, number>[] }>("sqld", [BUN, "bench/server_store.ts", String(QUICK ? 40 : 200), String(RUNS), "--json"]);
  const col = (k: string) => r.rounds_p50_ms.map((x) => x[k]!);
  for (const proto of ["http", "ws"] as const) {
    rows.push({
      figure: `gate p50 on sqld (${proto})`,
      longrun: col(`${proto}.gate`),
      unit: " ms",
      reference: col(`${proto}.select1`),
      referenceName: "`SELECT 1` through `@libsql/client`",
      ratios: col(`${proto}.gate`).map((x, i) => x / col(`${proto}.select1`)[i]!),
      target: { op: "<=", value: 1.2, of: "ratio", text: "≤ 1.2x" },
    });
  }
  for (const proto of ["http", "ws"] as const) {
    rows.push({
      figure: `checkpoint on sqld (${proto})`,
      longrun: col(`${proto}.checkpoint`),
      unit: " ms",
      reference: col(`${proto}.insert`),
      referenceName: "one write `batch` (an INSERT) through `@libsql/client`: one round trip",
      ratios: col(`${proto}.checkpoint`).map((x, i) => x / col(`${proto}.insert`)[i]!),
      target: { op: "<=", value: 1.3, of: "ratio", text: "one round trip (≤ 1.3x)" },
    });
  }
});

// 9. (issue 9's, kept honest too) the gate's p99 under memory writes against its idle p99.
figure("load", "gate under load", () => {
  const runs = Array.from({ length: RUNS }, () =>
    json<{ phases: { name: string; checks: number; background: number; p99_ms: number }[]; worst_write_ratio: number }>("load", [BUN, "bench/gate_under_load.ts", String(QUICK ? 1 : 3), String(QUICK ? 1000 : 5000), "--json"])
  );
  const idle = runs.map((r) => r.phases[0]!.p99_ms);
  const same = runs.map((r) => r.phases[2]!.p99_ms);
  rows.push({
    figure: "gate p99 while saving memories to the same root (issue 9)",
    longrun: same,
    unit: " ms",
    reference: idle,
    referenceName: "the same gate idle (p99)",
    ratios: same.map((x, i) => x / idle[i]!),
    target: { op: "<=", value: 2, of: "ratio", text: "≤ 2x" },
    note: `saves overlapped per run: ${runs.map((r) => r.phases[2]!.background).join(", ")}`,
  });
});

// ---- report --------------------------------------------------------------------------------

const version = spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout.trim();
const headAtEnd = gitHead();
const head = `${headAtStart}${dirtyAtStart ? " (with uncommitted changes of others in the tree)" : ""}${headAtEnd !== headAtStart ? ` at the start, ${headAtEnd} at the end` : ""}`;
const lines: string[] = [];
lines.push(`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}: ${version} (${bin.replace(REPO, "")}), HEAD ${head}, ${new Date().toISOString().slice(0, 16)}Z, ${cpus().length} cores, load average at the end ${loadavg().map((x) => x.toFixed(1)).join(" ")}`);
lines.push(`${RUNS} runs (or rounds) of each figure, each against its reference in the same run; longrun and reference columns: min / median / max; met? is judged on the median ratio${QUICK ? "; --quick (fewer calls per run)" : ""}`);
lines.push("");
lines.push("| figure | longrun | reference (same run) | ratio | target | met? |");
lines.push("|---|---|---|---|---|---|");
for (const r of rows) {
  const ref = r.reference.length ? `${r.referenceName}: ${triple(r.reference, r.unit)}` : r.referenceName;
  const ratio = r.ratios.length ? `${triple(r.ratios)}x` : "—";
  lines.push(`| ${r.figure} | ${triple(r.longrun, r.unit)} | ${ref} | ${ratio} | ${r.target.text} | ${met(r) ? "yes" : "**no**"}${r.note ? ` (${r.note})` : ""} |`);
}
for (const n of notRun) lines.push(`| ${n.figure} | ${n.failed ? "FAILED" : "not run"}: ${n.why.replace(/\|/g, "/")} | | | | — |`);
console.log(lines.join("\n"));

mkdirSync(join(REPO, "bench", "results"), { recursive: true });
const file = join(REPO, "bench", "results", `run-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
writeFileSync(file, JSON.stringify({ argv: process.argv.slice(2), version, head, rows, notRun, raw }, null, 1));
console.error(`bench: raw answers in ${file}`);
process.exit(notRun.some((n) => n.failed) ? 1 : 0);
