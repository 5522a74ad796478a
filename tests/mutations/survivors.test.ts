/**
 * Tests that kill the mutants a review left alive: hand-made single changes of the source under
 * which the rest of the suite stayed green. One test per mutant, named after the behaviour it pins
 * down; the comment above each names the mutation it kills.
 *
 * Real parts throughout: libSQL roots in temp directories, HTTP on 127.0.0.1, and real processes.
 * Process tests run the source with the runtime running the tests (so a change in `src/` shows up
 * without a rebuild) and the compiled binary. The only test doubles are for failure injection,
 * and are named as such.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { TaskContract } from "../../src/core/contract.ts";
import { LIMITS } from "../../src/core/limits.ts";
import type { PendingStore, StateStore } from "../../src/core/ports.ts";
import { tokensFrom } from "../../src/http/tokens.ts";
import { systemClock, systemIds } from "../../src/store/system.ts";
import { FailingMemory, RecordingMemory } from "../contract/doubles.ts";
import { contractWith, type Fixture, hasState, openFixture } from "../contract/setup.ts";
import { REPO, removeDir, run, scriptArgv, tempDir, until } from "../support/helpers.ts";
import { RpcFixture } from "../ledger/rpc.ts";
import { BINARY, requireBinary, Server, type Target } from "../protocol/server.ts";
import { raw } from "../http/raw.ts";

/** The source run by this runtime (reflects `src/` as it is now), and the compiled binary. */
const SOURCE: Target = { name: "the source (this runtime)", argv: scriptArgv(join(REPO, "src", "main.ts")) };
const COMPILED: Target = { name: "the compiled binary", argv: [BINARY] };
const TARGETS = [SOURCE, COMPILED];

function needs(target: Target): void {
  if (target.argv[0] === BINARY) requireBinary();
}

// --- HTTP helpers ------------------------------------------------------------------------------

interface Http {
  child: ChildProcessWithoutNullStreams;
  url: string;
  port: number;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

async function startHttp(target: Target, root: string, env: Record<string, string> = {}): Promise<Http> {
  needs(target);
  const child = spawn(target.argv[0]!, [...target.argv.slice(1), "http", "--root", root, "--port", "0"], { cwd: REPO, env: { ...process.env, ...env } });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  const line = await until(() => {
    if (child.exitCode !== null) throw new Error(`longrun http exited with ${child.exitCode}: ${err}`);
    return out.split("\n").find((l) => l.startsWith("{"));
  }, `the http server's first line (stderr: ${err})`, 30_000);
  const { url } = JSON.parse(line) as { url: string };
  return {
    child,
    url,
    port: Number(new URL(url).port),
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}


const bodyOf = (text: string): any => JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));

// --- 1. the bearer token ---------------------------------------------------------------------

describe("surviving mutants, killed", () => {
  // Kills: the bearer token compared as a prefix (src/http/tokens.ts sideChecker), e.g.
  // `tokens.host.startsWith(given)`, under which `Bearer h` speaks for a host whose token is "hhhh…".
  test("HTTP: only the whole token speaks for a side; a prefix or an extension of it gets 401 and changes nothing", async () => {
    const HOST = "h".repeat(32);
    const AGENT = "a".repeat(32);
    for (const target of TARGETS) {
      const root = tempDir();
      const srv = await startHttp(target, root, { LONGRUN_HOST_TOKEN: HOST, LONGRUN_AGENT_TOKEN: AGENT });
      try {
        const rpc = async (token: string, method: string, params: Record<string, unknown> = {}) => {
          const r = await fetch(`${srv.url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
          return { status: r.status, body: (await r.json()) as { result?: any; error?: any } };
        };
        for (const bad of ["h", HOST.slice(0, 16), HOST.slice(0, -1), HOST + "h", "a", AGENT.slice(0, -1), AGENT + "a"]) {
          const start = await rpc(bad, "task.start", { description: "started with a partial token" });
          assert.equal(start.status, 401, `${target.name}: Bearer ${bad} on /rpc`);
          assert.equal(start.body.error.code, -32008);
          assert.equal(start.body.error.data.kind, "unauthorized");
          const v1 = await fetch(`${srv.url}/v1/status`, { headers: { authorization: `Bearer ${bad}` } });
          assert.equal(v1.status, 401, `${target.name}: Bearer ${bad} on /v1/status`);
          await v1.body?.cancel();
        }
        assert.equal((await rpc(AGENT, "task.status")).body.result.task, null, `${target.name}: nothing was started`);
        // the whole tokens still work, each for its side
        assert.equal((await rpc(AGENT, "task.start", { description: "the real agent" })).status, 200);
        assert.equal((await rpc(AGENT, "writes.enable", { reason: "self" })).body.error.data.kind, "unauthorized");
        assert.equal((await rpc(HOST, "writes.enable", { reason: "host" })).body.result.lease.granted_by, "host:http");
      } finally {
        await srv.stop();
        removeDir(root);
      }
    }
  });

  // --- 2. Host and Origin ----------------------------------------------------------------------

  // Kills: an Origin (or Host) matched with `startsWith` in src/http/app.ts, in the middleware or in
  // the hot POST /rpc route, under which `http://127.0.0.1:PORT.evil.com` passes as the served origin.
  test("HTTP: Host and Origin are compared whole; `127.0.0.1:PORT.evil.com` is foreign on the hot /rpc route and on every other route", async () => {
    for (const target of TARGETS) {
      const root = tempDir();
      const HOST = "h".repeat(32);
      const srv = await startHttp(target, root, { LONGRUN_HOST_TOKEN: HOST, LONGRUN_AGENT_TOKEN: "a".repeat(32) });
      try {
        const served = `127.0.0.1:${srv.port}`;
        const start = '{"jsonrpc":"2.0","id":1,"method":"task.start","params":{"description":"rebinding"}}';
        // sized body: the hot route; chunked body and GET: the middleware
        const sized = (host: string, extra = "") =>
          raw(srv.port, `POST /rpc HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${HOST}\r\nContent-Type: application/json\r\n${extra}Content-Length: ${start.length}\r\nConnection: close\r\n\r\n${start}`);
        const chunked = (host: string, extra = "") =>
          raw(srv.port, `POST /rpc HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${HOST}\r\nContent-Type: application/json\r\n${extra}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${start.length.toString(16)}\r\n${start}\r\n0\r\n\r\n`);
        const get = (host: string, extra = "") => raw(srv.port, `GET /v1/status HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${HOST}\r\n${extra}Connection: close\r\n\r\n`);

        for (const origin of [`http://${served}.evil.com`, `http://localhost:${srv.port}.evil.com`, `http://${served}@evil.com`, `http://${served}0`]) {
          for (const [route, ask] of [["POST /rpc (sized)", sized], ["POST /rpc (chunked)", chunked], ["GET /v1/status", get]] as const) {
            const r = await ask(served, `Origin: ${origin}\r\n`);
            assert.equal(r.status, 403, `${target.name}: ${route} with Origin ${origin}`);
            assert.equal(bodyOf(r.text).kind, "forbidden_origin");
          }
        }
        for (const host of [`${served}.evil.com`, `localhost:${srv.port}.evil.com`, `${served}0`]) {
          for (const [route, ask] of [["POST /rpc (sized)", sized], ["POST /rpc (chunked)", chunked], ["GET /v1/status", get]] as const) {
            const r = await ask(host);
            assert.equal(r.status, 403, `${target.name}: ${route} with Host ${host}`);
            assert.equal(bodyOf(r.text).kind, "forbidden_host");
          }
        }
        const status = await get(served, `Origin: http://${served}\r\n`);
        assert.equal(status.status, 200, "the served origin is fine");
        assert.equal(bodyOf(status.text).task, null, `${target.name}: no refused request started a task`);
        assert.equal((await sized(served, `Origin: http://${served}\r\n`)).status, 200, "the served origin is fine on the hot route too");
      } finally {
        await srv.stop();
        removeDir(root);
      }
    }
  });

  // --- 3. MCP is the agent side ------------------------------------------------------------------

  // Kills: `longrun mcp` running as the host side (src/cli/mcp.ts caller `{ side: "host", … }`).
  // The tool list is filtered by side either way; what the caller's side decides is shown here.
  test("MCP over stdio speaks for the agent: host-only decisions are refused and requests are recorded as the agent's", async () => {
    for (const target of TARGETS) {
      needs(target);
      const root = tempDir();
      const client = new Client({ name: "survivors", version: "1.0.0" });
      await client.connect(new StdioClientTransport({ command: target.argv[0]!, args: [...target.argv.slice(1), "mcp", "--root", root, "--tools", "all"], cwd: REPO, env: { ...process.env } as Record<string, string>, stderr: "pipe" }));
      try {
        // a refusal is a tool result with its kind in _meta; invalid arguments are a JSON-RPC -32602
        const call = async (name: string, args: Record<string, unknown> = {}) =>
          (await client.callTool({ name, arguments: args }).catch((e: { code?: number }) => ({ isError: true, protocolError: e.code }))) as {
            isError?: boolean;
            protocolError?: number;
            structuredContent?: any;
            _meta?: any;
          };
        const kind = (r: { isError?: boolean; _meta?: any }) => (r.isError ? r._meta?.["longrun/error"]?.data?.kind : undefined);
        const names = new Set((await client.listTools()).tools.map((t) => t.name));
        for (const n of ["writes_enable", "turn_begin", "turn_end", "adjust_receive"]) assert.equal(names.has(n), false, `${target.name}: ${n} is not offered`);

        await call("task_start", { description: "an agent over MCP" });
        const requested = await call("writes_request", { reason: "please" });
        assert.equal(requested.structuredContent.granted, false);
        assert.equal(requested.structuredContent.task.lease_log.at(-1).by, "agent:mcp", `${target.name}: the request is the agent's`);

        const runR = (await call("run_start", { owner: "mcp-exec", tools: ["fetch"] })).structuredContent.run;
        const cancel = await call("run_cancel", { run_id: runR.run_id, reason: "no epoch" });
        assert.equal(cancel.isError, true, `${target.name}: an agent cancels a run only with its epoch`);
        assert.equal(cancel.protocolError, -32602);
        assert.equal((await call("task_finish", { summary: "end it all", cancel_runs: true })).protocolError, -32602, `${target.name}: cancel_runs is the host's (not offered over MCP)`);
        assert.equal(runR.status, "requested", `${target.name}: an agent's run is a request the host grants`);
        assert.equal((await call("run_get", { run_id: runR.run_id })).structuredContent.run.status, "requested");

        await call("task_transition", { to: "waiting_verification", reason: "done, please review" });
        assert.equal(kind(await call("task_transition", { to: "completed", reason: "self-accepted" })), "unauthorized", `${target.name}: leaving waiting_verification`);
        assert.equal(kind(await call("task_finish", { summary: "self-accepted" })), "unauthorized", `${target.name}: finishing a task under verification`);
        assert.equal((await call("task_recover", { force: true })).protocolError, -32602, `${target.name}: a forced recovery (not offered over MCP)`);
        assert.equal((await call("task_status")).structuredContent.task.status, "waiting_verification");
      } finally {
        await client.close();
        removeDir(root);
      }
    }
  });

  // --- 4. MultiEdit is a write ---------------------------------------------------------------------

  // Kills: `MultiEdit` not treated as a write by the Claude Code gate (src/hooks/tools.ts
  // WRITE_TOOLS without `MultiEdit: "file_path"`): it then falls to the unknown-tool rule, which a
  // read-only turn also denies, but which checks the lease for "MultiEdit" instead of its file.
  test("Claude Code gate: MultiEdit is a write of its file_path: under a scoped lease it passes inside the scope only; read-only turns and protected files deny it", async () => {
    for (const target of TARGETS) {
      needs(target);
      const root = tempDir();
      try {
        const hook = async (event: string, payload: Record<string, unknown>) => {
          const r = await run([...target.argv, "hook", "claude", event, "--root", root], { input: JSON.stringify({ hook_event_name: event, cwd: root, session_id: "s1", ...payload }) });
          const out = r.stdout.trim() ? JSON.parse(r.stdout) : null;
          const decision = r.code === 2 ? "deny" : out?.hookSpecificOutput?.permissionDecision;
          return { ...r, out, decision, reason: String(out?.hookSpecificOutput?.permissionDecisionReason ?? r.stderr) };
        };
        const multiEdit = (file: string) => ({ tool_name: "MultiEdit", tool_use_id: "t1", tool_input: { file_path: join(root, file), edits: [{ old_string: "a", new_string: "b" }] } });

        const approved = await hook("UserPromptSubmit", { prompt: "Tidy the sources\n/approve scope=src/** sources only" });
        assert.equal(approved.code, 0, approved.stderr);
        const inside = await hook("PreToolUse", multiEdit("src/a.ts"));
        assert.equal(inside.code, 0, inside.stderr);
        assert.equal(inside.stdout, "", `${target.name}: MultiEdit of a file inside the scope gets no decision: ${inside.reason}`);
        const outside = await hook("PreToolUse", multiEdit("docs/x.md"));
        assert.equal(outside.decision, "deny", `${target.name}: outside the scope`);
        assert.match(outside.reason, /outside the lease's scope/);
        assert.match(outside.reason, /MultiEdit docs\/x\.md/, "checked as a write of that file");
        const guarded = await hook("PreToolUse", multiEdit(".longrun/hooks.json"));
        assert.equal(guarded.decision, "deny", `${target.name}: longrun's own files under any lease`);

        await hook("UserPromptSubmit", { prompt: "now just look" });
        const readOnly = await hook("PreToolUse", multiEdit("src/a.ts"));
        assert.equal(readOnly.decision, "deny", `${target.name}: a read-only turn`);
        assert.match(readOnly.reason, /read-only/);
      } finally {
        removeDir(root);
      }
    }
  });

  // --- 5. adjust.handoff is fenced -----------------------------------------------------------------

  // Kills: `adjust.handoff` not fenced (src/ledger/deliverables.ts handoff without
  // `await fence(tx, run.seq, epoch, at)`): an executor whose run was claimed could still record
  // which request carried the user's adjustment.
  test("adjust.handoff with a stale epoch is refused with stale_epoch and records nothing; the current epoch may hand it off", async () => {
    const f = new RpcFixture();
    try {
      await f.ok("task.start", { description: "fund comparison" });
      const run = (await f.ok("run.start", { owner: "exec-A", tools: ["model"] })).run;
      const adj = (await f.ok("adjust.receive", { text: "Also compare the tracking error.", run_id: run.run_id }, "host")).adjustment;
      const request = (await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "model", idempotency_key: "request-1", args: { prompt: "with the adjustment" } })).receipt;
      const claimed = (await f.ok("run.claim", { run_id: run.run_id, owner: "exec-B" })).run;
      assert.equal(claimed.epoch, 2);

      const e = await f.fail("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 1, request_id: request.receipt_id });
      assert.equal(e.data.kind, "stale_epoch");
      assert.equal(e.data.current_epoch, 2);
      const after = (await f.ok("adjust.list")).adjustments[0];
      assert.equal(after.handed, null, "nothing handed");
      assert.deepEqual(after.history.map((h: { kind: string }) => h.kind), ["received"]);
      assert.equal((await f.ok("run.get", { run_id: run.run_id })).run.updated_at, claimed.updated_at, "the run was not touched");

      const handed = (await f.ok("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 2, request_id: request.receipt_id })).adjustment;
      assert.equal(handed.handed.request_id, request.receipt_id);
    } finally {
      await f.close();
    }
  });

  // --- 6. a failed pending-file write still ends the lease ------------------------------------------

  // Kills: a failed pending-file write that leaves the lease (src/core/contract.ts #checkpointFailed
  // letting the pending write's error escape before the lease is revoked in the database).
  test("a checkpoint whose commit fails and whose pending file cannot be written either still ends the lease, in storage", async () => {
    const fx: Fixture = await openFixture();
    try {
      const memory = new FailingMemory(fx.root.memory);
      memory.failing = false;
      const pending = new FailingPendingWrites(fx.root.pending);
      const contract = contractWithPending(fx, memory, pending);
      await contract.startTask("Adapt the supplier interface");
      await contract.enableWrites({ reason: "plan approved", granted_by: "host:test" });
      await contract.requireWritable("edit adapters/x.py");

      memory.failing = true; // the checkpoint's commit fails…
      const failure = await contract.checkpoint({ summary: "adapter mapped", next_step: "connect supplier 2" }).then(() => null, (e: unknown) => e as { kind?: string });
      assert.equal(pending.writeAttempts, 1, "…then writing the pending file fails too");

      const stored = (await fx.root.state.load())!;
      assert.equal(stored.lease, null, "the lease was revoked in the database");
      assert.equal(stored.access_mode, "read_only");
      assert.equal(stored.lease_log.at(-1)?.event, "revoked");
      // the root's own contract (another instance: it knows only what storage says) and this one both refuse
      await assert.rejects(fx.root.contract.requireWritable("edit adapters/x.py"), { kind: "write_gate_violation" });
      await assert.rejects(contract.requireWritable("edit adapters/x.py"), { kind: "write_gate_violation" });
      assert.equal(failure?.kind, "checkpoint_write_error", "the caller is told the checkpoint was not saved");
    } finally {
      await fx.close();
    }
  });

  // --- 7. I1 without keywords -------------------------------------------------------------------------

  // Kills: invariant I1 skipped when no keyword is extracted from the description
  // (src/core/contract.ts startTask searching only when `terms.length > 0`).
  test("I1: a description that yields no keyword is still searched before the task is created", async () => {
    const fx: Fixture = await openFixture();
    try {
      await fx.root.memory.save({ type: "note", title: "Do it now", content: "what to do now", keywords: [] });
      const spy = new RecordingMemory(fx.root.memory, hasState(fx.root));
      const description = "Do it now.";
      const { task, memories } = await contractWith(fx.root, spy).startTask(description);
      assert.deepEqual(task.keywords, [], "no keyword could be extracted");
      assert.equal(spy.calls[0]?.op, "search", "the first memory operation is a search");
      assert.equal(spy.calls[0]?.stateExisted, false, "made before any task state existed");
      assert.deepEqual(memories.map((m) => m.title), ["Do it now"], "searched with the description itself");
      assert.equal(task.status, "in_progress");
    } finally {
      await fx.close();
    }
  });

  // --- 8. the stdio framer's cap ----------------------------------------------------------------------

  // Kills: the stdio framer's buffer cap removed (src/rpc/framing.ts #append without the
  // `#size + bytes.length > #limit + 1` check): an over-long line is then still refused at its
  // newline, but held in memory whole until it arrives (and copied once more there).
  test("stdio: a line streamed far past the 1 MiB limit without a newline is not held in memory; it is refused with limit_exceeded and the next request works", async (t) => {
    const STREAM_MIB = 256;
    for (const target of TARGETS) {
      needs(target);
      const root = tempDir();
      const s = new Server(target, ["serve", "--root", root]);
      try {
        const procStatus = `/proc/${s.child.pid}/status`;
        const peakKiB = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(procStatus, "utf8"))?.[1]);
        assert.equal((await s.result("task.status")).task, null);
        if (!existsSync(procStatus)) {
          t.skip("no /proc: the memory bound cannot be read here");
          return;
        }
        const before = peakKiB();
        const chunk = new Uint8Array(1 << 20).fill(0x78); // 1 MiB of "x", no newline
        await s.write('{"jsonrpc":"2.0","id":"big","method":"task.status","params":{"x":"');
        for (let i = 0; i < STREAM_MIB; i++) await s.write(chunk);
        await s.write('"}}\n');
        const next = await s.call("task.status"); // answered only after everything before it was read
        assert.equal((next.result as { task: unknown }).task, null, `${target.name}: the stream goes on`);
        const refusal = s.answers.find((a) => (a.error as { data?: { kind?: string } } | undefined)?.data?.kind === "limit_exceeded") as { id: unknown; error: { code: number; data: Record<string, unknown> } } | undefined;
        assert.ok(refusal, `${target.name}: the over-long line is refused`);
        assert.equal(refusal.id, null);
        assert.equal(refusal.error.code, -32009);
        assert.equal(refusal.error.data.field, "line");
        assert.equal(refusal.error.data.limit, LIMITS.line_bytes);
        assert.ok(Number(refusal.error.data.actual) > STREAM_MIB * (1 << 20));
        assert.equal(s.answers.filter((a) => a.error).length, 1, "reported once");
        const grewMiB = (peakKiB() - before) / 1024;
        // held whole, the line alone would add STREAM_MIB (and its copy at the newline as much again)
        assert.ok(grewMiB < STREAM_MIB, `${target.name}: the peak resident memory grew by ${grewMiB.toFixed(0)} MiB while a ${STREAM_MIB} MiB line streamed in`);
      } finally {
        await s.close();
        removeDir(root);
      }
    }
  });

  // --- 9. the two tokens differ -------------------------------------------------------------------------

  // Kills (found beside the named ones): tokens from the environment accepted when they are equal
  // (src/http/tokens.ts tokensFrom without `host === agent`): the agent's token would then speak for
  // the host (the host is checked first), and the agent could grant itself a lease.
  test("HTTP: host and agent tokens given by environment must differ; the server refuses to start with one token for both", async () => {
    const same = "same-token-for-both-sides";
    assert.throws(() => tokensFrom({ LONGRUN_HOST_TOKEN: same, LONGRUN_AGENT_TOKEN: same }), /differ/);
    assert.deepEqual(tokensFrom({ LONGRUN_HOST_TOKEN: same, LONGRUN_AGENT_TOKEN: same + "-2" }).tokens, { host: same, agent: same + "-2" });
    for (const target of TARGETS) {
      needs(target);
      const root = tempDir();
      const child = spawn(target.argv[0]!, [...target.argv.slice(1), "http", "--root", root, "--port", "0"], { cwd: REPO, env: { ...process.env, LONGRUN_HOST_TOKEN: same, LONGRUN_AGENT_TOKEN: same } });
      let out = "";
      let err = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
      const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
      try {
        const outcome = await until(() => (child.exitCode !== null ? "exited" : out.includes("{") ? "serving" : null), "longrun http to exit or serve", 30_000);
        assert.equal(outcome, "exited", `${target.name}: it must not serve with one token for both sides (stdout: ${out})`);
        assert.notEqual(await exited, 0);
        assert.match(err, /LONGRUN_HOST_TOKEN and LONGRUN_AGENT_TOKEN must both be set, differ/);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
        await exited;
        removeDir(root);
      }
    }
  });

  // --- 10. budget.reconcile is fenced ---------------------------------------------------------------

  // Kills (found beside the named ones): `budget.reconcile` not fenced (src/ledger/effects.ts
  // reconcileCharge without `await fence(tx, seq, epoch, at)`): an executor that lost the run could
  // still declare what an unknown charge cost and so reopen the run's budget for new effects.
  test("budget.reconcile with a stale epoch is refused with stale_epoch; the charge stays unknown and new effects stay refused", async () => {
    const f = new RpcFixture();
    try {
      await f.ok("task.start", { description: "fund comparison" });
      const run = (await f.ok("run.start", { owner: "exec-A", tools: ["fetch"], budget: { cost: 5 } })).run;
      const lost = await f.ok("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, unknown: true, note: "usage never reported" });
      assert.equal(lost.budget.effects_allowed, false);
      await f.ok("run.claim", { run_id: run.run_id, owner: "exec-B" });

      const e = await f.fail("budget.reconcile", { run_id: run.run_id, epoch: 1, charge_id: lost.charge_id, cost: 0.7, evidence: "invoice line 14" });
      assert.equal(e.data.kind, "stale_epoch");
      assert.equal(e.data.current_epoch, 2);
      const still = (await f.ok("budget.status", { run_id: run.run_id })).budget;
      assert.deepEqual(still.unknown_charge_ids, [lost.charge_id], "the charge is still unknown");
      assert.equal(still.effects_allowed, false);
      assert.equal((await f.fail("receipt.begin", { run_id: run.run_id, epoch: 2, tool: "fetch", idempotency_key: "k", args: {} })).data.kind, "budget_exhausted");

      const known = (await f.ok("budget.reconcile", { run_id: run.run_id, epoch: 2, charge_id: lost.charge_id, cost: 0.7, evidence: "invoice line 14" })).budget;
      assert.deepEqual(known.unknown_charge_ids, []);
      assert.equal(known.effects_allowed, true);
    } finally {
      await f.close();
    }
  });
});

// --- failure injection ----------------------------------------------------------------------------

/**
 * Failure-injection double for the pending-checkpoint port: the real file store, except that
 * `write` throws (the disk refusing the pending file). Everything else reaches the real store.
 */
class FailingPendingWrites {
  writeAttempts = 0;
  constructor(readonly inner: PendingStore) {}
  asPort(): PendingStore {
    return new Proxy(this.inner, {
      get: (t, k) => {
        if (k === "write") {
          return () => {
            this.writeAttempts++;
            return Promise.reject(new Error("injected failure: the pending checkpoint file cannot be written (disk full)"));
          };
        }
        const v = Reflect.get(t, k, t);
        return typeof v === "function" ? v.bind(t) : v;
      },
    });
  }
}

/**
 * A contract on the fixture's real stores, with the memory double (which also sees the saves that
 * commit together with a state change) and the pending-file double.
 */
function contractWithPending(fx: Fixture, memory: FailingMemory, pending: FailingPendingWrites): TaskContract {
  const real = fx.root.state;
  const state = new Proxy(real, {
    get: (t, k) => {
      if (k === "transact") {
        return ((fn: Parameters<StateStore["transact"]>[0]) =>
          real.transact((tx) =>
            fn({
              ...tx,
              saveMemory: async (record) => {
                memory.intercept(record);
                return tx.saveMemory(record);
              },
            })
          )) as StateStore["transact"];
      }
      const v = Reflect.get(t, k, t);
      return typeof v === "function" ? v.bind(t) : v;
    },
  }) as StateStore;
  return new TaskContract({ state, pending: pending.asPort(), memory, clock: systemClock, ids: systemIds });
}
