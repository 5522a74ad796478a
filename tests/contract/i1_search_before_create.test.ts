import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { RecordingMemory } from "./doubles.ts";
import { contractWith, type Fixture, hasState, openFixture } from "./setup.ts";

describe("I1: task.start searches memory before it creates state", () => {
  let fx: Fixture;
  beforeEach(async () => (fx = await openFixture()));
  afterEach(() => fx.close());

  test("the first memory operation is a search, made while no task state exists", async () => {
    const spy = new RecordingMemory(fx.root.memory, hasState(fx.root));
    const { task } = await contractWith(fx.root, spy).startTask("Integrate the second supplier API");
    assert.equal(spy.calls[0]?.op, "search");
    assert.equal(spy.calls[0]?.stateExisted, false);
    assert.ok(await hasState(fx.root)());
    assert.equal(task.status, "in_progress");
  });

  test("it searches with the given keywords, else with keywords from the description", async () => {
    await fx.root.memory.save({ type: "decision", title: "Supplier choice", content: "We picked Xometry", keywords: [] });
    const given = await fx.root.contract.startTask("something unrelated", ["Xometry"]);
    assert.deepEqual(given.memories.map((m) => m.title), ["Supplier choice"]);
    assert.deepEqual(given.task.keywords, ["Xometry"]);
    await fx.root.contract.finish();
    const derived = await fx.root.contract.startTask("Continue the supplier integration");
    assert.ok(derived.task.keywords.includes("supplier"));
    assert.deepEqual(derived.memories.map((m) => m.title).includes("Supplier choice"), true);
  });

  test("an empty memory is fine: the task starts in_progress, read-only, in turn 1", async () => {
    const { task, memories } = await fx.root.contract.startTask("a brand new project");
    assert.deepEqual(memories, []);
    assert.equal(task.status, "in_progress");
    assert.equal(task.access_mode, "read_only");
    assert.equal(task.turn_index, 1);
    assert.equal(task.write_lease_turn, null);
    assert.equal(task.version, 1);
    assert.equal(task.description, "a brand new project");
  });

  test("a second start while a task is open makes the new one current; the first keeps its status and loses its lease", async () => {
    const first = await fx.root.contract.startTask("first");
    await fx.root.contract.enableWrites({ reason: "plan approved", granted_by: "host" });
    const second = await fx.root.contract.startTask("second");
    assert.equal(second.previous_task, first.task.task_id);
    assert.equal((await fx.root.contract.status()).task?.task_id, second.task.task_id);
    assert.equal(second.task.access_mode, "read_only", "a new task inherits no permissions");
    const left = (await fx.root.contract.status(first.task.task_id)).task!;
    assert.equal(left.status, "in_progress", "it goes on in the background");
    assert.equal(left.access_mode, "read_only", "its lease ended with the switch");
    assert.equal(left.lease, null);
    await assert.rejects(fx.root.contract.requireWritable("write"), { kind: "write_gate_violation" });
  });

  test("after a task finishes, a new one starts and the version keeps increasing", async () => {
    await fx.root.contract.startTask("first");
    const done = await fx.root.contract.finish("ok");
    const next = await fx.root.contract.startTask("second");
    assert.notEqual(next.task.task_id, done.task.task_id);
    assert.equal(next.task.version, done.task.version + 1);
  });

  // Kills: invariant I1 skipped when no keyword is extracted from the description
  // (src/core/contract/start.ts startTask searching only when `terms.length > 0`).
  test("I1: a description that yields no keyword is still searched before the task is created", async () => {
    await fx.root.memory.save({ type: "note", title: "Do it now", content: "what to do now", keywords: [] });
    const spy = new RecordingMemory(fx.root.memory, hasState(fx.root));
    const description = "Do it now.";
    const { task, memories } = await contractWith(fx.root, spy).startTask(description);
    assert.deepEqual(task.keywords, [], "no keyword could be extracted");
    assert.equal(spy.calls[0]?.op, "search", "the first memory operation is a search");
    assert.equal(spy.calls[0]?.stateExisted, false, "made before any task state existed");
    assert.deepEqual(memories.map((m) => m.title), ["Do it now"], "searched with the description itself");
    assert.equal(task.status, "in_progress");
  });
});
