/**
 * A bounded random-kill soak, shared by `bench/soak_kills.ts` (long runs) and
 * `tests/faults/soak.test.ts` (a short one in the suite).
 *
 * Many processes on ONE root: one or two `longrun serve` servers (the stdio side is the host)
 * running a mixed workload (memory saves, short and long bodies; progress and pause checkpoints;
 * lease grants with `writes.enable` and gate checks; receipts begun and settled in each server's
 * own run; artifacts; context), and short `longrun hook claude …` processes hitting the gate
 * beside them. Every so often (a random delay) a server is SIGKILLed, or it kills itself at a
 * crash point when it was started from the crash-test build with `LONGRUN_CRASH_AT`. Then the
 * workload is stopped, the database is checked read-only as the kill left it, the dead server is
 * restarted, it claims its run back, and A1-A4 (../shared/RELIABILITY.md) are checked against
 * what the clients were told:
 *
 * - A1: every save, checkpoint, receipt, settlement, artifact version and context ref that was
 *   acknowledged is present with the bytes it was acknowledged with (the database for the whole
 *   history; `memory.get`, `run.get`, `receipt.list`, `artifact.get`, `context.read` through the
 *   restarted server for what the killed process acknowledged); no acknowledged task version or
 *   run epoch went backwards;
 * - A2: anything present but never acknowledged is something a client sent (no phantom), and a
 *   receipt of a claimed run is never left `begun` (unknown until reconciled);
 * - A3: no receipt is completed without the outcome its settle call carried;
 * - A4: `PRAGMA integrity_check` is ok right after the kill and after the restart; every task's
 *   state parses, matches its row and reads back through the server; a task's last checkpoint is
 *   in memory; a pending checkpoint file, if any, parses.
 *
 * It also counts temp files left in `.longrun/` and `raw_data/` after a restart (a violation: a
 * start removes those of dead writers) and orphan blobs in `raw_data/` (files no row refers to:
 * reported, not a violation).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

// ---------------------------------------------------------------------------------------------
// deterministic randomness

export interface Rng {
  next(): number;
  int(n: number): number;
  range(lo: number, hi: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
}

/** mulberry32: small, fast, seeded. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    range: (lo, hi) => lo + int(hi - lo + 1),
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]) => items[int(items.length)]!,
  };
}

export const sha256 = (s: string | Uint8Array) => createHash("sha256").update(s).digest("hex");
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const pad4 = (n: number) => String(n).padStart(4, "0");

// ---------------------------------------------------------------------------------------------
// a JSON-RPC client over a child's stdio

export interface RpcAnswer {
  result?: any;
  error?: { code: number; message: string; data?: Record<string, any> };
}

/** The process died before it answered: the call's fate is unknown to the client. */
export class Killed extends Error {}

export class RpcChild {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  readonly protocolErrors: string[] = [];
  dead = false;
  stderrTail = "";
  #pending = new Map<number, { resolve: (a: RpcAnswer) => void; reject: (e: Error) => void }>();
  #next = 1;
  #buf = "";

  constructor(argv: string[], env: Record<string, string> = {}) {
    this.child = spawn(argv[0]!, argv.slice(1), { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdin.on("error", () => {}); // EPIPE after a kill
    this.child.stdout.setEncoding("utf8").on("data", (d: string) => {
      this.#buf += d;
      let nl: number;
      while ((nl = this.#buf.indexOf("\n")) >= 0) {
        const line = this.#buf.slice(0, nl);
        this.#buf = this.#buf.slice(nl + 1);
        let msg: any;
        try {
          msg = JSON.parse(line);
        } catch {
          this.protocolErrors.push(`not JSON on stdout: ${line.slice(0, 200)}`);
          continue;
        }
        const p = this.#pending.get(msg?.id);
        if (!p) {
          this.protocolErrors.push(`an answer no request waits for: ${line.slice(0, 200)}`);
          continue;
        }
        this.#pending.delete(msg.id);
        if (("result" in msg) === ("error" in msg)) this.protocolErrors.push(`result xor error broken: ${line.slice(0, 200)}`);
        p.resolve({ result: msg.result, error: msg.error });
      }
    });
    this.child.stderr.setEncoding("utf8").on("data", (d: string) => {
      this.stderrTail = (this.stderrTail + d).slice(-4000);
    });
    this.exited = new Promise((resolve) => {
      this.child.on("close", (code, signal) => {
        this.dead = true;
        for (const p of this.#pending.values()) p.reject(new Killed(`the process exited (${signal ?? code}) before answering`));
        this.#pending.clear();
        resolve({ code, signal });
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get inFlight(): number {
    return this.#pending.size;
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<RpcAnswer> {
    if (this.dead) return Promise.reject(new Killed("the process is gone"));
    const id = this.#next++;
    return new Promise<RpcAnswer>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }

  async ok(method: string, params: Record<string, unknown> = {}): Promise<any> {
    const a = await this.call(method, params);
    if (a.error) throw new Error(`${method} failed: ${JSON.stringify(a.error).slice(0, 500)}`);
    return a.result;
  }

  kill(): void {
    if (!this.dead) this.child.kill("SIGKILL");
  }

  async close(): Promise<void> {
    if (this.dead) return;
    this.child.stdin.end();
    const t = setTimeout(() => this.kill(), 15_000);
    await this.exited;
    clearTimeout(t);
  }
}

// ---------------------------------------------------------------------------------------------
// read-only SQLite of the test's own runtime (bun:sqlite, or node:sqlite under Deno)

interface RoDb {
  all(sql: string, ...args: unknown[]): Record<string, unknown>[];
  close(): void;
}

async function openReadOnly(path: string): Promise<RoDb> {
  if (typeof (globalThis as Record<string, unknown>).Bun !== "undefined") {
    const { Database } = await import("bun:sqlite");
    const db = new Database(path, { readonly: true });
    db.exec("PRAGMA busy_timeout = 10000");
    return { all: (sql, ...args) => db.query(sql).all(...(args as never[])) as Record<string, unknown>[], close: () => db.close() };
  }
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(path, { readOnly: true });
  db.exec("PRAGMA busy_timeout = 10000");
  return { all: (sql, ...args) => db.prepare(sql).all(...(args as never[])) as Record<string, unknown>[], close: () => db.close() };
}

// ---------------------------------------------------------------------------------------------
// the soak

export interface SoakOptions {
  root: string;
  /** The release executable (servers without crash points, and every hook). */
  binary: string;
  /** The crash-test build; when given, some server generations get a random LONGRUN_CRASH_AT. */
  crashBinary?: string | null;
  kills: number;
  seed: number;
  servers?: 1 | 2;
  /** Concurrent request loops per server. */
  workers?: number;
  /** Workload between kills, in ms (a random delay in this range). */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** Concurrent hook processes while the workload runs (0: none). */
  hooks?: number;
  /** Share of hook processes SIGKILLed a few ms after they start. */
  hookKillRate?: number;
  /** Share of server generations started with a crash point (needs crashBinary). */
  crashPointRate?: number;
  /** Stop early once this many violations are known. */
  maxViolations?: number;
  log?: (line: string) => void;
  /** Progress every this many kills (0: never). */
  progressEvery?: number;
}

export interface SoakReport {
  kills: number;
  killsBySignal: number;
  killsByCrashPoint: Record<string, number>;
  acknowledged: Record<string, number>;
  sentUnacknowledged: number;
  errorKinds: Record<string, number>;
  /** The first message of each error kind (by method), to judge whether it was expected. */
  errorSamples: string[];
  unexpectedErrors: string[];
  hooks: { runs: number; killed: number; byEvent: Record<string, number>; denied: number; passed: number; blocked: number };
  violations: string[];
  tempFilesLeft: number;
  /** Temp files of dead writers found right after the kills, before the restart removed them. */
  tempFilesAfterKills: number;
  orphanBlobs: { final: number; max: number; totalBlobs: number };
  elapsedMs: number;
  checkMs: { p50: number; max: number };
  dbBytes: number;
}

const CRASH_POINTS = [
  "memory.before_commit",
  "memory.after_commit",
  "checkpoint.before_commit",
  "checkpoint.after_commit",
  "checkpoint.before_reply",
  "receipt.begin.before_commit",
  "receipt.begin.after_commit",
  "receipt.settle.before_commit",
  "receipt.settle.after_commit",
  "resume.after_replay",
];

const TMP_RE = /^\.(.+)\.(\d+)\.[0-9a-f]+\.tmp$/;

interface ReceiptBook {
  run: string;
  receiptId?: string;
  settle?: { outcome: "completed" | "failed"; ref: string | null };
  settleAcked?: boolean;
}

interface Slot {
  index: number;
  proc: RpcChild;
  gen: number;
  runId: string;
  epoch: number;
  crashPoint: string | null;
  stopping: boolean;
  loops: Promise<void>[];
  /** What this generation had acknowledged: re-read through the restarted server after it dies. */
  ackedMemories: Map<string, string>;
  ackedArtifacts: { task: string; name: string; version: number; sha: string }[];
  ackedContexts: Map<string, string>;
}

class Book {
  memSent = new Map<string, string>(); // uid -> sha of content
  memAcked = new Map<string, { uid: string; sha: string; raw: boolean }>(); // S_ id ->
  cpSent = new Set<string>(); // summaries sent (workload and hooks)
  cpAcked = new Map<string, string>(); // memory id -> sha of the text returned
  receipts = new Map<string, ReceiptBook>(); // idempotency key ->
  artSent = new Set<string>(); // content shas
  artAcked = new Map<string, string>(); // task|name|version -> sha
  ctxSent = new Set<string>();
  ctxAcked = new Map<string, string>(); // C_ ref -> sha
  taskVersion = new Map<string, number>();
  runEpoch = new Map<string, number>();
  acked: Record<string, number> = { memory: 0, memory_large: 0, checkpoint: 0, lease: 0, gate_ok: 0, receipt_begin: 0, receipt_settle: 0, artifact: 0, context: 0, resume: 0, claim: 0 };
  sentUnacked = 0;
  errorKinds: Record<string, number> = {};
  errorSamples: string[] = [];
  unexpected: string[] = [];

  noteTask(t: any): void {
    if (!t || typeof t.task_id !== "string" || typeof t.version !== "number") return;
    if (t.version > (this.taskVersion.get(t.task_id) ?? 0)) this.taskVersion.set(t.task_id, t.version);
  }
}

export async function soak(o: SoakOptions): Promise<SoakReport> {
  const started = Date.now();
  const r = rng(o.seed);
  const log = o.log ?? (() => {});
  const nServers = o.servers ?? 2;
  const workers = o.workers ?? 3;
  const minDelay = o.minDelayMs ?? 30;
  const maxDelay = o.maxDelayMs ?? 400;
  const hookConc = o.hooks ?? 1;
  const hookKillRate = o.hookKillRate ?? 0.05;
  const crashBinary = o.crashBinary && existsSync(o.crashBinary) ? o.crashBinary : null;
  const crashRate = crashBinary ? (o.crashPointRate ?? 0.3) : 0;
  const maxViolations = o.maxViolations ?? 50;
  const root = o.root;
  const book = new Book();
  const violations: string[] = [];
  const violate = (what: string) => {
    if (violations.length < 1000) violations.push(what);
  };
  const report: SoakReport = {
    kills: 0,
    killsBySignal: 0,
    killsByCrashPoint: {},
    acknowledged: book.acked,
    sentUnacknowledged: 0,
    errorKinds: book.errorKinds,
    errorSamples: book.errorSamples,
    unexpectedErrors: book.unexpected,
    hooks: { runs: 0, killed: 0, byEvent: {}, denied: 0, passed: 0, blocked: 0 },
    violations,
    tempFilesLeft: 0,
    tempFilesAfterKills: 0,
    orphanBlobs: { final: 0, max: 0, totalBlobs: 0 },
    elapsedMs: 0,
    checkMs: { p50: 0, max: 0 },
    dbBytes: 0,
  };
  const checkTimes: number[] = [];
  let uidN = 0;
  const uid = () => `${(uidN++).toString(36)}x${r.int(1e6).toString(36)}`;

  const spawnServer = (crash: string | null) =>
    crash && crashBinary
      ? new RpcChild([crashBinary, "serve", "--root", root], { LONGRUN_CRASH_AT: crash })
      : new RpcChild([o.binary, "serve", "--root", root], { LONGRUN_CRASH_AT: "" });

  const recordError = (slot: Slot, method: string, a: RpcAnswer) => {
    const kind = `${String(a.error?.data?.kind ?? a.error?.code)} (${method})`;
    if (book.errorKinds[kind] === undefined) book.errorSamples.push(`${kind}: ${String(a.error?.message).slice(0, 300)}`);
    book.errorKinds[kind] = (book.errorKinds[kind] ?? 0) + 1;
    if (a.error?.code === -32603 || a.error?.code === -32700 || a.error?.code === -32600 || a.error?.code === -32602) {
      if (book.unexpected.length < 50) book.unexpected.push(`server ${slot.index} gen ${slot.gen}: ${method} -> ${JSON.stringify(a.error).slice(0, 400)}`);
    }
  };

  /** One call of the workload: the answer, or null when the process died first (the outcome is unknown). */
  const call = async (slot: Slot, method: string, params: Record<string, unknown>): Promise<RpcAnswer | null> => {
    try {
      const a = await slot.proc.call(method, params);
      if (a.error) recordError(slot, method, a);
      if (a.result?.task) book.noteTask(a.result.task);
      return a;
    } catch (e) {
      if (e instanceof Killed) {
        book.sentUnacked++;
        return null;
      }
      throw e;
    }
  };

  // --- the workload's operations ---------------------------------------------------------------

  const opMemory = async (s: Slot) => {
    const id = uid();
    const large = r.chance(0.12);
    const content = large ? `soak body ${id} `.repeat(Math.ceil((9000 + r.int(8000)) / 16)) : `soak body ${id} ${"lorem ipsum ".repeat(r.int(20))}`;
    const sha = sha256(content);
    book.memSent.set(id, sha);
    const a = await call(s, "memory.save", { type: "note", title: `soak ${id}`, content, keywords: ["soak"] });
    if (a?.result) {
      const mid = a.result.id as string;
      book.memAcked.set(mid, { uid: id, sha, raw: large });
      s.ackedMemories.set(mid, sha);
      book.acked.memory!++;
      if (large) book.acked.memory_large!++;
    }
  };

  const opCheckpoint = async (s: Slot) => {
    const summary = `cp-${uid()}`;
    const pause = r.chance(0.15);
    book.cpSent.add(summary);
    const a = await call(s, "task.checkpoint", { summary, next_step: "go on", ...(pause ? {} : { kind: "progress" }) });
    if (a?.result) {
      book.cpAcked.set(a.result.memory_id, sha256(a.result.text));
      s.ackedMemories.set(a.result.memory_id, sha256(a.result.text));
      book.acked.checkpoint!++;
    }
    if (pause || a?.error?.data?.kind === "transition_error") {
      const res = await call(s, "task.resume", {});
      if (res?.result) book.acked.resume!++;
    }
  };

  const opLease = async (s: Slot) => {
    const a = await call(s, "writes.enable", { reason: `soak grant ${uid()}`, scope: ["src/**"], ...(r.chance(0.3) ? { max_uses: 3 } : {}) });
    if (a?.result) book.acked.lease!++;
    else if (a?.error && ["transition_error", "no_active_task", "conflict"].includes(a.error.data?.kind)) {
      const res = await call(s, "task.resume", {});
      if (res?.result) book.acked.resume!++;
      return;
    }
    if (!a) return;
    const g = await call(s, "writes.require", { action: `edit src/${uid()}.ts` });
    if (g?.result) book.acked.gate_ok!++;
  };

  const opReceipt = async (s: Slot) => {
    const key = `s${s.index}-${uid()}`;
    const rb: ReceiptBook = { run: s.runId };
    book.receipts.set(key, rb);
    const b = await call(s, "receipt.begin", { run_id: s.runId, epoch: s.epoch, tool: "fetch", idempotency_key: key, args: { key } });
    if (!b?.result) return;
    rb.receiptId = b.result.receipt.receipt_id;
    book.acked.receipt_begin!++;
    if (r.chance(0.1)) return; // left begun: after a claim it must be unknown
    const completed = r.chance(0.8);
    rb.settle = { outcome: completed ? "completed" : "failed", ref: completed ? `ref-${key}` : null };
    const st = await call(s, "receipt.settle", {
      run_id: s.runId,
      epoch: s.epoch,
      receipt_id: rb.receiptId,
      outcome: rb.settle.outcome,
      ...(completed ? { result_ref: rb.settle.ref } : { error: "soak failure" }),
    });
    if (st?.result) {
      rb.settleAcked = true;
      book.acked.receipt_settle!++;
    }
  };

  const opArtifact = async (s: Slot) => {
    const content = `artifact ${uid()} ` + (r.chance(0.2) ? "x".repeat(r.int(20000)) : "");
    const sha = sha256(content);
    book.artSent.add(sha);
    const withRun = r.chance(0.5);
    const a = await call(s, "artifact.put", { name: `notes-s${s.index}`, kind: "increment", content, ...(withRun ? { run_id: s.runId, epoch: s.epoch } : {}) });
    if (a?.result) {
      const art = a.result.artifact;
      book.artAcked.set(`${art.task_id}|${art.name}|${art.version}`, sha);
      s.ackedArtifacts.push({ task: art.task_id, name: art.name, version: art.version, sha });
      book.acked.artifact!++;
    }
  };

  const opContext = async (s: Slot) => {
    const content = `context ${uid()} ` + "y".repeat(r.int(3000));
    const sha = sha256(content);
    book.ctxSent.add(sha);
    const withRun = r.chance(0.5);
    const a = await call(s, "context.put", { label: `s${s.index}`, content, ...(withRun ? { run_id: s.runId, epoch: s.epoch, source: "web" } : {}) });
    if (a?.result) {
      book.ctxAcked.set(a.result.ref, sha);
      s.ackedContexts.set(a.result.ref, sha);
      book.acked.context!++;
    }
  };

  const ops: [number, (s: Slot) => Promise<void>][] = [
    [30, opMemory],
    [15, opCheckpoint],
    [10, opLease],
    [25, opReceipt],
    [10, opArtifact],
    [10, opContext],
  ];
  const totalWeight = ops.reduce((n, [w]) => n + w, 0);
  const pickOp = () => {
    let x = r.int(totalWeight);
    for (const [w, f] of ops) {
      if (x < w) return f;
      x -= w;
    }
    return ops[0]![1];
  };

  const loop = async (s: Slot) => {
    while (!s.stopping && !s.proc.dead) {
      try {
        await pickOp()(s);
      } catch (e) {
        if (book.unexpected.length < 50) book.unexpected.push(`workload: ${(e as Error).message}`);
      }
    }
  };

  const startWork = (s: Slot) => {
    s.stopping = false;
    s.loops = Array.from({ length: workers }, () => loop(s));
  };
  const stopWork = async (s: Slot) => {
    s.stopping = true;
    await Promise.all(s.loops);
    s.loops = [];
  };

  // --- hooks ----------------------------------------------------------------------------------

  let hooksStopping = false;
  let hookLoops: Promise<void>[] = [];
  let hookN = 0;
  const protectedCalls = (): Record<string, unknown>[] => [
    { tool_name: "Write", tool_input: { file_path: join(root, "memory.db"), content: "x" } },
    { tool_name: "Edit", tool_input: { file_path: join(root, ".longrun", "root_id"), old_string: "a", new_string: "b" } },
    { tool_name: "Read", tool_input: { file_path: join(root, ".longrun", "http.json") } },
    { tool_name: "Bash", tool_input: { command: "rm -f memory.db-wal" } },
    { tool_name: "Bash", tool_input: { command: `ls raw_data` } },
    { tool_name: "Write", tool_input: { file_path: join(root, "raw_data", "x.txt"), content: "x" } },
  ];
  const ordinaryCalls = (): Record<string, unknown>[] => [
    { tool_name: "Write", tool_input: { file_path: join(root, "src", "a.ts"), content: "x" } },
    { tool_name: "Edit", tool_input: { file_path: join(root, "docs", "a.md"), old_string: "a", new_string: "b" } },
    { tool_name: "Read", tool_input: { file_path: join(root, "src", "a.ts") } },
    { tool_name: "Bash", tool_input: { command: "ls -la" } },
    { tool_name: "Bash", tool_input: { command: "touch src/b.ts" } },
    { tool_name: "Glob", tool_input: { pattern: "**/*.ts" } },
  ];

  const runHook = async () => {
    const n = hookN++;
    const x = r.int(100);
    const event = x < 70 ? "PreToolUse" : x < 85 ? "UserPromptSubmit" : x < 95 ? "Stop" : "PreCompact";
    let payload: Record<string, unknown> = { hook_event_name: event, cwd: root, session_id: "soak" };
    let mustDeny = false;
    if (event === "PreToolUse") {
      mustDeny = r.chance(0.3);
      payload = { ...payload, ...r.pick(mustDeny ? protectedCalls() : ordinaryCalls()), tool_use_id: `t${n}` };
    } else if (event === "UserPromptSubmit") {
      payload.prompt = r.chance(0.5) ? `go on ${n}\n/approve scope=src/** soak ${n}` : `keep going ${n}`;
    } else if (event === "Stop") {
      payload.stop_hook_active = false;
      if (r.chance(0.5)) {
        const said = `stop-${n}`;
        book.cpSent.add(said);
        payload.last_assistant_message = said;
      }
    } else {
      const said = `pc-${n}`;
      book.cpSent.add(said);
      payload.trigger = "auto";
      payload.last_assistant_message = said;
    }
    report.hooks.runs++;
    report.hooks.byEvent[event] = (report.hooks.byEvent[event] ?? 0) + 1;
    const kill = r.chance(hookKillRate);
    const killAfter = r.int(40);
    const t0 = Date.now();
    const res = await new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(o.binary, ["hook", "claude", event, "--root", root], { env: { ...process.env, CLAUDE_PROJECT_DIR: "", LONGRUN_CRASH_AT: "" }, stdio: ["pipe", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      child.stdin.on("error", () => {});
      const killer = kill ? setTimeout(() => child.kill("SIGKILL"), killAfter) : null;
      const limit = setTimeout(() => child.kill("SIGKILL"), 40_000);
      child.on("close", (code, signal) => {
        if (killer) clearTimeout(killer);
        clearTimeout(limit);
        resolve({ code, signal, stdout, stderr });
      });
      child.stdin.end(JSON.stringify(payload));
    });
    const took = Date.now() - t0;
    const what = `hook ${event} #${n} (${JSON.stringify(payload).slice(0, 160)})`;
    if (res.signal === "SIGKILL" && kill) {
      report.hooks.killed++;
      return;
    }
    if (res.signal) return violate(`${what}: died by ${res.signal}; stderr ${res.stderr.slice(0, 300)}`);
    if (res.code !== 0 && res.code !== 2) return violate(`${what}: exit ${res.code}; stderr ${res.stderr.slice(0, 300)}`);
    let out: any = null;
    if (res.stdout.trim()) {
      try {
        out = JSON.parse(res.stdout);
      } catch {
        return violate(`${what}: stdout is not one JSON answer: ${res.stdout.slice(0, 200)}`);
      }
    }
    const deadline = event === "PreToolUse" ? 4_000 : event === "UserPromptSubmit" ? 15_000 : 30_000;
    if (took > deadline + 3_000) violate(`${what}: answered after ${took} ms (its deadline is ${deadline} ms)`);
    if (event === "PreToolUse") {
      const d = out?.hookSpecificOutput?.permissionDecision;
      if (d !== undefined && d !== "deny") violate(`${what}: answered permissionDecision ${JSON.stringify(d)}`);
      const denied = res.code === 2 || d === "deny";
      if (denied) report.hooks.denied++;
      else report.hooks.passed++;
      if (mustDeny && !denied) violate(`${what}: a protected path was not denied (exit ${res.code}, stdout ${res.stdout.slice(0, 200)})`);
    } else if (event === "UserPromptSubmit") {
      if (res.code === 2 || out?.decision === "block") report.hooks.blocked++;
      else if (typeof out?.hookSpecificOutput?.additionalContext !== "string") violate(`${what}: neither context nor a block: ${res.stdout.slice(0, 200)}`);
    } else if (res.code !== 0) violate(`${what}: ${event} must never block, exit ${res.code}: ${res.stderr.slice(0, 300)}`);
  };

  const hookLoop = async () => {
    while (!hooksStopping) {
      try {
        await runHook();
      } catch (e) {
        violate(`hook runner: ${(e as Error).message}`);
      }
    }
  };

  // --- checks ---------------------------------------------------------------------------------

  const listDir = (d: string) => {
    try {
      return readdirSync(d);
    } catch {
      return [];
    }
  };

  const pidAlive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      return (e as { code?: string }).code === "EPERM";
    }
  };

  /** Integrity right after the kill, before anything restarts (the crash image, WAL and all). */
  const checkIntegrity = async (when: string) => {
    const db = await openReadOnly(join(root, "memory.db"));
    try {
      const rows = db.all("PRAGMA integrity_check");
      const v = rows.map((x) => Object.values(x)[0]).join("; ");
      if (v !== "ok") violate(`A4 (${when}): integrity_check says ${v.slice(0, 500)}`);
    } finally {
      db.close();
    }
  };

  let checkedArtifacts = 0;
  const checkDb = async (k: number, claimed: Set<string>) => {
    const at = `after kill ${k}`;
    const db = await openReadOnly(join(root, "memory.db"));
    try {
      // A4: integrity, then the task rows
      const ic = db.all("PRAGMA integrity_check").map((x) => Object.values(x)[0]).join("; ");
      if (ic !== "ok") violate(`A4 ${at}: integrity_check says ${ic.slice(0, 500)}`);
      const memories = new Map<number, { type: string; title: string; sha: string; raw: string | null; content: string; size: number }>();
      for (const m of db.all("SELECT seq, type, title, sha256, raw_ref, size, CASE WHEN type = 'session' THEN content ELSE '' END AS content FROM memories")) {
        memories.set(Number(m.seq), { type: String(m.type), title: String(m.title), sha: String(m.sha256), raw: m.raw_ref === null ? null : String(m.raw_ref), content: String(m.content), size: Number(m.size) });
      }
      const memOf = (id: string) => memories.get(Number(id.slice(2)));
      for (const t of db.all("SELECT task_id, state, version, status FROM tasks")) {
        let st: any;
        try {
          st = JSON.parse(String(t.state));
        } catch (e) {
          violate(`A4 ${at}: task ${t.task_id} state does not parse: ${(e as Error).message}`);
          continue;
        }
        if (st.task_id !== t.task_id || st.version !== Number(t.version) || st.status !== t.status) {
          violate(`A4 ${at}: task ${t.task_id} row (version ${t.version}, ${t.status}) and state (version ${st.version}, ${st.status}) disagree`);
        }
        const acked = book.taskVersion.get(String(t.task_id)) ?? 0;
        if (Number(t.version) < acked) violate(`A1 ${at}: task ${t.task_id} is at version ${t.version}, but version ${acked} was acknowledged`);
        const lc = st.last_checkpoint?.memory_id;
        if (lc && !memOf(lc)) violate(`A4 ${at}: task ${t.task_id}'s last checkpoint ${lc} is not in memory`);
      }
      for (const id of book.taskVersion.keys()) {
        if (!db.all("SELECT 1 FROM tasks WHERE task_id = ?", id).length) violate(`A1 ${at}: task ${id} is gone`);
      }
      const cur = db.all("SELECT value FROM root_meta WHERE key = 'current_task'")[0];
      if (!cur || !db.all("SELECT 1 FROM tasks WHERE task_id = ?", cur.value).length) violate(`A4 ${at}: no current task, or it names a missing one (${cur?.value})`);

      // A1 memory: every acknowledged save and checkpoint, with its bytes
      for (const [id, m] of book.memAcked) {
        const row = memOf(id);
        if (!row) violate(`A1 ${at}: memory ${id} (soak ${m.uid}) was acknowledged and is missing`);
        else if (row.sha !== m.sha || row.title !== `soak ${m.uid}`) violate(`A1 ${at}: memory ${id} is not what was acknowledged (title ${row.title})`);
      }
      for (const [id, sha] of book.cpAcked) {
        const row = memOf(id);
        if (!row) violate(`A1 ${at}: checkpoint ${id} was acknowledged and is not in memory`);
        else if (row.sha !== sha) violate(`A1 ${at}: checkpoint ${id} in memory differs from the text that was shown`);
      }
      // A2 memory: nothing that no client sent
      const rawRefs = new Set<string>();
      for (const [seq, m] of memories) {
        if (m.raw) rawRefs.add(m.raw);
        if (m.type === "note") {
          const u = m.title.startsWith("soak ") ? m.title.slice(5) : null;
          if (!u || book.memSent.get(u) !== m.sha) violate(`A2 ${at}: memory S_${pad4(seq)} (${m.title}) is not a save any client sent`);
        } else if (m.type === "session") {
          const s = /\nsummary: (\S+)/.exec(m.content)?.[1];
          if (!s || !book.cpSent.has(s)) violate(`A2 ${at}: checkpoint S_${pad4(seq)} carries a summary no client sent (${s})`);
        } else violate(`A2 ${at}: memory S_${pad4(seq)} of unexpected type ${m.type}`);
        if (m.raw && !existsSync(join(root, m.raw))) violate(`A1 ${at}: memory S_${pad4(seq)}'s body ${m.raw} is missing`);
      }

      // runs: epochs never go back; receipts A1-A3
      const runs = new Map<number, { id: string; epoch: number }>();
      for (const x of db.all("SELECT seq, epoch FROM runs")) runs.set(Number(x.seq), { id: `R_${pad4(Number(x.seq))}`, epoch: Number(x.epoch) });
      for (const [id, e] of book.runEpoch) {
        const run = runs.get(Number(id.slice(2)));
        if (!run) violate(`A1 ${at}: run ${id} is gone`);
        else if (run.epoch < e) violate(`A1 ${at}: run ${id} is at epoch ${run.epoch}, but epoch ${e} was acknowledged`);
      }
      const seen = new Set<string>();
      for (const x of db.all("SELECT seq, run_seq, idempotency_key, status, result_ref, error FROM receipts")) {
        const key = String(x.idempotency_key);
        const runId = runs.get(Number(x.run_seq))?.id ?? `run#${x.run_seq}`;
        const rid = `RC_${pad4(Number(x.seq))}`;
        seen.add(key);
        const b = book.receipts.get(key);
        if (!b) {
          violate(`A2 ${at}: receipt ${rid} (${key}) was never begun by a client`);
          continue;
        }
        if (b.run !== runId) violate(`A2 ${at}: receipt ${rid} (${key}) is on ${runId}, begun on ${b.run}`);
        if (b.receiptId && b.receiptId !== rid) violate(`A1 ${at}: receipt ${key} was acknowledged as ${b.receiptId} and is ${rid}`);
        const status = String(x.status);
        if (status === "completed" && (x.result_ref === null || b.settle?.outcome !== "completed" || x.result_ref !== b.settle.ref)) {
          violate(`A3 ${at}: receipt ${rid} (${key}) is completed with result_ref ${x.result_ref}, but its settle was ${JSON.stringify(b.settle ?? null)}`);
        }
        if (status === "failed" && b.settle?.outcome !== "failed") violate(`A2 ${at}: receipt ${rid} (${key}) is failed, but no client failed it`);
        if (b.settleAcked && status !== b.settle!.outcome) violate(`A1 ${at}: receipt ${rid} (${key}) was acknowledged ${b.settle!.outcome} and is ${status}`);
        if (status === "begun" && claimed.has(runId)) violate(`A2 ${at}: receipt ${rid} (${key}) of claimed run ${runId} is still begun (must be unknown)`);
        if (status === "begun" && !b.receiptId) violate(`A2 ${at}: receipt ${rid} (${key}) is begun, but its begin was never acknowledged (and the run was not claimed)`);
      }
      for (const [key, b] of book.receipts) if (b.receiptId && !seen.has(key)) violate(`A1 ${at}: receipt ${b.receiptId} (${key}) was acknowledged and is missing`);

      // artifacts and contexts: acknowledged ones present with their bytes; none unsent; bodies on disk
      const blobRefs = new Set<string>(rawRefs);
      const arts = db.all("SELECT task_id, name, version, ref, size, sha256 FROM artifacts");
      const artMap = new Map<string, Record<string, unknown>>();
      for (const a of arts) {
        artMap.set(`${a.task_id}|${a.name}|${a.version}`, a);
        blobRefs.add(String(a.ref));
        if (!book.artSent.has(String(a.sha256))) violate(`A2 ${at}: artifact ${a.name}@${a.version} holds content no client sent`);
        const p = join(root, String(a.ref));
        let size = -1;
        try {
          size = statSync(p).size;
        } catch {
          // missing
        }
        if (size !== Number(a.size)) violate(`A1 ${at}: artifact ${a.name}@${a.version}'s body ${a.ref} is ${size < 0 ? "missing" : `${size} bytes, not ${a.size}`}`);
      }
      for (const a of db.all("SELECT ref FROM artifact_attachments WHERE ref IS NOT NULL")) blobRefs.add(String(a.ref));
      let hashed = 0;
      for (const [k, sha] of book.artAcked) {
        const a = artMap.get(k);
        if (!a) violate(`A1 ${at}: artifact ${k} was acknowledged and is missing`);
        else if (a.sha256 !== sha) violate(`A1 ${at}: artifact ${k} is not what was acknowledged`);
        else if (hashed++ >= checkedArtifacts) {
          // hash the bodies acknowledged since the last check
          try {
            if (sha256(readFileSync(join(root, String(a.ref)))) !== sha) violate(`A1 ${at}: artifact ${k}'s body does not match its sha256`);
          } catch {
            // reported above as missing
          }
        }
      }
      checkedArtifacts = book.artAcked.size;
      const ctx = new Map<string, Record<string, unknown>>();
      for (const c of db.all("SELECT seq, path, size, sha256 FROM contexts")) {
        ctx.set(`C_${pad4(Number(c.seq))}`, c);
        blobRefs.add(String(c.path));
        if (!book.ctxSent.has(String(c.sha256))) violate(`A2 ${at}: context C_${pad4(Number(c.seq))} holds content no client sent`);
        if (!existsSync(join(root, String(c.path)))) violate(`A1 ${at}: context C_${pad4(Number(c.seq))}'s body ${c.path} is missing`);
      }
      for (const [ref, sha] of book.ctxAcked) {
        const c = ctx.get(ref);
        if (!c) violate(`A1 ${at}: context ${ref} was acknowledged and is missing`);
        else if (c.sha256 !== sha) violate(`A1 ${at}: context ${ref} is not what was acknowledged`);
      }

      // orphans: blobs no row refers to (reported); temp files of dead writers (a violation after a restart)
      let orphans = 0;
      let blobs = 0;
      for (const n of listDir(join(root, "raw_data"))) {
        if (TMP_RE.test(n)) continue;
        blobs++;
        if (!blobRefs.has(`raw_data/${n}`)) orphans++;
      }
      report.orphanBlobs.final = orphans;
      report.orphanBlobs.totalBlobs = blobs;
      report.orphanBlobs.max = Math.max(report.orphanBlobs.max, orphans);
    } finally {
      db.close();
    }
    let temps = 0;
    for (const d of [join(root, ".longrun"), join(root, "raw_data")]) {
      for (const n of listDir(d)) {
        const m = TMP_RE.exec(n);
        if (!m && !n.endsWith(".tmp")) continue;
        if (m && pidAlive(Number(m[2]))) continue; // a live writer's, mid-write
        temps++;
        violate(`temp file left after a restart (kill ${k}): ${join(d, n)}`);
      }
    }
    report.tempFilesLeft += temps;
    const pending = join(root, ".longrun", "pending_checkpoint.json");
    if (existsSync(pending)) {
      const text = readFileSync(pending, "utf8");
      if (text !== "") {
        try {
          const p = JSON.parse(text);
          const s = /\nsummary: (\S+)/.exec(String(p?.record?.content ?? ""))?.[1];
          if (!s || !book.cpSent.has(s)) violate(`A2 after kill ${k}: the pending checkpoint carries a summary no client sent`);
        } catch (e) {
          violate(`A4 after kill ${k}: the pending checkpoint does not parse: ${(e as Error).message}`);
        }
      }
    }
  };

  /** Through the restarted server: what the dead generation acknowledged reads back; state reads back. */
  const checkThroughServer = async (k: number, s: Slot, dead: { ackedMemories: Map<string, string>; ackedArtifacts: Slot["ackedArtifacts"]; ackedContexts: Map<string, string> }) => {
    const at = `after kill ${k} (through server ${s.index})`;
    for (const [id, sha] of dead.ackedMemories) {
      const a = await s.proc.call("memory.get", { id });
      if (!a.result) violate(`A1 ${at}: memory.get ${id} -> ${JSON.stringify(a.error).slice(0, 300)}`);
      else if (sha256(String(a.result.record?.content)) !== sha) violate(`A1 ${at}: memory.get ${id} returns other content than was acknowledged`);
    }
    for (const art of dead.ackedArtifacts) {
      // artifact.get reads the current task's artifacts: compare only when it is the task the version was saved in
      const a = await s.proc.call("artifact.get", { name: art.name, version: art.version });
      if (a.result?.artifact?.task_id === art.task && sha256(String(a.result.artifact.content)) !== art.sha) violate(`A1 ${at}: artifact.get ${art.name}@${art.version} returns other content`);
      if (a.error && a.error.data?.kind !== "not_found") violate(`A4 ${at}: artifact.get ${art.name}@${art.version} -> ${JSON.stringify(a.error).slice(0, 300)}`);
    }
    for (const [ref, sha] of dead.ackedContexts) {
      // a ref belongs to its task: from another current task it is refused; the database check covers it
      const a = await s.proc.call("context.read", { ref });
      if (a.error && !["not_found", "unauthorized"].includes(a.error.data?.kind)) violate(`A4 ${at}: context.read ${ref} -> ${JSON.stringify(a.error).slice(0, 300)}`);
      if (a.result && sha256(String(a.result.text)) !== sha) violate(`A1 ${at}: context.read ${ref} returns other bytes`);
    }
    const list = await s.proc.call("task.list", {});
    if (!list.result) return violate(`A4 ${at}: task.list -> ${JSON.stringify(list.error).slice(0, 300)}`);
    for (const t of list.result.tasks ?? []) {
      const st = await s.proc.call("task.status", { task_id: t.task_id });
      if (!st.result?.task) violate(`A4 ${at}: task.status ${t.task_id} -> ${JSON.stringify(st.error ?? st.result).slice(0, 300)}`);
    }
    for (const slot of slots) {
      const g = await s.proc.call("run.get", { run_id: slot.runId });
      if (!g.result?.run) violate(`A4 ${at}: run.get ${slot.runId} -> ${JSON.stringify(g.error).slice(0, 300)}`);
    }
    const rl = await s.proc.call("receipt.list", { run_id: s.runId });
    if (!rl.result) violate(`A4 ${at}: receipt.list ${s.runId} -> ${JSON.stringify(rl.error).slice(0, 300)}`);
    else {
      for (const x of rl.result.receipts) {
        if (x.status === "begun") violate(`A2 ${at}: receipt.list shows ${x.receipt_id} begun after the claim`);
        if (x.status === "completed" && !x.result_ref) violate(`A3 ${at}: receipt.list shows ${x.receipt_id} completed without result_ref`);
      }
    }
  };

  // --- set up: one task and one run per server ---------------------------------------------------

  const slots: Slot[] = [];
  for (let i = 0; i < nServers; i++) {
    const proc = spawnServer(null);
    const slot: Slot = { index: i, proc, gen: 0, runId: "", epoch: 0, crashPoint: null, stopping: false, loops: [], ackedMemories: new Map(), ackedArtifacts: [], ackedContexts: new Map() };
    const t = await proc.ok("task.start", { description: `soak task ${i} (seed ${o.seed})` });
    book.noteTask(t.task);
    const run = (await proc.ok("run.start", { owner: `s${i}-g0`, tools: ["fetch"], sources: ["web"] })).run;
    slot.runId = run.run_id;
    slot.epoch = run.epoch;
    book.runEpoch.set(run.run_id, run.epoch);
    slots.push(slot);
  }

  const restart = async (s: Slot, k: number) => {
    s.gen++;
    s.crashPoint = crashRate > 0 && r.chance(crashRate) ? r.pick(CRASH_POINTS) : null;
    s.proc = spawnServer(s.crashPoint);
    const claim = await s.proc.call("run.claim", { run_id: s.runId, owner: `s${s.index}-g${s.gen}` });
    if (!claim.result) {
      violate(`A4 after kill ${k}: server ${s.index} could not claim ${s.runId} back: ${JSON.stringify(claim.error).slice(0, 300)}`);
      return;
    }
    s.epoch = claim.result.run.epoch;
    book.runEpoch.set(s.runId, s.epoch);
    book.acked.claim!++;
  };

  // --- the kill loop ------------------------------------------------------------------------------

  for (const s of slots) startWork(s);
  const startHooks = () => {
    hooksStopping = false;
    hookLoops = Array.from({ length: hookConc }, () => hookLoop());
  };
  startHooks();
  let k = 0;
  while (k < o.kills && violations.length < maxViolations) {
    const delay = r.range(minDelay, maxDelay);
    // the workload runs until the delay passes or a server kills itself at its crash point
    await Promise.race([sleep(delay), ...slots.map((s) => s.proc.exited)]);
    if (!slots.some((s) => s.proc.dead)) {
      const victim = r.pick(slots);
      victim.proc.kill();
    }
    // stop the workload and the hooks; the survivors finish what they had in flight
    hooksStopping = true;
    await Promise.all(slots.map((s) => stopWork(s)));
    await Promise.all(hookLoops);
    const dead = slots.filter((s) => s.proc.dead);
    for (const s of dead) {
      const ex = await s.proc.exited;
      k++;
      if (s.crashPoint && ex.signal === "SIGKILL" && s.proc.stderrTail.includes(`crash point ${s.crashPoint}`)) {
        report.killsByCrashPoint[s.crashPoint] = (report.killsByCrashPoint[s.crashPoint] ?? 0) + 1;
      } else if (ex.signal === "SIGKILL") report.killsBySignal++;
      else {
        violate(`server ${s.index} gen ${s.gen} exited on its own (${ex.signal ?? ex.code}): ${s.proc.stderrTail.slice(-500)}`);
      }
      for (const pe of s.proc.protocolErrors) violate(`server ${s.index} gen ${s.gen}: ${pe}`);
    }
    const t0 = Date.now();
    // temp files a dead writer left: a restart must remove them (counted again after it)
    for (const d of [join(root, ".longrun"), join(root, "raw_data")]) {
      for (const n of listDir(d)) {
        const m = TMP_RE.exec(n);
        if (m && !pidAlive(Number(m[2]))) report.tempFilesAfterKills++;
      }
    }
    await checkIntegrity(`right after kill ${k}, before any restart`);
    const claimed = new Set<string>();
    const deadAcks = new Map<Slot, Pick<Slot, "ackedMemories" | "ackedArtifacts" | "ackedContexts">>();
    for (const s of dead) {
      deadAcks.set(s, { ackedMemories: s.ackedMemories, ackedArtifacts: s.ackedArtifacts, ackedContexts: s.ackedContexts });
      s.ackedMemories = new Map();
      s.ackedArtifacts = [];
      s.ackedContexts = new Map();
      await restart(s, k);
      claimed.add(s.runId);
    }
    await checkDb(k, claimed);
    for (const s of dead) {
      try {
        await checkThroughServer(k, s, deadAcks.get(s)!);
      } catch (e) {
        if (!(e instanceof Killed)) throw e; // it reached its crash point already: the next round handles it
      }
    }
    checkTimes.push(Date.now() - t0);
    if (o.progressEvery && k % o.progressEvery < dead.length) {
      log(`kills ${k}/${o.kills}  acked ${JSON.stringify(book.acked)}  violations ${violations.length}  orphan blobs ${report.orphanBlobs.final}/${report.orphanBlobs.totalBlobs}  check ${checkTimes.at(-1)} ms  ${Math.round((Date.now() - started) / 1000)} s`);
    }
    if (k >= o.kills || violations.length >= maxViolations) break;
    // a survivor's generation keeps its acknowledgements until it dies
    for (const s of slots) startWork(s);
    startHooks();
  }

  // --- wind down: clean stop, a last full check ---------------------------------------------------
  hooksStopping = true;
  await Promise.all(slots.map((s) => stopWork(s)));
  await Promise.all(hookLoops);
  for (const s of slots) {
    await s.proc.close();
    for (const pe of s.proc.protocolErrors) violate(`server ${s.index} gen ${s.gen}: ${pe}`);
  }
  const final = new RpcChild([o.binary, "serve", "--root", root]);
  try {
    await final.ok("task.list", {});
    // a server that died on the way out (a crash point) leaves its run to be claimed, as after any kill
    const claimed = new Set<string>();
    for (const s of slots) {
      if ((await s.proc.exited).signal === null) continue;
      const c = await final.call("run.claim", { run_id: s.runId, owner: "auditor" });
      if (c.result) book.runEpoch.set(s.runId, c.result.run.epoch);
      claimed.add(s.runId);
    }
    await checkDb(k, claimed);
  } finally {
    await final.close();
  }
  await checkIntegrity("at the end");
  report.kills = k;
  report.sentUnacknowledged = book.sentUnacked;
  report.elapsedMs = Date.now() - started;
  const sorted = [...checkTimes].sort((a, b) => a - b);
  report.checkMs = { p50: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted.at(-1) ?? 0 };
  try {
    report.dbBytes = statSync(join(root, "memory.db")).size;
  } catch {
    // none
  }
  return report;
}

export function formatReport(rep: SoakReport, seed: number): string {
  const lines = [
    `kills: ${rep.kills} (SIGKILL from outside: ${rep.killsBySignal}; at crash points: ${Object.values(rep.killsByCrashPoint).reduce((a, b) => a + b, 0)} ${JSON.stringify(rep.killsByCrashPoint)})`,
    `seed: ${seed}`,
    `acknowledged writes by kind: ${Object.entries(rep.acknowledged).map(([k, v]) => `${k} ${v}`).join(", ")}`,
    `calls whose server died before answering: ${rep.sentUnacknowledged}`,
    `error kinds answered (expected under contention): ${JSON.stringify(rep.errorKinds)}`,
    `first message of each: ${rep.errorSamples.length ? "\n  " + rep.errorSamples.join("\n  ") : "-"}`,
    `unexpected errors: ${rep.unexpectedErrors.length}${rep.unexpectedErrors.length ? "\n  " + rep.unexpectedErrors.join("\n  ") : ""}`,
    `hook processes: ${rep.hooks.runs} (${JSON.stringify(rep.hooks.byEvent)}; SIGKILLed ${rep.hooks.killed}; PreToolUse denied ${rep.hooks.denied}, passed with no decision ${rep.hooks.passed}; prompts blocked ${rep.hooks.blocked})`,
    `temp files of killed writers: ${rep.tempFilesAfterKills} found right after the kills; left after the restarts: ${rep.tempFilesLeft}`,
    `orphan blobs in raw_data/: ${rep.orphanBlobs.final} at the end (max ${rep.orphanBlobs.max}) of ${rep.orphanBlobs.totalBlobs} files`,
    `memory.db: ${(rep.dbBytes / 1e6).toFixed(1)} MB; check after each kill p50 ${rep.checkMs.p50} ms, max ${rep.checkMs.max} ms`,
    `violations: ${rep.violations.length}${rep.violations.length ? "\n  " + rep.violations.join("\n  ") : ""}`,
    `elapsed: ${(rep.elapsedMs / 1000).toFixed(1)} s`,
  ];
  return lines.join("\n");
}
