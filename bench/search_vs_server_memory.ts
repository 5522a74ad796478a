/**
 * Benchmark (not a test): memory search over MCP, longrun against the reference MCP memory server
 * (`@modelcontextprotocol/server-memory`), same SDK client, same data, at 1k and 10k memories.
 *
 *   node_modules/.bin/bun bench/search_vs_server_memory.ts [sizes, default 1000,10000] [--rounds R] [--calls N] [--json]
 *
 * Data: the mixed Chinese / Korean / English corpus of tests/fixtures/mixed_corpus.ts. longrun
 * gets it through `memory.save_many` (stdio), server-memory as its own JSON-lines file (one
 * entity per memory, the content as its observation); both are then started as stdio MCP servers
 * and driven by the same `@modelcontextprotocol/sdk` Client. Each query is timed as one tool call
 * (`memory_search` with limit 10 / `search_nodes`, which returns every match), 200 calls after a
 * warm-up. Recall, reported for both: of the memories that hold the query (a Latin query as a
 * word, a CJK query as a substring), the share each server can return (longrun: all pages read,
 * untimed; server-memory: its one answer). A `task_status` call to longrun is timed too: the floor
 * of an MCP tool call through this client and server. `--rounds R`: both servers stay up and the
 * timed calls alternate by round (longrun, server-memory, longrun, …), one ratio per round.
 * `--json`: one JSON object (for bench/run.ts). Targets: issue 9, longrun p50 >= 50x lower; issue
 * 26, >= 60x.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { QUERIES, rng, sentence } from "../tests/fixtures/mixed_corpus.ts";
import { BIN, pct, REPO, Serve } from "./lib/stdio_client.ts";

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: "string", default: "1" }, calls: { type: "string", default: "200" }, json: { type: "boolean", default: false } },
});
const sizes = (positionals[0] ?? "1000,10000").split(",").map(Number);
const CALLS = Number(opts.calls);
const ROUNDS = Number(opts.rounds);

interface Doc {
  id: string;
  title: string;
  content: string;
}

async function connect(command: string, args: string[], env: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? "", ...env }, stderr: "ignore" }));
  return client;
}

function isTruth(q: string, text: string): boolean {
  const latin = !/[\p{Script=Han}\p{Script=Hangul}]/u.test(q);
  return latin ? q.split(/\s+/).some((w) => new RegExp(`\\b${w}\\b`, "i").test(text)) : text.toLowerCase().includes(q.toLowerCase());
}

async function timeCalls(client: Client, tool: string, args: (q: string) => Record<string, unknown>): Promise<number[]> {
  for (const q of QUERIES) await client.callTool({ name: tool, arguments: args(q) });
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const q = QUERIES[i % QUERIES.length]!;
    const a = performance.now();
    const res = await client.callTool({ name: tool, arguments: args(q) });
    times.push(performance.now() - a);
    if (res.isError) throw new Error(`${tool}: ${JSON.stringify(res.content)}`);
  }
  return times;
}

interface Row {
  n: number;
  rounds: { floor50: number; lr50: number; lr99: number; sm50: number; sm99: number }[];
  lrRecall: number;
  smRecall: number;
}
const rows: Row[] = [];
for (const n of sizes) {
  const r = rng(11);
  const docs: Doc[] = Array.from({ length: n }, (_, i) => ({ id: `m${i}`, title: sentence(r).slice(0, 40), content: `${sentence(r)} ${sentence(r)}` }));
  // single-term queries only for recall (server-memory matches the whole query as one substring)
  const recallQueries = QUERIES.filter((q) => !q.includes(" "));

  // longrun: fill through the protocol, then serve over MCP
  const root = mkdtempSync(join(tmpdir(), "longrun-bench-mcp-"));
  const serve = new Serve(root);
  const idOf = new Map<string, string>();
  for (let i = 0; i < n; i += 1000) {
    const chunk = docs.slice(i, i + 1000);
    const res = await serve.call("memory.save_many", { items: chunk.map((d) => ({ type: "note", title: d.title, content: d.content })) });
    res.ids.forEach((id: string, k: number) => idOf.set(id, chunk[k]!.id));
  }
  await serve.close();
  // server-memory: its own file format, same records
  const dir = mkdtempSync(join(tmpdir(), "longrun-bench-smem-"));
  const file = join(dir, "memory.jsonl");
  writeFileSync(file, docs.map((d) => JSON.stringify({ type: "entity", name: `${d.id} ${d.title}`, entityType: "note", observations: [d.content] })).join("\n"));
  const lr = await connect(BIN, ["mcp", "--root", root]);
  const sm = await connect("node", [join(REPO, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")], { MEMORY_FILE_PATH: file });

  const perRound: Row["rounds"] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const lrTimes = await timeCalls(lr, "memory_search", (q) => ({ query: q, limit: 10 }));
    const floorTimes = await timeCalls(lr, "task_status", () => ({}));
    const smTimes = await timeCalls(sm, "search_nodes", (q) => ({ query: q }));
    perRound.push({ floor50: pct(floorTimes, 0.5), lr50: pct(lrTimes, 0.5), lr99: pct(lrTimes, 0.99), sm50: pct(smTimes, 0.5), sm99: pct(smTimes, 0.99) });
  }

  let lrWant = 0;
  let lrGot = 0;
  for (const q of recallQueries) {
    const truth = new Set(docs.filter((d) => isTruth(q, `${d.title}\n${d.content}`)).map((d) => d.id));
    const found = new Set<string>();
    let cursor: string | undefined;
    do {
      const res = await lr.callTool({ name: "memory_search", arguments: { query: q, limit: 50, ...(cursor ? { cursor } : {}) } });
      if (res.isError) throw new Error(JSON.stringify(res.structuredContent));
      const page = res.structuredContent as { hits: { id: string }[]; next_cursor: string | null };
      for (const h of page.hits) found.add(idOf.get(h.id)!);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    lrWant += truth.size;
    for (const id of truth) if (found.has(id)) lrGot++;
  }
  let smWant = 0;
  let smGot = 0;
  for (const q of recallQueries) {
    const truth = new Set(docs.filter((d) => isTruth(q, `${d.title}\n${d.content}`)).map((d) => d.id));
    const res = await sm.callTool({ name: "search_nodes", arguments: { query: q } });
    const found = new Set((res.structuredContent as { entities: { name: string }[] }).entities.map((e) => e.name.split(" ")[0]!));
    smWant += truth.size;
    for (const id of truth) if (found.has(id)) smGot++;
  }
  await lr.close();
  await sm.close();
  rmSync(root, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
  rows.push({ n, rounds: perRound, lrRecall: lrGot / lrWant, smRecall: smGot / smWant });
  if (!opts.json) console.error(`done ${n}`);
}
if (opts.json) {
  console.log(JSON.stringify({ queries: QUERIES.length, calls: CALLS, rows }));
  process.exit(0);
}
const out = rows.flatMap((row) =>
  row.rounds.map((x) =>
    `| ${row.n.toLocaleString("en-US")} | ${x.floor50.toFixed(2)} | ${x.lr50.toFixed(2)} | ${x.lr99.toFixed(2)} | ${row.lrRecall.toFixed(4)} | ${x.sm50.toFixed(2)} | ${x.sm99.toFixed(2)} | ${row.smRecall.toFixed(4)} | **${(x.sm50 / x.lr50).toFixed(1)}x** |`
  )
);
console.log(`memory search over MCP, same SDK client, ${QUERIES.length} queries of every class, ${CALLS} timed calls each (${new Date().toISOString().slice(0, 10)})\n`);
console.log("| memories | longrun task_status p50 ms (the MCP floor) | longrun search p50 ms | p99 ms | recall | server-memory p50 ms | p99 ms | recall | p50 ratio (server-memory / longrun) |");
console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const row of out) console.log(row);
