import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, test } from "node:test";
import { corruptTask, loseTask } from "../support/state.ts";
import { type Fixture, openFixture } from "./setup.ts";

describe("task.recover rebuilds the task from memory", () => {
  let fx: Fixture;
  beforeEach(async () => (fx = await openFixture({ searchInWorker: false })));
  afterEach(() => fx.close());

  test("with the state file gone, the newest checkpoint's machine line rebuilds the task: new turn, read-only", async () => {
    const c = fx.root.contract;
    const { task } = await c.startTask("build the importer");
    await c.checkpoint({ summary: "first", next_step: "step one", phase: "p1" });
    await c.resume();
    const second = await c.checkpoint({ summary: "second", next_step: "step two", phase: "p2" });
    await loseTask(fx.dir);
    const r = await c.recoverFromMemory();
    assert.equal(r.memory_id, second.memory_id);
    assert.equal(r.task!.task_id, task.task_id);
    assert.equal(r.task!.description, "build the importer");
    assert.equal(r.task!.next_step, "step two");
    assert.equal(r.task!.phase, "p2");
    assert.equal(r.task!.turn_index, second.task.turn_index + 1);
    assert.equal(r.task!.access_mode, "read_only");
    assert.equal(r.task!.status, "in_progress");
    assert.equal(r.quarantined, null);
    assert.deepEqual((await c.status()).task, r.task);
  });

  test("a corrupt state is moved aside (kept) and the task rebuilt", async () => {
    const c = fx.root.contract;
    await c.startTask("t");
    await c.checkpoint({ summary: "s", next_step: "n" });
    await corruptTask(fx.dir, '{"trunc');
    const r = await c.recoverFromMemory();
    assert.match(r.quarantined ?? "", /tasks_quarantine/);
    const kept = await fx.root.db.execute("SELECT state FROM tasks_quarantine");
    assert.equal(kept.rows[0]!.state, '{"trunc');
    assert.equal((await c.status()).task?.task_id, r.task!.task_id);
  });

  test("a readable state of another task, or a finished one, is never overwritten by recovery", async () => {
    const c = fx.root.contract;
    await c.startTask("task A");
    await c.checkpoint({ summary: "a", next_step: "n" });
    await c.resume();
    await c.finish("A done");
    const b = (await c.startTask("task B, important")).task;
    await assert.rejects(c.recoverFromMemory(), (e: { kind?: string; data?: Record<string, unknown> }) => e.kind === "conflict" && e.data?.task_id === b.task_id);
    assert.equal((await c.status()).task?.task_id, b.task_id);
    await c.checkpoint({ summary: "b", next_step: "n" });
    await c.resume();
    await c.transition("failed", "gave up");
    await assert.rejects(c.recoverFromMemory(), { kind: "conflict" });
    assert.equal((await c.status()).task?.status, "failed", "a failed task is not brought back to life");
  });

  test("with no checkpoint in memory, recover says not_found and changes nothing", async () => {
    await assert.rejects(fx.root.contract.recoverFromMemory(), { kind: "not_found" });
    assert.equal(await fx.root.state.load(), null);
  });

  test("a finished task recovers as completed, not as its last checkpoint", async () => {
    const c = fx.root.contract;
    await c.startTask("t");
    await c.checkpoint({ summary: "s", next_step: "n" });
    await c.resume();
    await c.finish("shipped");
    await loseTask(fx.dir);
    assert.equal((await c.recoverFromMemory()).task!.status, "completed");
  });
});

describe("task.finish", () => {
  let fx: Fixture;
  beforeEach(async () => (fx = await openFixture({ searchInWorker: false })));
  afterEach(() => fx.close());

  test("finish moves to completed, revokes the lease and saves an outcome record", async () => {
    const c = fx.root.contract;
    await c.startTask("t");
    await c.enableWrites({ reason: "r", granted_by: "host" });
    const f = await c.finish("all adapters merged");
    assert.equal(f.task.status, "completed");
    assert.equal(f.task.access_mode, "read_only");
    const rec = await fx.root.memory.get(f.memory_id);
    assert.equal(rec?.type, "outcome");
    assert.match(rec!.content, /all adapters merged/);
    assert.equal(rec?.task_id, f.task.task_id);
  });

  test("finish from paused is a transition error and saves nothing", async () => {
    const c = fx.root.contract;
    await c.startTask("t");
    await c.checkpoint({ summary: "s", next_step: "n" });
    const before = Number((await fx.root.db.execute("SELECT COUNT(*) AS n FROM memories")).rows[0]!.n);
    await assert.rejects(c.finish(), (e: { kind?: string; data?: Record<string, unknown> }) => {
      return e.kind === "transition_error" && e.data?.from === "paused" && e.data?.to === "completed";
    });
    assert.equal(Number((await fx.root.db.execute("SELECT COUNT(*) AS n FROM memories")).rows[0]!.n), before);
  });

  test("task methods without a task say no_active_task", async () => {
    const c = fx.root.contract;
    for (const op of [() => c.beginTurn(), () => c.requireWritable("w"), () => c.checkpoint({ summary: "s", next_step: "n" }), () => c.resume(), () => c.finish()]) {
      await assert.rejects(op(), { kind: "no_active_task" });
    }
    assert.deepEqual(await c.status(), { task: null, pending_checkpoint: null });
  });

  test("a finished task takes no more turns, resumes or requests", async () => {
    const c = fx.root.contract;
    await c.startTask("t");
    const done = await c.finish();
    for (const op of [() => c.beginTurn(), () => c.endTurn(), () => c.resume(), () => c.requestWrites("more", null, "agent")]) {
      await assert.rejects(op(), { kind: "no_active_task" });
    }
    assert.equal((await c.status()).task?.version, done.task.version, "nothing was written");
  });
});
