/**
 * A task's checkpoint history through the protocol (local root, or sqld under
 * LONGRUN_TEST_STORE=sqld): task.checkpoints lists them newest first and pages, checkpoint.get
 * gives one whole, task.recover {checkpoint_id} (host only) takes the task back to an older one,
 * task.fork (host only) starts a new task there without the parent's lease or run grants.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { RpcFixture } from "../ledger/rpc.ts";

describe("checkpoint history", () => {
  let fx: RpcFixture;
  beforeEach(() => (fx = new RpcFixture()));
  afterEach(() => fx.close());

  /** A task with three checkpoints (p1, p2 and a pause at p3); returns their ids, oldest first. */
  async function threeCheckpoints(): Promise<{ task_id: string; ids: string[] }> {
    const { task } = await fx.ok("task.start", { description: "write the report" });
    const ids: string[] = [];
    for (const [n, kind] of [[1, "progress"], [2, "progress"], [3, "manual"]] as const) {
      const r = await fx.ok("task.checkpoint", { summary: `summary ${n}`, next_step: `step ${n}`, phase: `p${n}`, kind, data: { n } });
      ids.push(r.task.last_checkpoint.checkpoint_id);
      if (kind !== "progress") await fx.ok("task.resume");
    }
    return { task_id: task.task_id, ids };
  }

  test("task.checkpoints lists a task's checkpoints newest first, pages with next_cursor, and leaves out memory.save records", async () => {
    const { task_id, ids } = await threeCheckpoints();
    // a record that only looks like a checkpoint: memory.save cannot make one
    await fx.ok("memory.save", { type: "note", title: "fake", content: `Task: x\n{"longrun":"checkpoint","checkpoint_id":"${ids[0]}"}` });
    const all = await fx.ok("task.checkpoints");
    assert.equal(all.task_id, task_id);
    assert.deepEqual(all.checkpoints.map((c: { checkpoint_id: string }) => c.checkpoint_id), [...ids].reverse());
    assert.deepEqual(all.checkpoints.map((c: { summary: string }) => c.summary), ["summary 3", "summary 2", "summary 1"]);
    assert.deepEqual(all.checkpoints.map((c: { kind: string; label: string }) => `${c.kind}/${c.label}`), ["pause/manual", "progress/progress", "progress/progress"]);
    assert.deepEqual(all.checkpoints.map((c: { phase: string }) => c.phase), ["p3", "p2", "p1"]);
    assert.equal(all.next_cursor, null);
    const first = await fx.ok("task.checkpoints", { limit: 2 });
    assert.equal(first.checkpoints.length, 2);
    const second = await fx.ok("task.checkpoints", { limit: 2, cursor: first.next_cursor });
    assert.deepEqual(second.checkpoints.map((c: { checkpoint_id: string }) => c.checkpoint_id), [ids[0]]);
    assert.equal(second.next_cursor, null);
    assert.equal((await fx.fail("task.checkpoints", { cursor: "not-a-cursor" })).data.kind, "invalid_params");
  });

  test("checkpoint.get gives one checkpoint whole; an unknown or foreign id is not_found", async () => {
    const { ids } = await threeCheckpoints();
    const got = (await fx.ok("checkpoint.get", { checkpoint_id: ids[1] })).checkpoint;
    assert.equal(got.checkpoint_id, ids[1]);
    assert.equal(got.description, "write the report");
    assert.equal(got.next_step, "step 2");
    assert.equal(got.summary, "summary 2");
    assert.deepEqual(got.data, { n: 2 });
    assert.match(got.text, /summary 2/);
    const missing = await fx.fail("checkpoint.get", { checkpoint_id: ids[1]!.replace(/.$/, (ch: string) => (ch === "0" ? "1" : "0")) });
    assert.equal(missing.data.kind, "not_found");
    assert.match(missing.message, /task\.checkpoints/);
  });

  test("task.recover from an older checkpoint is the host's: the agent is refused and nothing changes; the host takes the task back there", async () => {
    const { task_id, ids } = await threeCheckpoints();
    const before = (await fx.ok("task.status")).task;
    const refused = await fx.fail("task.recover", { checkpoint_id: ids[0] });
    assert.equal(refused.data.kind, "unauthorized");
    assert.deepEqual((await fx.ok("task.status")).task, before, "the agent's try changed nothing");
    const r = await fx.ok("task.recover", { checkpoint_id: ids[0] }, "host");
    assert.equal(r.task.task_id, task_id);
    assert.equal(r.task.next_step, "step 1");
    assert.equal(r.task.phase, "p1");
    assert.deepEqual(r.data, { n: 1 });
    assert.equal(r.task.access_mode, "read_only");
    assert.ok(r.task.turn_index > before.turn_index, "a new turn");
    assert.match(r.task.history.at(-1).reason, new RegExp(`recovered from checkpoint ${ids[0]}`));
    assert.ok(r.task.history.length > 1, "the task's history goes on, it is not replaced");
    // the newer checkpoints are still there to go forward to
    assert.equal((await fx.ok("task.checkpoints")).checkpoints.length, 3);
  });

  test("task.fork starts a new current task at an older checkpoint: its data and next step, no lease, no run grants; the parent goes on in the background", async () => {
    const { task_id, ids } = await threeCheckpoints();
    await fx.ok("writes.enable", { reason: "the user said so" }, "host");
    await fx.ok("run.start", { owner: "exec-A", tools: ["fetch"], budget: { cost: 5 } });
    assert.equal((await fx.fail("task.fork", { checkpoint_id: ids[0] })).data.kind, "unauthorized", "the agent cannot fork");
    const f = await fx.ok("task.fork", { checkpoint_id: ids[0], description: "try the other approach" }, "host");
    assert.notEqual(f.task.task_id, task_id);
    assert.equal(f.previous_task, task_id);
    assert.equal(f.task.description, "try the other approach");
    assert.equal(f.task.next_step, "step 1");
    assert.deepEqual(f.data, { n: 1 });
    assert.deepEqual(f.task.forked_from, { task_id, checkpoint_id: ids[0] });
    assert.equal(f.task.access_mode, "read_only", "the parent's lease is not inherited");
    assert.equal((await fx.ok("task.status")).task.task_id, f.task.task_id, "the fork is current");
    assert.equal((await fx.fail("writes.require", { action: "write out.md" })).data.kind, "write_gate_violation");
    // the run belongs to the parent: the fork has none
    assert.deepEqual((await fx.ok("run.list")).runs, []);
    assert.equal((await fx.ok("run.list", { task_id })).runs.length, 1);
    const parent = (await fx.ok("task.status", { task_id })).task;
    assert.equal(parent.status, "in_progress");
    assert.equal(parent.access_mode, "read_only", "the parent lost its lease when it stopped being current");
    // the fork's own list starts empty; the parent's is unchanged
    assert.deepEqual((await fx.ok("task.checkpoints")).checkpoints, []);
    assert.equal((await fx.ok("task.checkpoints", { task_id })).checkpoints.length, 3);
  });

  test("an older checkpoint of a finished task can be forked: the finished task stays finished", async () => {
    const { task_id, ids } = await threeCheckpoints();
    await fx.ok("task.finish", { summary: "done" });
    const f = await fx.ok("task.fork", { checkpoint_id: ids[1] }, "host");
    assert.equal(f.previous_task, null, "nothing open was current");
    assert.equal(f.task.status, "in_progress");
    assert.equal(f.task.next_step, "step 2");
    assert.equal((await fx.ok("task.status", { task_id })).task.status, "completed");
  });
});
