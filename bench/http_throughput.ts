/**
 * Benchmark (not a test): HTTP `writes.require` throughput of `longrun http` against bare
 * `Bun.serve` answering the same JSON, 16 keep-alive connections, on 127.0.0.1.
 *
 *   node_modules/.bin/bun bench/http_throughput.ts [seconds per run, default 5] [rounds, default 3] [--json]
 *
 * Builds dist/bench-http-bare (bench/http_bare.ts, compiled like longrun by bench/lib/compile_like.ts), starts `dist/longrun http`
 * on a fresh root with a task and a granted lease, captures its answer to one `writes.require`
 * (agent token) and gives the same bytes to the bare server. Then rounds of longrun and bare (in
 * ABBA order) — each
 * loaded by bench/lib/http_load.ts (a separate process, raw sockets) with the same request. Prints
 * req/s per round, medians and the ratio (`--json`: one JSON object, for bench/run.ts). Target
 * (issue 9): longrun >= 0.7x bare.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, REPO } from "./lib/stdio_client.ts";

const args = process.argv.slice(2).filter((a) => a !== "--json");
const json = process.argv.includes("--json");
const seconds = Number(args[0] ?? 5);
const rounds = Number(args[1] ?? 3);
const BUN = join(REPO, "node_modules/.bin/bun");
const BARE = join(REPO, "dist/bench-http-bare");
const CONNECTIONS = 16;

const built = spawnSync(BUN, [join(REPO, "bench/lib/compile_like.ts"), join(REPO, "bench/http_bare.ts"), BARE], { stdio: "inherit" });
if (built.status !== 0) throw new Error("could not build the reference server");

function firstLine(child: ReturnType<typeof spawn>): Promise<string> {
  return new Promise((resolve) => {
    let buf = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      buf += d;
      if (buf.includes("\n")) resolve(buf.slice(0, buf.indexOf("\n")));
    });
  });
}

const root = mkdtempSync(join(tmpdir(), "longrun-bench-http-"));
// Its request log (one stderr line per request, on by default) goes to /dev/null: still formatted
// and written, as in use, but not to the terminal.
const lr = spawn(BIN, ["http", "--root", root, "--port", "0"], { stdio: ["ignore", "pipe", "ignore"] });
let bare: ReturnType<typeof spawn> | null = null;
process.on("exit", () => {
  lr.kill("SIGKILL");
  bare?.kill("SIGKILL");
});
const { url, token_file } = JSON.parse(await firstLine(lr));
const tokenFile = JSON.parse(readFileSync(token_file, "utf8"));
const tokens = { host: String(tokenFile.host_token), agent: String(tokenFile.agent_token) };
const rpc = async (token: string, method: string, params: Record<string, unknown>) => {
  const res = await fetch(`${url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  return res.text();
};
for (const [m, p] of [["task.start", { description: "bench" }], ["writes.enable", { reason: "bench", ttl_seconds: 3600 }]] as const) {
  const a = await rpc(tokens.host, m, p);
  if (!a.includes('"result"')) throw new Error(`${m}: ${a}`);
}
const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "writes.require", params: { action: "write a file" } });
const answer = await rpc(tokens.agent, "writes.require", JSON.parse(body).params);
if (!answer.includes('"result"')) throw new Error(`writes.require was not granted: ${answer}`);
const lrPort = Number(new URL(url).port);

bare = spawn(BARE, [], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, LONGRUN_BENCH_BODY: answer } });
const barePort = Number(await firstLine(bare));

function load(port: number): number {
  const req = `POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${tokens.agent}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const out = spawnSync(BUN, [join(REPO, "bench/lib/http_load.ts"), String(port), String(seconds), String(CONNECTIONS)], { input: req, encoding: "utf8" });
  const r = JSON.parse(out.stdout);
  if (r.errors) throw new Error(`port ${port}: ${r.errors} errors`);
  return r.rps;
}

const a: number[] = [];
const b: number[] = [];
for (let i = 0; i < rounds; i++) {
  // ABBA: longrun first in even rounds, bare first in odd ones, so a drift in load hits both
  if (i % 2 === 0) {
    a.push(load(lrPort));
    b.push(load(barePort));
  } else {
    b.push(load(barePort));
    a.push(load(lrPort));
  }
  if (!json) console.error(`round ${i + 1}: longrun ${a.at(-1)} req/s, bare ${b.at(-1)} req/s`);
}
lr.kill("SIGTERM");
bare.kill("SIGTERM");
rmSync(root, { recursive: true, force: true });
const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
if (json) {
  console.log(JSON.stringify({ connections: CONNECTIONS, seconds, longrun_rps: a, bare_rps: b }));
  process.exit(0);
}
console.log(`HTTP writes.require, ${CONNECTIONS} keep-alive connections, ${seconds} s x ${rounds} rounds (${new Date().toISOString().slice(0, 10)})\n`);
console.log("| server | req/s per round | median | ratio |");
console.log("|---|---|---:|---:|");
console.log(`| longrun http | ${a.join(", ")} | ${med(a)} | **${(med(a) / med(b)).toFixed(2)}x** |`);
console.log(`| bare Bun.serve, same JSON | ${b.join(", ")} | ${med(b)} | 1 |`);
