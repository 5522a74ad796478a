/**
 * The one protocol suite, run against every implementation that must behave the same: the
 * compiled binary and `deno run` of the sources, each a real child process over real pipes.
 */
import assert from "node:assert/strict";
import { TEST_STORE, testRoot } from "../support/sqld.ts";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { corruptTask } from "../support/state.ts";
import { LIMITS } from "../../src/core/limits.ts";
import { removeDir, tempDir, until } from "../support/helpers.ts";
import { requireTarget, Server, SOURCE_AND_BINARY, TARGETS } from "../support/server.ts";
import { skipped, skipTest } from "../support/skips.ts";

const req = (id: unknown, method: string, params: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: "2.0", id, method, params });

for (const target of TARGETS) {
  describe(`stdio JSON-RPC: ${target.name}`, () => {
    let dir = "";
    let s: Server;
    beforeEach(async () => {
      dir = await testRoot();
      s = new Server(target, ["serve", "--root", dir]);
    });
    afterEach(async () => {
      if (s.child.exitCode === null && s.child.signalCode === null) await s.close();
      removeDir(dir);
    });

    test("a request split byte by byte is answered once", async () => {
      const bytes = new TextEncoder().encode(req("split", "task.status") + "\n");
      for (const b of bytes) await s.write(new Uint8Array([b]));
      const a = await s.answer("split");
      assert.deepEqual(a.result, { task: null, pending_checkpoint: null, runs: [], approvals: [], run_allowances: { allowances: [], error: null } });
      assert.equal(s.answers.length, 1);
    });

    test("two requests in one write, CRLF endings and a last line without a newline all parse", async () => {
      await s.write(req(1, "task.status") + "\n" + req(2, "task.status") + "\r\n" + req(3, "task.status"));
      await s.close();
      assert.deepEqual(s.answers.map((a) => a.id).sort(), [1, 2, 3]);
    });

    test("an over-long line is refused with limit_exceeded and the stream goes on", async () => {
      const big = `{"jsonrpc":"2.0","id":"big","method":"task.status","params":{"x":"${"a".repeat(LIMITS.line_bytes)}"}}`;
      await s.write(big + "\n" + req("after", "task.status") + "\n");
      const after = await s.answer("after");
      assert.ok("result" in after);
      const refusal = s.answers.find((a) => a.id === null) as { error: { code: number; data: Record<string, unknown> } };
      assert.equal(refusal.error.code, -32009);
      assert.equal(refusal.error.data.field, "line");
      assert.equal(refusal.error.data.limit, LIMITS.line_bytes);
      assert.equal(refusal.error.data.actual, Buffer.byteLength(big));
      assert.equal(refusal.error.data.unit, "bytes");
    });

    test("invalid UTF-8 is a parse error with id null, and the stream goes on", async () => {
      await s.write(new Uint8Array([0x7b, 0xc3, 0x28, 0x7d, 0x0a]));
      await s.write(req("next", "task.status") + "\n");
      await s.answer("next");
      const err = s.answers.find((a) => a.id === null) as { error: { code: number } };
      assert.equal(err.error.code, -32700);
    });

    test("deeply nested JSON is refused without crashing the process", async () => {
      await s.write("[".repeat(200_000) + "]".repeat(200_000) + "\n");
      await s.write(req("alive", "task.status") + "\n");
      await s.answer("alive");
      const err = s.answers.find((a) => a.id === null) as { error: { code: number; data: Record<string, unknown> } };
      assert.equal(err.error.code, -32009);
      assert.equal(err.error.data.field, "json_depth");
    });

    test("at end of input, in-flight requests finish and answer, then it exits 0", async () => {
      await s.write(req("start", "task.start", { description: "eof test" }) + "\n" + req("cp", "task.checkpoint", { summary: "s", next_step: "n" }) + "\n");
      const { code } = await s.close();
      assert.equal(code, 0, s.stderr);
      const cp = s.answers.find((a) => a.id === "cp") as { result: { memory_id: string } };
      assert.equal(cp.result.memory_id, "S_0001");
    });

    test("SIGTERM lets in-flight requests answer, then exits 0", async () => {
      await s.write(req("start", "task.start", { description: "term test" }) + "\n");
      await s.answer("start");
      await s.write(req("cp", "task.checkpoint", { summary: "s", next_step: "n" }) + "\n");
      process.kill(s.child.pid!, "SIGTERM"); // (Deno's child.kill reports a SIGTERM death it did not observe)
      const { code } = await s.exited;
      assert.equal(code, 0, s.stderr);
      const cp = s.answers.find((a) => a.id === "cp");
      if (cp) assert.ok("result" in cp, JSON.stringify(cp));
    });

    test("stdout carries protocol only: every line is a JSON-RPC answer", async () => {
      await s.result("task.start", { description: "logging test" });
      await s.error("writes.require", { action: "x" });
      await s.call("no.such.method");
      await s.close();
      for (const line of s.rawLines) {
        const a = JSON.parse(line);
        assert.equal(a.jsonrpc, "2.0");
        assert.ok(("result" in a) !== ("error" in a));
      }
    });

    test("ids come back with their type", async () => {
      await s.write(req("7", "task.status") + "\n" + req(7, "task.status") + "\n");
      await until(() => s.answers.length === 2, "two answers");
      assert.deepEqual(s.answers.map((a) => typeof a.id).sort(), ["number", "string"]);
    });

    test("the seed's flow over the wire, with each refusal's code and data", async () => {
      const gate = await s.error("writes.require", { action: "demo write" });
      assert.equal(gate.code, -32005);
      assert.equal(gate.data.kind, "no_active_task");
      const started = await s.result("task.start", { description: "阶段：接口适配", keywords: ["接口"] });
      assert.equal(started.task.access_mode, "read_only");
      const refused = await s.error("writes.require", { action: "demo write" });
      assert.equal(refused.code, -32001);
      assert.deepEqual([refused.data.kind, refused.data.reason, refused.data.turn, refused.data.lease_turn], ["write_gate_violation", "read_only", 1, null]);
      const granted = await s.result("writes.enable", { reason: "plan approved", scope: ["src/**"] });
      assert.equal(granted.lease.granted_by, "host:stdio");
      assert.equal((await s.result("writes.require", { action: "edit src/a.ts" })).ok, true);
      const out = await s.error("writes.require", { action: "edit .env" });
      assert.equal(out.data.reason, "out_of_scope");
      const bad = await s.error("task.transition", { to: "pending", reason: "x" });
      assert.equal(bad.code, -32002);
      assert.deepEqual([bad.data.from, bad.data.to], ["in_progress", "pending"]);
      const cp = await s.result("task.checkpoint", { summary: "s", next_step: "接入第二个供应商", phase: "接口适配" });
      assert.match(cp.text, /longrun-state/);
      const found = await s.result("memory.search", { query: "接口" });
      assert.deepEqual(found.hits.map((h: { id: string }) => h.id), [cp.memory_id]);
      const resumed = await s.result("task.resume");
      assert.equal(resumed.task.turn_index, 2);
      assert.equal((await s.error("writes.require", { action: "edit src/a.ts" })).data.reason, "read_only");
      const missing = await s.error("memory.get", { id: "S_9999" });
      assert.equal(missing.code, -32011);
      assert.equal(missing.data.kind, "not_found");
    });

    test("a corrupt stored state is state_corrupt naming where it is", async () => {
      await s.result("task.start", { description: "t" });
      await corruptTask(dir, "{trunc");
      const e = await s.error("task.status");
      assert.equal(e.code, -32004);
      assert.match(e.data.path, TEST_STORE === "sqld" ? /^http:\/\/127\.0\.0\.1:\d+/ : /memory\.db/);
    });

    test("several roots in one server are isolated; a relative root is refused", { skip: skipped("tests/protocol/stdio: several roots in one server", TEST_STORE === "sqld" ? "a server store serves one project (tests/server covers naming another)" : false) }, async () => {
      const other = tempDir();
      try {
        await s.result("task.start", { description: "in the default root" });
        await s.result("task.start", { description: "in the other root", root: other });
        const a = await s.result("task.status");
        const b = await s.result("task.status", { root: other });
        assert.equal(a.task.description, "in the default root");
        assert.equal(b.task.description, "in the other root");
        await s.result("memory.save", { type: "note", title: "only in other", content: "x", root: other });
        assert.equal((await s.result("memory.search", { query: "only" })).hits.length, 0);
        const rel = await s.error("task.status", { root: "relative/dir" });
        assert.equal(rel.code, -32602);
        assert.equal(rel.data.field, "root");
      } finally {
        removeDir(other);
      }
    });

    test("a string at its limit works; one character over is limit_exceeded and nothing is written", async () => {
      await s.result("task.start", { description: "limits" });
      const atLimit = "r".repeat(LIMITS.short_text_chars);
      assert.equal((await s.result("writes.enable", { reason: atLimit })).lease.reason.length, LIMITS.short_text_chars);
      const before = (await s.result("task.status")).task.version;
      const e = await s.error("writes.enable", { reason: atLimit + "r" });
      assert.equal(e.code, -32009);
      assert.deepEqual([e.data.field, e.data.limit, e.data.actual, e.data.unit], ["reason", LIMITS.short_text_chars, LIMITS.short_text_chars + 1, "characters"]);
      assert.equal((await s.result("task.status")).task.version, before);
    });

    test("system.describe lists every method with its side and param schema", async () => {
      const d = await s.result("system.describe");
      const names = d.methods.map((m: { name: string }) => m.name);
      for (const n of ["system.describe", "task.start", "task.status", "task.transition", "task.checkpoint", "task.resume", "task.recover", "task.finish", "turn.begin", "turn.end", "writes.enable", "writes.request", "writes.require", "memory.save", "memory.search", "memory.get"]) {
        assert.ok(names.includes(n), n);
      }
      const enable = d.methods.find((m: { name: string }) => m.name === "writes.enable");
      assert.equal(enable.side, "host");
      assert.deepEqual(enable.params.required, ["reason"]);
      assert.equal(enable.params.properties.reason.maxLength, LIMITS.short_text_chars);
      assert.equal(d.methods.find((m: { name: string }) => m.name === "writes.require").side, "agent");
      assert.equal(d.limits.line_bytes, LIMITS.line_bytes);
      assert.ok(d.errors.some((e: { kind: string; code: number }) => e.kind === "stale_epoch" && e.code === -32006));
    });
  });
}

describe("stdio's line limit holds while the line streams in (the source and the binary)", () => {
  // Kills: the stdio framer's buffer cap removed (src/rpc/framing.ts #append without the
  // `#size + bytes.length > #limit + 1` check): an over-long line is then still refused at its
  // newline, but held in memory whole until it arrives (and copied once more there).
  test("stdio: a line streamed far past the 1 MiB limit without a newline is not held in memory; it is refused with limit_exceeded and the next request works", async (t) => {
    const STREAM_MIB = 256;
    for (const target of SOURCE_AND_BINARY) {
      requireTarget(target);
      const root = tempDir();
      const s = new Server(target, ["serve", "--root", root]);
      try {
        const procStatus = `/proc/${s.child.pid}/status`;
        const peakKiB = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(procStatus, "utf8"))?.[1]);
        assert.equal((await s.result("task.status")).task, null);
        if (!existsSync(procStatus)) {
          skipTest(t, "tests/protocol/stdio: the memory bound", "no /proc: the memory bound cannot be read here");
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
});
