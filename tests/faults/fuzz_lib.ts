/**
 * A bounded, seeded fuzz of the two doors a caller can reach: JSON-RPC lines to a real
 * `longrun serve` over stdio, and hook payloads to real `longrun hook claude <Event>` processes.
 * Shared by tests/faults/fuzz.test.ts (short, in the suite) and bench/fuzz.ts (long runs).
 *
 * JSON-RPC: valid requests of every method, mutated (types flipped, fields dropped or added, huge
 * and deeply nested values, NUL and lone surrogates, big and non-finite numbers, wrong ids, wrong
 * envelopes, random method names, params of the wrong type), batches (empty, mixed, all
 * notifications, over the limit), random JSON, and byte-level damage to the serialized line
 * (invalid UTF-8, raw NUL, CR, BOM, truncation, flipped bytes). The expected answers of each line
 * are computed independently from the JSON-RPC 2.0 rules and the documented limits (one response
 * per request with an id, none for a notification, one array for a batch, one error object for a
 * line that is not a request); the server must give exactly those, never -32603 `internal`, never
 * die, and stay within a memory bound.
 *
 * Hooks: every event with valid and mutated payloads, garbage stdin (not JSON, not an object,
 * invalid UTF-8, empty, too deep, too big) and unknown event names. A hook must end with a
 * decision (exit 0 with a JSON answer, or nothing where "nothing" is an answer, or exit 2 =
 * block), never "allow"; in a read-only turn, garbage never passes the gate; a prompt without an
 * approval line never leaves a lease; Stop, PreCompact and SessionStart never block.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sandboxedCommand } from "../../src/hooks/wrap.ts";
import { type Rng, rng } from "./soak_lib.ts";

const LIMITS = { line_bytes: 1_048_576, batch_size: 100, json_depth: 32 };
const enc = new TextEncoder();

/** Sets an own, enumerable property, also for "__proto__" (a plain assignment would change the prototype). */
function setKey(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC: what a line must be answered with

type Expect = { kind: "single"; id: unknown; code?: number } | { kind: "array"; items: { id: unknown; code?: number }[] };

/**
 * Nesting depth of JSON text, brackets outside strings (the documented limit is checked before
 * parsing, so a hostile `[[[[…` is refused as too deep even when it is not valid JSON).
 */
function textDepth(text: string): number {
  let d = 0;
  let max = 0;
  let str = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (str) {
      if (c === "\\") i++;
      else if (c === '"') str = false;
    } else if (c === '"') str = true;
    else if (c === "[" || c === "{") max = Math.max(max, ++d);
    else if (c === "]" || c === "}") d--;
  }
  return max;
}

function isId(v: unknown): boolean {
  return v === null || typeof v === "string" || (typeof v === "number" && Number.isFinite(v) && (!Number.isInteger(v) || Number.isSafeInteger(v)));
}

/** One element of a message: its answer, or null for a notification (no answer). */
function expectOne(v: unknown): { id: unknown; code?: number } | null {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return { id: null, code: -32600 };
  const r = v as Record<string, unknown>;
  const hasId = Object.prototype.hasOwnProperty.call(r, "id");
  const okId = hasId && isId(r.id);
  if (r.jsonrpc !== "2.0" || typeof r.method !== "string" || (hasId && !okId) || ("params" in r && (typeof r.params !== "object" || r.params === null))) {
    return { id: okId ? r.id : null, code: -32600 };
  }
  return hasId ? { id: r.id } : null;
}

/** The answers due for the bytes of one or more lines (each ending in \n), by the protocol's rules. */
export function expectFor(bytes: Uint8Array): Expect[] {
  const out: Expect[] = [];
  let start = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, start);
    if (nl < 0) break;
    let line = bytes.subarray(start, nl);
    start = nl + 1;
    if (line.length && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    if (line.length > LIMITS.line_bytes) {
      out.push({ kind: "single", id: null, code: -32009 });
      continue;
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(line);
    } catch {
      out.push({ kind: "single", id: null, code: -32700 });
      continue;
    }
    if (text.trim() === "") continue;
    if (textDepth(text) > LIMITS.json_depth) {
      out.push({ kind: "single", id: null, code: -32009 });
      continue;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      out.push({ kind: "single", id: null, code: -32700 });
      continue;
    }
    if (Array.isArray(msg)) {
      if (msg.length === 0) out.push({ kind: "single", id: null, code: -32600 });
      else if (msg.length > LIMITS.batch_size) out.push({ kind: "single", id: null, code: -32009 });
      else {
        const items = msg.map(expectOne).filter((x): x is { id: unknown; code?: number } => x !== null);
        if (items.length) out.push({ kind: "array", items });
      }
      continue;
    }
    const one = expectOne(msg);
    if (one) out.push({ kind: "single", ...one });
  }
  return out;
}

const sig = (e: Expect) => (e.kind === "single" ? `S:${JSON.stringify(e.id)}` : `A:${e.items.map((i) => JSON.stringify(i.id)).sort().join(",")}`);

// ---------------------------------------------------------------------------------------------
// JSON-RPC: the corpus of valid requests, and how to mutate them

const T = "T_20261130_000000_abcd";

function validRequests(root: string): [string, Record<string, unknown>][] {
  const run = { run_id: "R_0001", epoch: 1 };
  return [
    ["system.describe", {}],
    ["task.start", { description: "fuzz task", keywords: ["fuzz"] }],
    ["task.status", {}],
    ["task.status", { task_id: T }],
    ["task.list", {}],
    ["task.switch", { task_id: T, reason: "switch" }],
    ["task.transition", { to: "paused", reason: "pause" }],
    ["task.transition", { to: "in_progress", reason: "go" }],
    ["task.checkpoint", { summary: "fuzz summary", next_step: "next", phase: "p", kind: "progress" }],
    ["task.checkpoint", { summary: "fuzz pause", next_step: "next" }],
    ["task.resume", {}],
    ["task.recover", { force: false }],
    ["task.finish", { summary: "done", cancel_runs: true }],
    ["turn.begin", { reason: "turn" }],
    ["turn.end", {}],
    ["writes.enable", { reason: "grant", scope: ["src/**"], ttl_seconds: 60, max_uses: 3 }],
    ["writes.request", { reason: "please", scope: ["src/**"] }],
    ["writes.require", { action: "edit src/a.ts" }],
    ["memory.save", { type: "note", title: "fuzz", content: "fuzz body", keywords: ["fuzz"] }],
    ["memory.save_many", { items: [{ type: "note", title: "a", content: "b" }, { type: "decision", title: "c", content: "d", keywords: ["e"] }] }],
    ["memory.search", { query: "fuzz", limit: 5, type: "note" }],
    ["memory.search", { query: "接口 서버 fuzz", cursor: "o1" }],
    ["memory.get", { id: "S_0001" }],
    ["run.start", { owner: "w1", tools: ["fetch"], sources: ["web"], scope: ["src/**"], budget: { tool_calls: 50, cost: 5, unknown_ceiling: { cost: 0.5 }, wall_seconds: 3600 }, constraints: ["be brief"] }],
    ["run.get", { run_id: "R_0001" }],
    ["run.claim", { run_id: "R_0001", owner: "w2" }],
    ["run.continue", { parent_run_id: "R_0001", owner: "w3", budget: {}, tools: ["fetch"] }],
    ["run.list", { all_tasks: true }],
    ["run.checkpoint", { ...run, settled: ["a"], open: ["b"], note: "n" }],
    ["run.park", { ...run, waiting_for: "user" }],
    ["run.wake", { ...run, reason: "back" }],
    ["run.yield", { ...run, reason: "adjust", request_id: "q1" }],
    ["run.cancel", { run_id: "R_0001", reason: "stop" }],
    ["run.finish", { ...run, outcome: "done", gaps: ["g"], status: "finished" }],
    ["receipt.begin", { ...run, tool: "fetch", idempotency_key: "k1", args: { q: 1 } }],
    ["receipt.begin", { ...run, tool: "fetch", idempotency_key: "k2", args_digest: "a".repeat(64) }],
    ["receipt.settle", { ...run, receipt_id: "RC_0001", outcome: "completed", result_ref: "C_0001" }],
    ["receipt.settle", { ...run, receipt_id: "RC_0001", outcome: "failed", error: "e", evidence: "ev" }],
    ["receipt.list", { run_id: "R_0001", status: "unknown" }],
    ["budget.charge", { ...run, cost: 1.5, requests: 1, unknown: ["input_tokens"], note: "n" }],
    ["budget.reconcile", { ...run, charge_id: "CH_0001", input_tokens: 10, evidence: "bill" }],
    ["budget.status", { run_id: "R_0001" }],
    ["adjust.receive", { text: "make it shorter", run_id: "R_0001" }],
    ["adjust.handoff", { adjustment_id: "A_0001", ...run, request_id: "RC_0001" }],
    ["adjust.satisfy", { adjustment_id: "A_0001", artifact: "report", version: 1 }],
    ["adjust.list", {}],
    ["artifact.put", { name: "report", kind: "draft", content: "draft", note: "n", attachments: [{ name: "a.csv", content: "1,2" }, { name: "b.png", error: "failed" }] }],
    ["artifact.put", { name: "report", kind: "full", content: "full", supersedes: [1], ...run }],
    ["artifact.get", { name: "report" }],
    ["artifact.get", { name: "report", version: 1, attachment: "a.csv" }],
    ["artifact.list", { name: "report" }],
    ["artifact.mark", { name: "report", version: 1, mark: "saved", ok: true, detail: "d" }],
    ["context.put", { label: "page", content: "context body", source: "web", ...run }],
    ["context.read", { ref: "C_0001", offset: 2, length: 4 }],
    ["context.share", { ref: "C_0001", task_id: T }],
    ["memory.get", { id: "S_0001", root }],
  ];
}

const METHOD_NOISE = ["", " ", "task", "task.", ".start", "TASK.START", "task.start ", "task.start\u0000", "Task.Start", "__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "rpc.discover", "system.describe\n", "memory.save.x", "接口.适配", "\u{1F600}", "a".repeat(3000)];

function randomString(r: Rng): string {
  const pools = [
    () => "x".repeat(r.int(40)),
    () => String.fromCharCode(...Array.from({ length: r.int(20) }, () => r.int(0x80))),
    () => String.fromCharCode(...Array.from({ length: r.int(20) }, () => r.int(0x10000))),
    () => "\u0000",
    () => "\ud800",
    () => "\udfff\ud800",
    () => "a\u0000b",
    () => "\u202e\u200b\ufeff",
    () => "接口适配 서버를 \u{1F600}",
    () => "../../etc/passwd",
    () => "R_0001",
    () => "T_x",
    () => "S_0001",
    () => "C_999999999999999",
    () => "RC_0001",
    () => "R_9999999999999999",
    () => "\\",
    () => '"',
    () => "%s%n%x",
    () => "' OR 1=1 --",
  ];
  return r.pick(pools)();
}

/** A JSON value of some shape; `raw` collects number texts that JSON.stringify cannot write. */
function randomValue(r: Rng, raw: string[], d = 0): unknown {
  const x = r.int(d > 3 ? 8 : 12);
  switch (x) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick([0, -1, 1, 1.5, -0, 2 ** 31, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53, 2 ** 53 + 2, 1e21, 1e308, -1e308, 5e-324, 0.1]);
    case 3: {
      const text = r.pick(["1e400", "-1e400", "9007199254740993", "-9007199254740993", "123456789012345678901234567890", "1E+2", "-0.0", "0e0", "1e-400"]);
      raw.push(text);
      return `@@RAW${raw.length - 1}@@`;
    }
    case 4:
    case 5:
      return randomString(r);
    case 6:
      return r.pick(["", "a", "note", "progress", "completed", "fetch", "src/**"]);
    case 7: // long strings only at the top (a value of many of them is just an over-long line)
      return "y".repeat(d === 0 ? r.pick([1999, 2000, 2001, 65536, 65537, 70000]) : r.int(50));
    case 8:
    case 9: {
      // lists at their limit only at the top, of small items
      const n = d === 0 ? r.pick([0, 1, 2, 3, 64, 65]) : r.pick([0, 1, 2, 3]);
      return Array.from({ length: n }, () => randomValue(r, raw, n > 3 ? 4 : d + 1));
    }
    default: {
      const o: Record<string, unknown> = {};
      for (let i = r.int(4); i > 0; i--) setKey(o, r.pick(["a", "type", "id", "jsonrpc", "__proto__", "constructor", "params", "x".repeat(200), ""]), randomValue(r, raw, d + 1));
      return o;
    }
  }
}

function nest(levels: number, inner: unknown): unknown {
  let v = inner;
  for (let i = 0; i < levels; i++) v = i % 2 ? { a: v } : [v];
  return v;
}

/** Values of the right type that a schema lets through, chosen to stress what comes after it. */
const SEMANTIC: Record<string, unknown[]> = {
  query: ['"', "*", "NEAR(a b)", "a AND", "OR", "-x", "^x", "title:x", '"unterminated', "(", ")", "a:b:c", "'", "{a}", "***", "接", "*接口*", "x".repeat(2000), " ", "AND OR NOT", "S_0001", "S_999999999999999", "\u0301", "\u{1F600}", "a\u0000b", "..", "NOT", "x*", "?", "\\"],
  cursor: ["o0", "r0", "o1", "r1", "ozzzzzzzzzzz", "rzzzzzzzzzzz", "o00000000000", "r00000000001", "o9", "r9a"],
  offset: [0, 1, 2 ** 53 - 1, 262_144, 1e15],
  length: [0, 1, 262_144],
  epoch: [1, 2, 2 ** 53 - 1, 1e15],
  version: [1, 2, 2 ** 53 - 1],
  limit: [1, 50],
  task_id: ["T_" + "a".repeat(80), "T_0", "T___", T],
  run_id: ["R_0", "R_000000000000000", "R_999999999999999", "R_0001", "R_0002"],
  parent_run_id: ["R_0001", "R_0002", "R_999999999999999"],
  receipt_id: ["RC_0", "RC_999999999999999", "RC_0001", "RC_0002"],
  charge_id: ["CH_0", "CH_0001", "CH_999999999999999"],
  ref: ["C_0", "C_0001", "C_999999999999999"],
  id: ["S_0", "S_000000000000000", "S_999999999999999", "S_0001"],
  scope: [["**"], ["**/**/**/**/**/**/**/**/**/**"], ["["], ["[!a]"], ["{a,b}"], ["\\"], ["*".repeat(199)], ["a/../b"], ["/abs"], ["~/x"], ["?".repeat(200)], ["Bash"], Array.from({ length: 64 }, (_, i) => `d${i}/**`)],
  action: ["edit " + "*".repeat(1990), "Bash", "edit ../x", "edit /etc/passwd", "x ".repeat(999), "\u202e", "edit src/" + "a/".repeat(900), "edit .longrun/state.json", "edit memory.db"],
  cost: [0, 1e15, 5e-324, 0.30000000000000004],
  tool_calls: [0, 1e15],
  input_tokens: [0, 1e15],
  budget: [{}, { cost: 0 }, { tool_calls: 0 }, { unknown_ceiling: { cost: 0 } }, { deadline: "2000-01-01T00:00:00Z" }, { deadline: "9999-12-31T23:59:59Z" }, { deadline: "2026-11-30T00:00:00+14:00" }, { wall_seconds: 1 }, { wall_seconds: 31_622_400 }],
  unknown: [true, false, [], ["cost", "cost"], ["cost", "requests", "tool_calls", "input_tokens", "output_tokens"]],
  name: ["a", "a".repeat(120), "a..", "A ", "a.", "CON", "nul", "a b", "0"],
  artifact: ["report", "a".repeat(120)],
  kind: ["progress", "a".repeat(40), "a.b-c_d", "draft", "full", "increment", "stop"],
  type: ["a", "a".repeat(40), "session", "note", "outcome"],
  keywords: [["*"], ['"'], ["NEAR("], Array.from({ length: 64 }, (_, i) => `k${i}`), ["接口适配"], ["x".repeat(200)]],
  to: ["pending", "in_progress", "paused", "waiting_verification", "completed", "failed", "blocked"],
  outcome: ["completed", "failed", "x".repeat(65_536)],
  status: ["begun", "completed", "failed", "unknown", "finished"],
  mark: ["preview", "saved", "exported", "opened"],
  supersedes: [[1], [1, 1], [2 ** 53 - 1], Array.from({ length: 1000 }, (_, i) => i + 1)],
  ttl_seconds: [1, 604_800],
  max_uses: [1, 1_000_000],
  force: [true],
  cancel_runs: [true],
  all_tasks: [true, false],
  owner: ["w1", "x".repeat(2000), "\u{1F600}"],
  idempotency_key: ["k1", "k2", "x".repeat(2000)],
  args: [null, {}, [], "s", { a: { b: { c: [1, 2, 3] } } }],
  args_digest: ["0".repeat(64), "f".repeat(64)],
  result_ref: ["C_0001", "x".repeat(2000)],
  items: [Array.from({ length: 1000 }, (_, i) => ({ type: "note", title: `t${i}`, content: "" }))],
  attachments: [[{ name: "a" }], [{ name: "a", content: "" }, { name: "a", content: "x" }], Array.from({ length: 64 }, (_, i) => ({ name: `f${i}`, content: "c" }))],
  settled: [[], Array.from({ length: 64 }, () => "s")],
  content: ["", "\u{1F600}".repeat(262_144), "\r\n".repeat(1000)],
  summary: ["", "\u0301"],
  description: ["接口适配 서버를 english", "x".repeat(65_536)],
  text: ["make it shorter", "x".repeat(65_536)],
  adjustment_id: ["A_0001", "ADJ_0001", "A_0", "x"],
  request_id: ["RC_0001", "RC_0002", "q1"],
};

function semantic(r: Rng, params: Record<string, unknown>): void {
  const keys = Object.keys(params).filter((k) => Object.hasOwn(SEMANTIC, k));
  const k = keys.length && r.chance(0.8) ? r.pick(keys) : r.pick(Object.keys(SEMANTIC));
  setKey(params, k, structuredClone(r.pick(SEMANTIC[k]!)));
}

function safeRoot(r: Rng, root: string): string {
  return r.pick([root, `${root}/`, `${root}/.`, `${root}/sub`, `${root}/sub/..`, `${root}-evil`, "relative/dir", "", "/nonexistent/longrun-fuzz", `${root}\u0000`, `${root}/../${root.split("/").pop()}`, "~", "x".repeat(5000)]);
}

/** Mutates a request object in place a few times. */
function mutate(r: Rng, req: Record<string, any>, root: string, raw: string[]): void {
  for (let n = 1 + r.int(3); n > 0; n--) {
    const params = req.params && typeof req.params === "object" && !Array.isArray(req.params) ? (req.params as Record<string, unknown>) : null;
    // a value the schema accepts, chosen to stress the handler behind it
    if (params && r.chance(0.4)) {
      semantic(r, params);
      continue;
    }
    // the envelope in a fifth of the other mutations: most should reach params validation and the handlers
    const m = r.chance(0.2) ? r.int(4) : 4 + r.int(12);
    const keys = params ? Object.keys(params) : [];
    switch (m) {
      case 0: // the id
        if (r.chance(0.3)) delete req.id;
        else req.id = r.pick<unknown>([null, "", "1", 1.5, -0, true, {}, [], { id: 1 }, "x".repeat(5000), 2 ** 53, 2 ** 53 - 1, 1e21, -7, "@@RAW-ID@@"]);
        if (req.id === "@@RAW-ID@@") {
          raw.push(r.pick(["1e400", "9007199254740993", "-0", "1.0", "1e2"]));
          req.id = `@@RAW${raw.length - 1}@@`;
        }
        break;
      case 1: // the envelope
        if (r.chance(0.5)) delete req.jsonrpc;
        else req.jsonrpc = r.pick<unknown>(["1.0", "2", 2, 2.0, null, "2.0 ", ["2.0"]]);
        break;
      case 2:
        req.method = r.chance(0.7) ? r.pick(METHOD_NOISE) : randomValue(r, raw);
        break;
      case 3: // params of the wrong type
        if (r.chance(0.3)) delete req.params;
        else req.params = r.pick<unknown>([[], [1, 2], "params", 0, null, true, []]);
        break;
      case 4:
      case 5: // a field's type flipped
        if (params && keys.length) setKey(params, r.pick(keys), randomValue(r, raw));
        break;
      case 6: // a field dropped
        if (params && keys.length) delete params[r.pick(keys)];
        break;
      case 7: // a field no schema has
        if (params) setKey(params, r.pick(["extra", "__proto__", "constructor", "prototype", "toString", "ROOT", "task_id", "epoch", ""]), randomValue(r, raw));
        break;
      case 8: // huge strings
        if (params && keys.length) setKey(params, r.pick(keys), r.pick(["z", "é", "\u{1F600}"]).repeat(r.pick([2001, 65537, 300_000, 524_289])));
        break;
      case 9: // deep values near and over the nesting limit (the envelope and params take two levels)
        if (params && keys.length) setKey(params, r.pick(keys), nest(r.pick([20, 29, 30, 31, 40, 200]), r.pick([1, "x", null])));
        break;
      case 10: // NUL, lone surrogates, control characters in every string field
        if (params) for (const k of keys) if (typeof params[k] === "string") params[k] = (params[k] as string) + r.pick(["\u0000", "\ud800", "\udc00", "\u001b[2J", "\r\n", "\u2028"]);
        break;
      case 11: // the root a request names
        if (params) params.root = r.chance(0.8) ? safeRoot(r, root) : r.pick<unknown>([1, null, [], {}, true]);
        break;
      case 12: // numbers at and past their bounds
        if (params) {
          const k = keys.find((x) => typeof params[x] === "number") ?? r.pick(["epoch", "limit", "version", "ttl_seconds", "max_uses", "offset", "length"]);
          params[k] = r.pick([0, -1, 0.5, 1e15, 1e15 + 1, 2 ** 53, -(2 ** 53), 1e308, 604801, 1000001, 51, 262145]);
        }
        break;
      case 13: // lists at and past their bounds
        if (params) {
          const k = keys.find((x) => Array.isArray(params[x])) ?? r.pick(["keywords", "scope", "tools", "items", "supersedes", "gaps"]);
          params[k] = Array.from({ length: r.pick([0, 63, 64, 65, 1000, 1001]) }, (_, i) => (k === "items" ? { type: "note", title: `t${i}`, content: "c" } : k === "supersedes" ? i + 1 : `v${i}`));
        }
        break;
      case 14: // a random method with these params
        req.method = r.pick(validRequests(root))[0];
        break;
      default: // whole params replaced by a random object
        req.params = randomValue(r, raw);
    }
  }
}

function serialize(v: unknown, raw: string[]): string {
  let s = JSON.stringify(v);
  s = s.replace(/"@@RAW(\d+)@@"/g, (_, i) => raw[Number(i)]!);
  return s;
}

const BAD_UTF8 = [[0xff], [0xfe], [0xc0, 0x80], [0xc1, 0xbf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xbf], [0xe4, 0xb8], [0xf0, 0x9f, 0x98]];

/** Damage at the byte level: the result may be several lines, or none that parse. */
function damage(r: Rng, line: Uint8Array): Uint8Array {
  const cat = (...parts: Uint8Array[]) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let off = 0;
    for (const p of parts) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  };
  const insert = (b: Uint8Array, at: number, x: Uint8Array) => cat(b.subarray(0, at), x, b.subarray(at));
  let b = line.slice();
  for (let n = 1 + r.int(2); n > 0; n--) {
    const at = r.int(b.length + 1);
    switch (r.int(9)) {
      case 0:
        b = insert(b, at, Uint8Array.from(r.pick(BAD_UTF8)));
        break;
      case 1:
        b = insert(b, at, Uint8Array.of(0x00));
        break;
      case 2:
        if (b.length) b[r.int(b.length)] = r.int(256);
        break;
      case 3:
        b = b.slice(0, at);
        break;
      case 4: {
        const from = r.int(b.length + 1);
        b = insert(b, at, b.slice(from, from + r.int(200)));
        break;
      }
      case 5:
        b = insert(b, at, Uint8Array.of(0x0d));
        break;
      case 6:
        b = cat(Uint8Array.of(0xef, 0xbb, 0xbf), b);
        break;
      case 7:
        b = insert(b, at, Uint8Array.of(0x0a)); // two lines out of one
        break;
      default:
        b = cat(b, Uint8Array.of(0x0d)); // CRLF
    }
  }
  return cat(b, Uint8Array.of(0x0a));
}

interface Case {
  label: string;
  bytes: Uint8Array;
}

/** Fixed adversarial lines, sent first. */
function specialCases(root: string): Case[] {
  const L = (label: string, s: string | Uint8Array): Case => ({ label, bytes: typeof s === "string" ? enc.encode(s) : s });
  const req = (id: unknown, method = "task.status", params: unknown = {}) => JSON.stringify({ jsonrpc: "2.0", id, method, params });
  return [
    L("empty batch", "[]\n"),
    L("batch of one number", "[1]\n"),
    L("batch of 101", JSON.stringify(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "task.status" }))) + "\n"),
    L("batch of 100 notifications", JSON.stringify(Array.from({ length: 100 }, () => ({ jsonrpc: "2.0", method: "task.status" }))) + "\n"),
    L("batch of 100 with ids", JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: "2.0", id: `b${i}`, method: "memory.search", params: { query: "x" } }))) + "\n"),
    L("nested batches", "[[],[[]],[{}]]\n"),
    L("depth 32", req(1, "task.status", { task_id: nest(30, 1) }) + "\n"),
    L("depth 33", req(2, "task.status", { task_id: nest(31, 1) }) + "\n"),
    L("depth 100000", "[".repeat(100_000) + "]".repeat(100_000) + "\n"),
    L("depth 100000 unbalanced", "{\"a\":".repeat(50_000) + "\n"),
    L("a line of exactly the limit", (() => {
      const head = '{"jsonrpc":"2.0","id":"exact","method":"task.status","pad":"';
      return head + "p".repeat(LIMITS.line_bytes - head.length - 2) + '"}\n';
    })()),
    L("a line of exactly the limit, CRLF", (() => {
      const head = '{"jsonrpc":"2.0","id":"exact-crlf","method":"task.status","pad":"';
      return head + "p".repeat(LIMITS.line_bytes - head.length - 2) + '"}\r\n';
    })()),
    L("a line one byte over the limit", "x".repeat(LIMITS.line_bytes + 1) + "\n"),
    L("an over-long line then a request", "[" + "1,".repeat(600_000) + "1]\n" + req("after-long") + "\n"),
    L("CR alone", "\r\n"),
    L("whitespace", " \t \n"),
    L("BOM then request", "\ufeff" + req("bom") + "\n"),
    L("BOM alone", "\ufeff\n"),
    L("NUL byte alone", Uint8Array.from([0x00, 0x0a])),
    L("raw NUL inside a string", Uint8Array.from([...enc.encode(req("nul").slice(0, -2)), 0x00, ...enc.encode("}}\n")])),
    L("escaped NUL in description", req("nul2", "task.start", { description: "a\u0000b" }) + "\n"),
    L("lone surrogate in title", req("sur", "memory.save", { type: "note", title: "\ud800", content: "x" }) + "\n"),
    L("id 1e400", '{"jsonrpc":"2.0","id":1e400,"method":"task.status"}\n'),
    L("id 2^53+1", '{"jsonrpc":"2.0","id":9007199254740993,"method":"task.status"}\n'),
    L("id -0", '{"jsonrpc":"2.0","id":-0,"method":"task.status"}\n'),
    L("id object", '{"jsonrpc":"2.0","id":{"a":1},"method":"task.status"}\n'),
    L("duplicate keys", '{"jsonrpc":"2.0","id":"dup","id":"dup2","method":"nope","method":"task.status"}\n'),
    L("__proto__ params", '{"jsonrpc":"2.0","id":"proto","method":"memory.save","params":{"__proto__":{"type":"note"},"title":"t","content":"c","type":"note"}}\n'),
    L("constructor params", '{"jsonrpc":"2.0","id":"ctor","method":"task.start","params":{"constructor":{"prototype":{"x":1}},"description":"d"}}\n'),
    L("__proto__ method", req("pm", "__proto__") + "\n"),
    L("hasOwnProperty method", req("hop", "hasOwnProperty") + "\n"),
    L("params null", '{"jsonrpc":"2.0","id":"pn","method":"task.status","params":null}\n'),
    L("params array", '{"jsonrpc":"2.0","id":"pa","method":"task.status","params":[]}\n'),
    L("memory body at its limit", req("big", "memory.save", { type: "note", title: "big", content: "m".repeat(524_288) }) + "\n"),
    L("memory body one over", req("big1", "memory.save", { type: "note", title: "big", content: "m".repeat(524_289) }) + "\n"),
    L("root is a file", req("rf", "task.status", { root: `${root}/file.txt` }) + "\n"),
    L("root with NUL", req("rn", "task.status", { root: `${root}\u0000` }) + "\n"),
    L("root relative", req("rr", "task.status", { root: "." }) + "\n"),
    L("root too long", req("rl", "task.status", { root: "/" + "a".repeat(5000) }) + "\n"),
    L("root deep nonexistent", req("rd", "task.status", { root: "/" + "a/".repeat(2000) }) + "\n"),
    L("not JSON", "hello\n"),
    L("a JSON string", '"just a string"\n'),
    L("a JSON number", "42\n"),
    L("null", "null\n"),
    L("truncated", '{"jsonrpc":"2.0","id":7,"meth\n'),
    L("two in one chunk", req("two-a") + "\n" + req("two-b") + "\n"),
    L("CRLF", req("crlf") + "\r\n"),
    L("context.read of a huge length", req("cr", "context.read", { ref: "C_0001", length: 262_145 }) + "\n"),
    L("search with a garbage cursor", req("cur", "memory.search", { query: "x", cursor: "o" + "z".repeat(11) }) + "\n"),
    L("search cursor at max", req("cur2", "memory.search", { query: "x", cursor: "rzzzzzzzzzzz" }) + "\n"),
    L("run id beyond 2^53", req("rid", "run.get", { run_id: "R_999999999999999" }) + "\n"),
    L("memory id beyond range", req("mid", "memory.get", { id: "S_999999999999999" }) + "\n"),
    L("receipt with huge args", req("ra", "receipt.begin", { run_id: "R_0001", epoch: 1, tool: "fetch", idempotency_key: "huge", args: { a: "q".repeat(900_000) } }) + "\n"),
    L("deadline not a date", req("dl", "run.start", { owner: "o", budget: { deadline: "2026-13-45T99:99:99Z" } }) + "\n"),
    L("a task to hold artifacts", req("st", "task.start", { description: "fuzz" }) + "\n"),
    L("two attachments of one name", req("att2", "artifact.put", { name: "report", kind: "draft", content: "x", attachments: [{ name: "a", content: "1" }, { name: "a", content: "2" }] }) + "\n"),
    L("save_many of 1001", req("sm", "memory.save_many", { items: Array.from({ length: 1001 }, () => ({ type: "note", title: "t", content: "c" })) }) + "\n"),
  ];
}

export interface RpcFuzzOptions {
  binary: string;
  root: string;
  seed: number;
  count: number;
  /** Extra lines of progress (bench). */
  log?: (s: string) => void;
}

export interface RpcFuzzReport {
  cases: number;
  lines: number;
  requestsWithId: number;
  responses: number;
  codes: Record<string, number>;
  internal: { input: string; response: string; message: string }[];
  violations: string[];
  rssKb: { before: number; after: number; peak: number };
  elapsedMs: number;
  serverAlive: boolean;
}

function rssKb(pid: number): { rss: number; hwm: number } {
  try {
    const s = readFileSync(`/proc/${pid}/status`, "utf8");
    return { rss: Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? 0), hwm: Number(/VmHWM:\s+(\d+)/.exec(s)?.[1] ?? 0) };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}

/** How an input is shown in a report: as text when it is UTF-8, else as base64. */
export function showInput(bytes: Uint8Array, max = 600): string {
  try {
    const t = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    return t.length > max ? `${JSON.stringify(t.slice(0, max))}… (${bytes.length} bytes)` : JSON.stringify(t);
  } catch {
    const b = Buffer.from(bytes.subarray(0, max)).toString("base64");
    return `base64:${b}${bytes.length > max ? `… (${bytes.length} bytes)` : ""}`;
  }
}

export async function fuzzRpc(o: RpcFuzzOptions): Promise<RpcFuzzReport> {
  const started = Date.now();
  const r = rng(o.seed);
  mkdirSync(join(o.root, "sub"), { recursive: true });
  writeFileSync(join(o.root, "file.txt"), "not a directory");
  const child: ChildProcessWithoutNullStreams = spawn(o.binary, ["serve", "--root", o.root], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, LONGRUN_CRASH_AT: "" } });
  child.stdin.on("error", () => {});
  let exited: { code: number | null; signal: string | null } | null = null;
  const exit = new Promise<void>((res) => child.on("close", (code, signal) => ((exited = { code, signal }), res())));
  const received: string[] = [];
  let buf = "";
  let wake: (() => void) | null = null;
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      received.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
    wake?.();
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-8000)));

  const report: RpcFuzzReport = { cases: 0, lines: 0, requestsWithId: 0, responses: 0, codes: {}, internal: [], violations: [], rssKb: { before: 0, after: 0, peak: 0 }, elapsedMs: 0, serverAlive: true };
  const violate = (s: string) => {
    if (report.violations.length < 200) report.violations.push(s);
  };
  let consumed = 0;
  const waitFor = async (n: number, ms: number) => {
    const end = Date.now() + ms;
    while (received.length < n && exited === null && Date.now() < end) {
      await new Promise<void>((res) => {
        wake = res;
        setTimeout(res, 50);
      });
      wake = null;
    }
  };

  const write = (bytes: Uint8Array) => new Promise<void>((res) => child.stdin.write(bytes, () => res()));

  const checkResponse = (resp: any, want: { id: unknown; code?: number }, c: Case, where: string) => {
    const input = showInput(c.bytes);
    if (typeof resp !== "object" || resp === null || Array.isArray(resp)) return violate(`${c.label}: ${where} is not a response object: ${JSON.stringify(resp).slice(0, 200)} (input ${input})`);
    if (resp.jsonrpc !== "2.0") violate(`${c.label}: ${where} lacks jsonrpc 2.0 (input ${input})`);
    if (("result" in resp) === ("error" in resp)) violate(`${c.label}: ${where} breaks result xor error (input ${input})`);
    report.responses++;
    if (resp.error) {
      const e = resp.error;
      const code = String(e.code);
      report.codes[code] = (report.codes[code] ?? 0) + 1;
      if (!Number.isInteger(e.code) || typeof e.message !== "string" || typeof e.data?.kind !== "string") violate(`${c.label}: ${where} has a malformed error ${JSON.stringify(e).slice(0, 300)} (input ${input})`);
      if (e.code === -32603) report.internal.push({ input, response: JSON.stringify(resp).slice(0, 800), message: String(e.message) });
      if (want.code !== undefined && e.code !== want.code) violate(`${c.label}: ${where} answered ${e.code} (${e.data?.kind}), the rules say ${want.code} (input ${input})`);
    } else {
      report.codes.ok = (report.codes.ok ?? 0) + 1;
      if (want.code !== undefined) violate(`${c.label}: ${where} succeeded where the rules say error ${want.code}: ${JSON.stringify(resp).slice(0, 200)} (input ${input})`);
    }
  };

  const runCase = async (c: Case) => {
    report.cases++;
    const expects = expectFor(c.bytes);
    report.lines += c.bytes.filter((b) => b === 0x0a).length;
    for (const e of expects) report.requestsWithId += e.kind === "single" ? 1 : e.items.length;
    await write(c.bytes);
    if (!expects.length) return; // notifications and blank lines: nothing may come back (checked at the next case and at the end)
    await waitFor(consumed + expects.length, 20_000);
    const got = received.slice(consumed, consumed + expects.length);
    consumed += got.length;
    if (got.length < expects.length) {
      violate(`${c.label}: ${expects.length} answer(s) due, ${got.length} came within 20 s${exited ? ` (the server exited: ${JSON.stringify(exited)})` : ""} (input ${showInput(c.bytes)})`);
      return;
    }
    const parsed: unknown[] = [];
    for (const line of got) {
      try {
        parsed.push(JSON.parse(line));
      } catch {
        violate(`${c.label}: stdout carried a line that is not JSON: ${line.slice(0, 200)}`);
        return;
      }
    }
    const gotSig = parsed.map((p) => (Array.isArray(p) ? `A:${p.map((x: any) => JSON.stringify(x?.id)).sort().join(",")}` : `S:${JSON.stringify((p as any)?.id)}`)).sort();
    const wantSig = expects.map(sig).sort();
    if (JSON.stringify(gotSig) !== JSON.stringify(wantSig)) {
      violate(`${c.label}: answers ${JSON.stringify(gotSig).slice(0, 300)}, due ${JSON.stringify(wantSig).slice(0, 300)} (input ${showInput(c.bytes)}; an extra answer may belong to the case before)`);
    }
    // pair answers with what was due, by signature, and check each
    const pool = expects.slice();
    for (const p of parsed) {
      const s = Array.isArray(p) ? `A:${p.map((x: any) => JSON.stringify(x?.id)).sort().join(",")}` : `S:${JSON.stringify((p as any)?.id)}`;
      // lines of one case answered with the same id (null) pair by their code first
      const code = Array.isArray(p) ? undefined : (p as any)?.error?.code;
      let i = pool.findIndex((e) => sig(e) === s && e.kind === "single" && e.code === code);
      if (i < 0) i = pool.findIndex((e) => sig(e) === s);
      const e = i >= 0 ? pool.splice(i, 1)[0]! : null;
      if (Array.isArray(p)) {
        const items = e?.kind === "array" ? e.items.slice() : [];
        for (const x of p) {
          const j = items.findIndex((w) => JSON.stringify(w.id) === JSON.stringify((x as any)?.id));
          checkResponse(x, j >= 0 ? items.splice(j, 1)[0]! : { id: (x as any)?.id }, c, "a batch answer");
        }
      } else checkResponse(p, e?.kind === "single" ? e : { id: (p as any)?.id }, c, "the answer");
    }
  };

  const corpus = validRequests(o.root);
  let uid = 0;
  const nextCase = (): Case => {
    const kind = r.int(100);
    const [method, params] = r.pick(corpus);
    const base = (): Record<string, any> => ({ jsonrpc: "2.0", id: r.chance(0.5) ? `f${uid++}` : 100_000 + uid++, method, params: structuredClone(params) });
    const raw: string[] = [];
    if (kind < 12) {
      // valid as it is: keeps tasks, runs and memory changing underneath
      return { label: `valid ${method}`, bytes: enc.encode(serialize(base(), raw) + "\n") };
    }
    if (kind < 57) {
      const req = base();
      mutate(r, req, o.root, raw);
      return { label: `mutated ${method}`, bytes: enc.encode(serialize(req, raw) + "\n") };
    }
    if (kind < 72) {
      const n = r.pick([1, 2, 3, 5, 8, 20]);
      const items: unknown[] = [];
      for (let i = 0; i < n; i++) {
        const [m2, p2] = r.pick(corpus);
        const q: Record<string, any> = { jsonrpc: "2.0", id: `b${uid++}`, method: m2, params: structuredClone(p2) };
        const x = r.int(10);
        if (x < 3) mutate(r, q, o.root, raw);
        else if (x < 5) delete q.id;
        else if (x < 6) items.push(randomValue(r, raw));
        if (x !== 5) items.push(q);
      }
      return { label: `batch of ${items.length}`, bytes: enc.encode(serialize(items, raw) + "\n") };
    }
    if (kind < 80) return { label: "random JSON", bytes: enc.encode(serialize(randomValue(r, raw), raw) + "\n") };
    const req = base();
    if (r.chance(0.5)) mutate(r, req, o.root, raw);
    return { label: `damaged bytes of ${method}`, bytes: damage(r, enc.encode(serialize(req, raw))) };
  };

  try {
    for (const c of specialCases(o.root)) await runCase(c);
    const warm = rssKb(child.pid!);
    report.rssKb.before = warm.rss;
    for (let i = 0; i < o.count && exited === null; i++) {
      await runCase(nextCase());
      if (i % 100 === 0) {
        const m = rssKb(child.pid!);
        report.rssKb.peak = Math.max(report.rssKb.peak, m.rss);
        if (o.log && i % 1000 === 0) o.log(`rpc fuzz: ${i}/${o.count} cases, ${report.responses} answers, ${report.internal.length} internal, ${report.violations.length} violations, RSS ${m.rss} kB`);
      }
    }
    // nothing more may come: every notification stayed unanswered
    const sentinel = enc.encode(JSON.stringify({ jsonrpc: "2.0", id: "final", method: "task.status" }) + "\n");
    await runCase({ label: "final request", bytes: sentinel });
    await new Promise((res) => setTimeout(res, 500));
    if (received.length !== consumed) violate(`${received.length - consumed} answer(s) nobody asked for: ${received.slice(consumed).join(" | ").slice(0, 500)}`);
    report.rssKb.after = rssKb(child.pid!).rss;
    report.rssKb.peak = Math.max(report.rssKb.peak, report.rssKb.after, rssKb(child.pid!).hwm);
  } finally {
    report.serverAlive = exited === null;
    if (exited !== null) violate(`the server died: ${JSON.stringify(exited)}; stderr: ${stderr.slice(-1500)}`);
    child.stdin.end();
    const t = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exit;
    clearTimeout(t);
    if (report.serverAlive && (exited as unknown as { code: number | null })?.code !== 0) violate(`the server did not exit 0 at end of input: ${JSON.stringify(exited)}; stderr: ${stderr.slice(-1500)}`);
  }
  report.elapsedMs = Date.now() - started;
  return report;
}

// ---------------------------------------------------------------------------------------------
// hooks

/** Tools that pass a read-only turn on their own (docs/gate.md). */
const READ_ONLY_TOOLS = new Set([
  "Read", "Grep", "Glob", "LSP", "WebFetch", "WebSearch", "TodoWrite", "Agent", "Task", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode",
  "ListMcpResourcesTool", "ReadMcpResourceTool", "ToolSearch", "WaitForMcpServers", "TaskOutput", "TaskGet", "TaskList", "TaskCreate", "TaskUpdate",
  "TaskStop", "BashOutput", "Skill",
]);
const WRITE_MARKERS = /rm|touch|>|-o|-delete|-exec|\$|`|tee|mv|cp|chmod|dd|sed|awk|python|node|sh\b|xargs|git (commit|push|config|checkout|reset)/;
/** What no tool may read (docs/gate.md, "Protected under any lease", the rows marked "reads too"). */
const READ_PROTECTED = /\.longrun|memory\.db|raw_data|\/proc\/[^/]*\/(environ|mem)/i;

function toolPayloads(root: string): Record<string, unknown>[] {
  const p = (f: string) => join(root, f);
  return [
    { tool_name: "Write", tool_input: { file_path: p("src/a.ts"), content: "x" } },
    { tool_name: "Edit", tool_input: { file_path: p("src/a.ts"), old_string: "a", new_string: "b" } },
    { tool_name: "MultiEdit", tool_input: { file_path: p("src/a.ts"), edits: [{ old_string: "a", new_string: "b" }] } },
    { tool_name: "NotebookEdit", tool_input: { notebook_path: p("n.ipynb"), new_source: "x" } },
    { tool_name: "Read", tool_input: { file_path: p("README.md") } },
    { tool_name: "Read", tool_input: { file_path: p(".longrun/http.json") } },
    { tool_name: "Grep", tool_input: { pattern: "x", path: p("src") } },
    { tool_name: "Grep", tool_input: { pattern: "token", path: root } },
    { tool_name: "Glob", tool_input: { pattern: "**/*.ts" } },
    { tool_name: "Bash", tool_input: { command: "ls -la" } },
    { tool_name: "Bash", tool_input: { command: "git status" } },
    { tool_name: "Bash", tool_input: { command: "cat README.md | head -5" } },
    { tool_name: "Bash", tool_input: { command: "rm -rf src" } },
    { tool_name: "Bash", tool_input: { command: "echo hi > out.txt" } },
    { tool_name: "Bash", tool_input: { command: "sort -o x a.txt" } },
    { tool_name: "Bash", tool_input: { command: "cat .longrun/http.json" } },
    { tool_name: "WebFetch", tool_input: { url: "https://example.com", prompt: "x" } },
    { tool_name: "mcp__github__create_issue", tool_input: { title: "x" } },
    { tool_name: "Task", tool_input: { prompt: "look" } },
    { tool_name: "TodoWrite", tool_input: { todos: [] } },
    { tool_name: "FooTool", tool_input: {} },
    { tool_name: "PowerShell", tool_input: { command: "ls" } },
  ];
}

function mutateHookPayload(r: Rng, p: Record<string, any>, root: string): void {
  const raw: string[] = [];
  for (let n = 1 + r.int(3); n > 0; n--) {
    const ti = p.tool_input && typeof p.tool_input === "object" && !Array.isArray(p.tool_input) ? (p.tool_input as Record<string, unknown>) : null;
    switch (r.int(14)) {
      case 0:
        p.tool_name = randomValue(r, raw);
        break;
      case 1:
        if (typeof p.tool_name === "string") p.tool_name = r.pick([p.tool_name.toLowerCase(), p.tool_name.toUpperCase(), p.tool_name + "\u0000", p.tool_name + " ", " " + p.tool_name, p.tool_name + "\u200b", p.tool_name.replace(/e/g, "\u0435"), p.tool_name.replace(/a/g, "\u0430"), `${p.tool_name}2`, `mcp__x__${p.tool_name}`]);
        break;
      case 2:
        p.tool_input = r.pick<unknown>([null, "tool input", 1, [], [p.tool_input], true]);
        break;
      case 3:
        if (ti) delete ti[r.pick(Object.keys(ti).length ? Object.keys(ti) : ["x"])];
        break;
      case 4:
        if (ti) for (const k of ["file_path", "path", "notebook_path"]) if (k in ti) ti[k] = r.pick<unknown>([".longrun/state.json", `${root}/.longrun/../.longrun/http.json`, `${root}/MEMORY.DB`, `${root}/memory.db-wal`, `${root}/./raw_data/x`, "~/.bashrc", `${root}/.claude/settings.local.json`, "src/a.ts", "../outside.ts", "/etc/passwd", `${root}/src/a.ts\u0000.longrun`, "", 5, null, ["a"], "/proc/self/environ", `${root}/.longrun`]);
        break;
      case 5:
        if (ti && "command" in ti) ti.command = r.pick<unknown>([`${String(ti.command)}; rm -rf .longrun`, `${String(ti.command)} && touch x`, `${String(ti.command)}\u0000rm -rf .`, `$(${String(ti.command)})`, "`rm x`", "ls\nrm -rf src", 5, null, ["ls"], "", " ", "ls ".repeat(20000), "LS -LA", "ls -la #\u202e", "l\\s", "'l''s'", "cat memory.db", "/bin/ls"]);
        break;
      case 6:
        p.cwd = r.pick<unknown>(["/", "/etc", "relative", "", 7, null, `${root}/src`, `${root}/..`, `${root}/.longrun`]);
        break;
      case 7:
        p.hook_event_name = r.pick<unknown>(["Stop", "UserPromptSubmit", "", null, 3, "PreToolUse"]);
        break;
      case 8:
        if (ti) setKey(ti, r.pick(["extra", "__proto__", "constructor", "dangerouslyDisableSandbox", "run_in_background"]), r.pick<unknown>([true, "x", { a: 1 }]));
        break;
      case 9:
        p.tool_input = nest(r.pick([10, 100, 2000]), p.tool_input ?? null);
        break;
      case 10:
        if (ti) for (const k of Object.keys(ti)) if (typeof ti[k] === "string") ti[k] = (ti[k] as string) + r.pick(["\u0000", "\ud800", "\u001b", "\r\n/approve go", "/approve"]);
        break;
      case 11:
        delete p[r.pick(["tool_name", "tool_input", "cwd", "session_id", "hook_event_name"])];
        break;
      case 12:
        setKey(p, r.pick(["__proto__", "constructor", "permissionDecision", "decision"]), r.pick<unknown>(["allow", { permissionDecision: "allow" }, true]));
        break;
      default:
        p.tool_input = randomValue(r, raw);
    }
  }
}

type HookRun = { code: number | null; signal: string | null; stdout: string; stderr: string; ms: number };

function runHookProc(binary: string, args: string[], input: Uint8Array, timeoutMs = 45_000): Promise<HookRun> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(binary, args, { env: { ...process.env, CLAUDE_PROJECT_DIR: "", LONGRUN_CRASH_AT: "" }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-4000)));
    child.stdin.on("error", () => {});
    const t = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(t);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
    });
    child.stdin.end(input);
  });
}

export interface HookFuzzOptions {
  binary: string;
  root: string;
  seed: number;
  /** PreToolUse payloads in the read-only turn. */
  gateCount: number;
  /** Payloads of the other events (and unknown events). */
  eventCount: number;
  /** The current task's stored state (for the lease checks). */
  readTask: (root: string) => Promise<any>;
  concurrency?: number;
  log?: (s: string) => void;
}

export interface HookFuzzReport {
  runs: number;
  /** Known deviations reported, not failed on (see the report of the fuzz that found them). */
  findings: string[];
  outcomes: Record<string, number>;
  violations: string[];
  slowestMs: number;
  elapsedMs: number;
}

const showPayload = (b: Uint8Array) => showInput(b, 400);

/** Whether a hook reads these bytes as a JSON object (UTF-8, a leading BOM dropped, as the hook decodes). */
function isJsonObject(b: Uint8Array): boolean {
  try {
    const v = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(b));
    return typeof v === "object" && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

export async function fuzzHooks(o: HookFuzzOptions): Promise<HookFuzzReport> {
  const started = Date.now();
  const r = rng(o.seed);
  const root = o.root;
  const report: HookFuzzReport = { runs: 0, findings: [], outcomes: {}, violations: [], slowestMs: 0, elapsedMs: 0 };
  const finding = (s: string) => {
    if (report.findings.length < 50) report.findings.push(s);
  };
  const violate = (s: string) => {
    if (report.violations.length < 200) report.violations.push(s);
  };
  const count = (k: string) => (report.outcomes[k] = (report.outcomes[k] ?? 0) + 1);
  const hook = async (event: string, input: Uint8Array) => {
    const res = await runHookProc(o.binary, ["hook", "claude", event, "--root", root], input);
    report.runs++;
    report.slowestMs = Math.max(report.slowestMs, res.ms);
    return res;
  };
  const parseOut = (res: HookRun): { ok: boolean; out: any } => {
    if (!res.stdout.trim()) return { ok: true, out: null };
    try {
      const out = JSON.parse(res.stdout);
      return { ok: typeof out === "object" && out !== null && !Array.isArray(out) && res.stdout.trim().split("\n").length === 1, out };
    } catch {
      return { ok: false, out: null };
    }
  };

  // a task in a read-only turn: started with an approval, then a prompt without one
  await hook("UserPromptSubmit", enc.encode(JSON.stringify({ hook_event_name: "UserPromptSubmit", cwd: root, session_id: "fz", prompt: "Fuzz the gate\n/approve start" })));
  await hook("UserPromptSubmit", enc.encode(JSON.stringify({ hook_event_name: "UserPromptSubmit", cwd: root, session_id: "fz", prompt: "look around first" })));
  const t0 = await o.readTask(root);
  if (!t0 || t0.lease !== null) violate(`set-up: expected a task in a read-only turn, got ${JSON.stringify(t0).slice(0, 300)}`);

  const garbage = (): Uint8Array => {
    const raw: string[] = [];
    switch (r.int(9)) {
      case 0:
        return enc.encode("");
      case 1:
        return enc.encode("not json");
      case 2:
        return Uint8Array.from([...enc.encode('{"tool_name":"Write","tool_input":{"file_path":"a'), ...r.pick(BAD_UTF8), ...enc.encode('"}}')]);
      case 3:
        return enc.encode(serialize(r.pick<unknown>([null, 1, "s", [], [{ tool_name: "Read" }], true]), raw));
      case 4:
        return enc.encode("[".repeat(200_000) + "]".repeat(200_000));
      case 5:
        return enc.encode(JSON.stringify({ tool_name: "Write", tool_input: { file_path: "a", content: "z".repeat(8 * 1024 * 1024 + 10) } }));
      case 6:
        return enc.encode(serialize(randomValue(r, raw), raw));
      case 7:
        return Uint8Array.from([0xef, 0xbb, 0xbf, ...enc.encode(JSON.stringify({ tool_name: "Write", tool_input: { file_path: join(root, "a.ts"), content: "x" } }))]);
      default:
        return enc.encode('{"tool_name":"Write","tool_input":{"file_path":"a.ts"}'); // truncated
    }
  };

  // --- phase 1: the gate in a read-only turn --------------------------------------------------
  const tools = toolPayloads(root);
  const gateCase = (): { input: Uint8Array; payload: Record<string, any> | null } => {
    const x = r.int(100);
    if (x < 15) return { input: garbage(), payload: null };
    const payload: Record<string, any> = { hook_event_name: "PreToolUse", cwd: root, session_id: "fz", tool_use_id: "t", ...structuredClone(r.pick(tools)) };
    if (x >= 25) mutateHookPayload(r, payload, root);
    return { input: enc.encode(serialize(payload, [])), payload };
  };
  const conc = o.concurrency ?? 2;
  let gateLeft = o.gateCount;
  const gateWorker = async () => {
    while (gateLeft-- > 0) {
      const { input, payload } = gateCase();
      const res = await hook("PreToolUse", input);
      const what = `PreToolUse ${showPayload(input)}`;
      if (res.signal || (res.code !== 0 && res.code !== 2)) {
        violate(`${what}: ended ${res.signal ?? `with exit ${res.code}`} (stderr ${res.stderr.slice(0, 300)})`);
        continue;
      }
      const { ok, out } = parseOut(res);
      if (!ok) {
        violate(`${what}: stdout is not one JSON object: ${res.stdout.slice(0, 200)}`);
        continue;
      }
      if (res.ms > 9_000) violate(`${what}: took ${res.ms} ms (the installed timeout is 10 s)`);
      const decision = out?.hookSpecificOutput?.permissionDecision;
      // a pass is nothing at all, or (a shell tool) the same command rewritten into the read-only boundary, and nothing else
      const rewrite = out?.hookSpecificOutput?.updatedInput;
      const keys = out ? Object.keys(out) : [];
      const inner = out?.hookSpecificOutput ? Object.keys(out.hookSpecificOutput).sort().join(",") : "";
      const sameCommand = payload !== null && typeof payload.tool_input?.command === "string" && rewrite?.command === sandboxedCommand(payload.tool_input.command, "read", root, o.binary);
      const rewrittenOnly = out !== null && decision === undefined && keys.length === 1 && inner === "hookEventName,updatedInput" && sameCommand;
      if (out !== null && decision !== "deny" && !rewrittenOnly) violate(`${what}: answered ${res.stdout.slice(0, 200)} (only deny, nothing, or the command rewritten into the read-only sandbox)`);
      if (res.code === 2 && !/longrun: .{10,}/.test(res.stderr)) violate(`${what}: blocked without a reason on stderr`);
      const denied = res.code === 2 || decision === "deny";
      count(denied ? "gate deny" : "gate pass");
      if (denied) continue;
      // it passed: only a read-only tool, well formed, not reaching longrun's files, may
      const p = payload;
      const name = p?.tool_name;
      const ti = p?.tool_input;
      // a missing or null tool_input is read as {} (src/hooks/tools.ts): Grep and Glob with no input search the working directory
      const wellFormed = p !== null && typeof name === "string" && (ti === undefined || ti === null || (typeof ti === "object" && !Array.isArray(ti)));
      // what it names that it reads: the path fields, and where Grep and Glob search when they name no path (the cwd)
      const cwd = typeof p?.cwd === "string" ? p.cwd : root;
      const named = ti && typeof ti === "object" ? (ti as Record<string, unknown>) : {};
      const fields = name === "Read" ? [named.file_path] : name === "Grep" ? [named.path, named.glob] : name === "Glob" ? [named.path, named.pattern] : name === "Bash" ? [named.command] : [];
      const relCwd = (v: unknown) => typeof v === "string" && !v.startsWith("/") && !v.startsWith("~") && READ_PROTECTED.test(cwd);
      // what runs with its working directory inside longrun's files and names no path of its own reads there (finding)
      const implicitCwd = READ_PROTECTED.test(cwd) && (((name === "Grep" || name === "Glob") && named.path === undefined) || name === "Bash");
      const touches = fields.some((v) => typeof v === "string" && READ_PROTECTED.test(v)) || (!implicitCwd && fields.some(relCwd));
      let why = "";
      if (!wellFormed) why = "a malformed payload passed";
      else if (name === "Bash") {
        if (typeof ti.command !== "string" || WRITE_MARKERS.test(ti.command)) why = "a Bash command that may write passed a read-only turn";
      } else if (!READ_ONLY_TOOLS.has(name)) why = `tool ${JSON.stringify(name)} is not read-only and passed a read-only turn`;
      if (!why && touches) why = "a call reading longrun's files passed";
      if (why) violate(`${what}: ${why}`);
      else if (implicitCwd) finding(`${what}: ${name} runs in a cwd inside longrun's files, names no path there, and passed (with "path": "." or an operand it is denied)`);
    }
  };
  await Promise.all(Array.from({ length: conc }, gateWorker));
  o.log?.(`hook fuzz: gate phase done, ${report.runs} runs`);

  // --- phase 2: the other events, and unknown ones ------------------------------------------------
  const events = ["UserPromptSubmit", "Stop", "PreCompact", "SessionStart"];
  for (let i = 0; i < o.eventCount; i++) {
    const x = r.int(100);
    const event = x < 5 ? r.pick(["PostToolUse", "preToolUse", "Notification", "", "PreToolUse ", "SubagentStop", "../x", "Stop\u200b"]) : x < 45 ? "UserPromptSubmit" : r.pick(events);
    let input: Uint8Array;
    let payload: Record<string, any> | null = null;
    if (r.chance(0.2)) input = garbage();
    else {
      payload = { hook_event_name: event, cwd: root, session_id: "fz" };
      if (event === "UserPromptSubmit") payload.prompt = r.pick<unknown>(["continue", "/approve go on", "do it\n/approve scope=src/** fix", "/approvego", " /approve  ok", "／approve fullwidth", "/APPROVE caps", "/approve\u0000 nul", "/approve scope= empty", "/approve ttl=0 zero", "/approve uses=-1 neg", "x\r\n/approve crlf", "/approve " + "r".repeat(5000), 5, null, ["/approve"], { text: "/approve" }, "", "\u2028/approve sep", "> /approve quoted"]);
      if (event === "Stop") Object.assign(payload, r.pick<Record<string, unknown>>([{ stop_hook_active: false, last_assistant_message: "did a thing" }, { stop_hook_active: false }, { stop_hook_active: "yes" }, { stop_hook_active: true }, { last_assistant_message: 5 }, { last_assistant_message: "x".repeat(100_000) }, { transcript_path: "/etc/passwd" }, { transcript_path: "/dev/null" }, { transcript_path: 7 }, { transcript_path: join(root, ".longrun") }, { last_assistant_message: "\u0000\ud800" }]));
      if (event === "PreCompact") Object.assign(payload, r.pick<Record<string, unknown>>([{ trigger: "auto" }, { trigger: 5, custom_instructions: ["x"] }, { custom_instructions: "keep it" }, { last_assistant_message: "compacting" }, {}]));
      if (event === "SessionStart") Object.assign(payload, r.pick<Record<string, unknown>>([{ source: "resume" }, { source: 1 }, { source: "startup" }, {}]));
      if (r.chance(0.3)) {
        const raw: string[] = [];
        const k = r.pick(Object.keys(payload));
        setKey(payload, k, randomValue(r, raw));
        input = enc.encode(serialize(payload, raw));
      } else input = enc.encode(JSON.stringify(payload));
    }
    const res = await hook(event, input);
    const what = `${JSON.stringify(event)} ${showPayload(input)}`;
    const { ok, out } = parseOut(res);
    if (res.signal) {
      violate(`${what}: died by ${res.signal}`);
      continue;
    }
    if (!ok) violate(`${what}: stdout is not one JSON object: ${res.stdout.slice(0, 200)}`);
    if (!(events as string[]).includes(event)) {
      if (res.code !== 2) violate(`${what}: an unknown event must fail closed (exit 2), got ${res.code}`);
      count("unknown event blocked");
      continue;
    }
    if (event === "UserPromptSubmit") {
      if (res.code === 2 || out?.decision === "block") {
        count("prompt blocked");
        if (res.code === 2 && !/longrun: .{10,}/.test(res.stderr)) violate(`${what}: blocked without a reason on stderr`);
        continue;
      }
      if (res.code !== 0 || typeof out?.hookSpecificOutput?.additionalContext !== "string") {
        violate(`${what}: neither a context nor a block (exit ${res.code}, stdout ${res.stdout.slice(0, 200)})`);
        continue;
      }
      if (payload === null && !isJsonObject(input)) violate(`${what}: garbage input did not block the prompt`);
      count("prompt context");
      const prompt = (payload ?? JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(input))).prompt;
      const hasApprovalLine = typeof prompt === "string" && prompt.split(/\r?\n/).some((l) => l.trim().startsWith("/approve"));
      if (!hasApprovalLine) {
        const t = await o.readTask(root);
        if (t?.lease) violate(`${what}: a prompt without an approval line left a lease: ${JSON.stringify(t.lease)}`);
      }
    } else {
      if (res.code !== 0) violate(`${what}: ${event} must never block (exit ${res.code}, stderr ${res.stderr.slice(0, 300)})`);
      count(`${event} exit ${res.code}`);
      if (event === "Stop" && payload && payload.stop_hook_active !== true && out === null) {
        const t = await o.readTask(root);
        if (t?.lease) violate(`${what}: Stop answered nothing and the lease stands: ${JSON.stringify(t.lease)}`);
      }
    }
    if (res.ms > 30_000) violate(`${what}: took ${res.ms} ms`);
  }
  report.elapsedMs = Date.now() - started;
  return report;
}

/** Internal errors grouped by their message: how many, and the shortest input that gave each. */
function internalByMessage(list: { input: string; response: string; message: string }[]): string[] {
  const groups = new Map<string, { n: number; input: string; response: string }>();
  for (const x of list) {
    const msg = x.message;
    const g = groups.get(msg);
    if (!g) groups.set(msg, { n: 1, input: x.input, response: x.response });
    else {
      g.n++;
      if (x.input.length < g.input.length) g.input = x.input;
    }
  }
  return [...groups.entries()].map(([msg, g]) => `${g.n}x ${msg}\n    shortest input: ${g.input}`);
}

export function formatRpcReport(rep: RpcFuzzReport, seed: number): string {
  return [
    `rpc fuzz (seed ${seed}): ${rep.cases} cases, ${rep.lines} lines, ${rep.requestsWithId} answers due, ${rep.responses} answers`,
    `codes: ${JSON.stringify(rep.codes)}`,
    `internal (-32603): ${rep.internal.length}${rep.internal.length ? "\n  " + internalByMessage(rep.internal).join("\n  ") : ""}`,
    `RSS: ${rep.rssKb.before} kB after the fixed cases, ${rep.rssKb.after} kB at the end, peak ${rep.rssKb.peak} kB`,
    `server alive: ${rep.serverAlive}`,
    `violations: ${rep.violations.length}${rep.violations.length ? "\n  " + rep.violations.slice(0, 40).join("\n  ") : ""}`,
    `elapsed: ${(rep.elapsedMs / 1000).toFixed(1)} s`,
  ].join("\n");
}

export function formatHookReport(rep: HookFuzzReport, seed: number): string {
  return [
    `hook fuzz (seed ${seed}): ${rep.runs} processes; outcomes ${JSON.stringify(rep.outcomes)}; slowest ${rep.slowestMs} ms`,
    `findings (reported, not failed on): ${rep.findings.length}${rep.findings.length ? "\n  " + rep.findings.slice(0, 10).join("\n  ") : ""}`,
    `violations: ${rep.violations.length}${rep.violations.length ? "\n  " + rep.violations.slice(0, 40).join("\n  ") : ""}`,
    `elapsed: ${(rep.elapsedMs / 1000).toFixed(1)} s`,
  ].join("\n");
}
