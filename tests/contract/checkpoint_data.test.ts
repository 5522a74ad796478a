/**
 * A checkpoint carries the host's own state (`data`, a bounded JSON object) beside its text: saved
 * in the same commit (in the machine line and in the task's last_checkpoint), given back by resume
 * and recover, kept through the pending-file fallback and replayed exactly once. Progress
 * checkpoints carry it too, without pausing the task or ending the lease.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, test } from "node:test";
import { parseMachineLine } from "../../src/core/checkpoint.ts";
import { LIMITS } from "../../src/core/limits.ts";
import { RpcFixture } from "../ledger/rpc.ts";
import { loseTask } from "../support/state.ts";
import { FailingMemory } from "./doubles.ts";
import { contractWith, countCheckpoints, type Fixture, openFixture } from "./setup.ts";

const DATA = { step: 7, done: ["a.py", "b.py"], cursor: { page: 2, token: "接口 <!-- --> &" } };

describe("checkpoint data: the host's own state, saved with the checkpoint", () => {
  let fx: Fixture;
  beforeEach(async () => (fx = await openFixture({ searchInWorker: false })));
  afterEach(() => fx.close());

  test("a pause checkpoint saves data in its machine line and last_checkpoint; resume gives it back", async () => {
    const c = fx.root.contract;
    await c.startTask("refactor the importer");
    const out = await c.checkpoint({ summary: "7 of 20 files", next_step: "file 8", data: DATA });
    assert.deepEqual(out.task.last_checkpoint?.data, DATA);
    assert.equal(out.task.last_checkpoint?.kind, "manual");
    const machine = parseMachineLine(out.text)!;
    assert.deepEqual(machine.data, DATA);
    assert.equal(machine.kind, "manual");
    assert.equal(out.text.split("\n").filter((l) => l.includes("<!--")).length, 1, "data never breaks the one machine line");
    assert.equal((await fx.root.memory.get(out.memory_id))?.content, out.text, "saved before shown: the record is the text");
    const r = await c.resume();
    assert.deepEqual(r.data, DATA);
    assert.deepEqual(r.task.last_checkpoint?.data, DATA);
  });

  test("a progress checkpoint with data keeps the task running and the lease standing", async () => {
    const c = fx.root.contract;
    await c.startTask("long loop");
    await c.enableWrites({ reason: "approved", granted_by: "host" });
    const out = await c.checkpoint({ summary: "step 3", next_step: "step 4", kind: "progress", data: { step: 3 } });
    assert.equal(out.task.status, "in_progress");
    assert.equal(out.task.access_mode, "writable");
    assert.deepEqual(out.task.last_checkpoint, { checkpoint_id: out.task.last_checkpoint!.checkpoint_id, memory_id: out.memory_id, at: out.task.last_checkpoint!.at, kind: "progress", data: { step: 3 } });
    await c.requireWritable("edit step 4");
    assert.deepEqual(parseMachineLine(out.text)?.data, { step: 3 });
  });

  test("a later checkpoint without data carries the last data on; {} clears it", async () => {
    const c = fx.root.contract;
    await c.startTask("t");
    assert.equal((await c.resume()).data, null, "no checkpoint yet: null");
    await c.checkpoint({ summary: "a", next_step: "b", kind: "progress", data: { step: 1 } });
    const carried = await c.checkpoint({ summary: "a hook's checkpoint", next_step: "b", kind: "stop" });
    assert.deepEqual(carried.task.last_checkpoint?.data, { step: 1 });
    assert.deepEqual(parseMachineLine(carried.text)?.data, { step: 1 });
    await c.resume();
    const cleared = await c.checkpoint({ summary: "a", next_step: "b", data: {} });
    assert.deepEqual(cleared.task.last_checkpoint?.data, {});
    assert.deepEqual((await c.resume()).data, {});
  });

  test("data at the limit is saved; one character over is limit_exceeded and nothing is written", async () => {
    const c = fx.root.contract;
    await c.startTask("t");
    await c.enableWrites({ reason: "ok", granted_by: "host" });
    const overhead = JSON.stringify({ s: "" }).length;
    const atLimit = { s: "x".repeat(LIMITS.checkpoint_data_chars - overhead) };
    assert.equal(JSON.stringify(atLimit).length, LIMITS.checkpoint_data_chars);
    const ok = await c.checkpoint({ summary: "s", next_step: "n", kind: "progress", data: atLimit });
    assert.deepEqual(ok.task.last_checkpoint?.data, atLimit);
    const before = (await c.status()).task!;
    const over = { s: "x".repeat(LIMITS.checkpoint_data_chars - overhead + 1) };
    await assert.rejects(c.checkpoint({ summary: "s", next_step: "n", data: over }), (e: { kind: string; data: Record<string, unknown> }) => {
      assert.equal(e.kind, "limit_exceeded");
      assert.deepEqual(e.data, { kind: "limit_exceeded", field: "data", limit: LIMITS.checkpoint_data_chars, actual: LIMITS.checkpoint_data_chars + 1, unit: "characters" });
      return true;
    });
    assert.deepEqual((await c.status()).task, before, "refused before anything was touched: the lease stands");
    assert.equal(await countCheckpoints(fx.root), 1);
    assert.equal(existsSync(fx.root.paths.pending), false);
  });

  test("recover rebuilds the task from memory with the checkpoint's data", async () => {
    const c = fx.root.contract;
    await c.startTask("t");
    await c.checkpoint({ summary: "s", next_step: "n", kind: "progress", data: DATA });
    await loseTask(fx.dir);
    const r = await c.recoverFromMemory();
    assert.deepEqual(r.data, DATA);
    assert.deepEqual(r.task?.last_checkpoint?.data, DATA);
    assert.equal(r.task?.last_checkpoint?.kind, "progress");
  });

  test("a checkpoint whose save failed keeps its data in the pending file; the replay applies it exactly once", async () => {
    const c = fx.root.contract;
    await c.startTask("t");
    await c.checkpoint({ summary: "s", next_step: "n", data: { step: 1 } });
    await c.resume();
    await assert.rejects(contractWith(fx.root, new FailingMemory(fx.root.memory)).checkpoint({ summary: "s", next_step: "n", kind: "progress", data: { step: 2 } }), {
      kind: "checkpoint_write_error",
    });
    const pending = JSON.parse(readFileSync(fx.root.paths.pending, "utf8"));
    assert.deepEqual(pending.state.last_checkpoint.data, { step: 2 });
    assert.deepEqual(parseMachineLine(pending.record.content)?.data, { step: 2 });
    assert.deepEqual((await c.status()).task?.last_checkpoint?.data, { step: 1 }, "nothing claimed saved");
    const first = await c.resume();
    assert.equal(first.replayed?.created, true);
    assert.deepEqual(first.data, { step: 2 });
    const second = await c.resume();
    assert.equal(second.replayed, null);
    assert.deepEqual(second.data, { step: 2 });
    assert.equal(await countCheckpoints(fx.root), 2);
  });
});

describe("task.checkpoint over the protocol: data and lang params", () => {
  let f: RpcFixture;
  beforeEach(async () => {
    f = new RpcFixture();
    await f.ok("task.start", { description: "t" });
  });
  afterEach(() => f.close());

  test("data comes back from task.resume, and from task.recover", async () => {
    await f.ok("task.checkpoint", { summary: "s", next_step: "n", kind: "progress", data: { step: 2 } });
    assert.deepEqual((await f.ok("task.resume")).data, { step: 2 });
    assert.deepEqual((await f.ok("task.recover", { force: true }, "host")).data, { step: 2 });
  });

  for (const data of [[1, 2], "step 3", 3, null]) {
    test(`data that is not a JSON object (${JSON.stringify(data)}) is invalid params`, async () => {
      const e = await f.fail("task.checkpoint", { summary: "s", next_step: "n", data });
      assert.equal(e.code, -32602);
      assert.equal(e.data.field, "data");
    });
  }

  test("oversized data is limit_exceeded naming data", async () => {
    const e = await f.fail("task.checkpoint", { summary: "s", next_step: "n", data: { s: "x".repeat(LIMITS.checkpoint_data_chars) } });
    assert.equal(e.data.kind, "limit_exceeded");
    assert.equal(e.data.field, "data");
    assert.equal((await f.ok("task.status")).task.status, "in_progress");
  });

  test("an unknown lang is invalid params; a known one is accepted", async () => {
    assert.equal((await f.fail("task.checkpoint", { summary: "s", next_step: "n", lang: "fr" })).code, -32602);
    assert.match((await f.ok("task.checkpoint", { summary: "s", next_step: "n", lang: "ko" })).text, /다음 단계: n/);
  });

  test("system.describe lists data, lang and the data limit", async () => {
    const d = await f.ok("system.describe");
    const cp = d.methods.find((m: { name: string }) => m.name === "task.checkpoint");
    assert.ok(cp.params.properties.data);
    assert.deepEqual(cp.params.properties.lang.enum, ["en", "zh", "ko"]);
    assert.equal(d.limits.checkpoint_data_chars, LIMITS.checkpoint_data_chars);
  });
});
