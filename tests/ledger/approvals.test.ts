/**
 * Approvals as objects (local, and on sqld under LONGRUN_TEST_STORE=sqld): the agent asks before
 * one action, the host answers (approve, reject, edit with a note), the agent reads the answer in
 * approval.get, task.status, task.resume and by asking again; an answer is final; the agent cannot
 * answer; an approval grants no lease; each request and answer is an event.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { LIMITS } from "../../src/core/limits.ts";
import { RpcFixture } from "./rpc.ts";

describe("approvals", () => {
  let fx: RpcFixture;
  beforeEach(() => (fx = new RpcFixture()));
  afterEach(() => fx.close());

  test("asked, answered by the host, and the answer reaches the agent on its next calls", async () => {
    await fx.ok("task.start", { description: "send the report" });
    const asked = await fx.ok("approval.request", { action: "email.send", args_digest: "sha256:ab12", reason: "send the report to the team" });
    assert.equal(asked.created, true);
    assert.equal(asked.approval.status, "pending");
    const id = asked.approval.approval_id;
    // the agent cannot answer its own request, and nothing changes
    assert.equal((await fx.fail("approval.answer", { approval_id: id, decision: "approve" })).data.kind, "unauthorized");
    assert.equal((await fx.ok("approval.get", { approval_id: id })).approval.status, "pending");
    assert.deepEqual((await fx.ok("approval.list", { status: "pending" })).approvals.map((a: { approval_id: string }) => a.approval_id), [id]);
    const edited = (await fx.ok("approval.answer", { approval_id: id, decision: "edit", note: "only to alice", edited_args: { to: ["alice@example.org"] } }, "host")).approval;
    assert.deepEqual([edited.status, edited.note, edited.edited_args, edited.answered_by], ["edited", "only to alice", { to: ["alice@example.org"] }, "host:test"]);
    // the agent's next calls carry the answer
    assert.equal((await fx.ok("task.status")).approvals[0].status, "edited");
    const again = await fx.ok("approval.request", { action: "email.send", args_digest: "sha256:ab12", reason: "asking again" });
    assert.deepEqual([again.created, again.approval.approval_id, again.approval.status], [false, id, "edited"], "asking again never reopens an answer");
    await fx.ok("task.checkpoint", { summary: "asked", next_step: "send" });
    assert.equal((await fx.ok("task.resume")).approvals[0].note, "only to alice");
    // final: a second answer is refused naming the first
    const twice = await fx.fail("approval.answer", { approval_id: id, decision: "approve" }, "host");
    assert.deepEqual([twice.data.kind, twice.data.reason, twice.data.status], ["conflict", "approval_answered", "edited"]);
    const kinds = (await fx.ok("events.read", { kinds: ["approval."] })).events.map((e: { kind: string; detail: Record<string, unknown> }) => `${e.kind}:${e.detail.approval_id}`);
    assert.deepEqual(kinds, [`approval.requested:${id}`, `approval.answered:${id}`]);
  });

  test("an approved action grants no write lease: writes still need the host's grant", async () => {
    await fx.ok("task.start", { description: "edit the config" });
    const { approval } = await fx.ok("approval.request", { action: "write config.yaml", reason: "fix the port" });
    await fx.ok("approval.answer", { approval_id: approval.approval_id, decision: "approve" }, "host");
    assert.equal((await fx.fail("writes.require", { action: "write config.yaml" })).data.kind, "write_gate_violation");
    assert.equal((await fx.ok("task.status")).task.access_mode, "read_only");
  });

  test("a rejected request stays rejected; a different digest is a new request", async () => {
    await fx.ok("task.start", { description: "clean up" });
    const a = (await fx.ok("approval.request", { action: "rm -rf build", args_digest: "d1", reason: "space" })).approval;
    await fx.ok("approval.answer", { approval_id: a.approval_id, decision: "reject", note: "keep the build" }, "host");
    const same = await fx.ok("approval.request", { action: "rm -rf build", args_digest: "d1", reason: "please" });
    assert.deepEqual([same.created, same.approval.status, same.approval.note], [false, "rejected", "keep the build"]);
    const other = await fx.ok("approval.request", { action: "rm -rf build", args_digest: "d2", reason: "other args" });
    assert.equal(other.created, true);
    assert.notEqual(other.approval.approval_id, a.approval_id);
    // under a run, the same action and digest is a request of its own: the task-level answer is not the run's
    const run = (await fx.ok("run.start", { owner: "w1" })).run;
    const inRun = await fx.ok("approval.request", { action: "rm -rf build", args_digest: "d1", reason: "in the run", run_id: run.run_id });
    assert.deepEqual([inRun.created, inRun.approval.status, inRun.approval.run_id], [true, "pending", run.run_id]);
  });

  test("bad input and a flood are refused, naming what to do; nothing is written", async () => {
    assert.equal((await fx.fail("approval.request", { action: "x", reason: "y" })).data.kind, "no_active_task");
    await fx.ok("task.start", { description: "t" });
    assert.equal((await fx.fail("approval.request", { action: "x", reason: "y", args_digest: "has spaces" })).data.field, "args_digest");
    assert.equal((await fx.fail("approval.answer", { approval_id: "A_9999", decision: "approve" }, "host")).data.kind, "not_found");
    assert.equal((await fx.fail("approval.answer", { approval_id: "A_0001", decision: "maybe" }, "host")).data.field, "decision");
    assert.equal((await fx.fail("approval.request", { action: "x", reason: "y", run_id: "R_0042" })).data.kind, "not_found");
    for (let i = 0; i < LIMITS.approvals_pending; i++) await fx.ok("approval.request", { action: `a${i}`, reason: "many" });
    const flood = await fx.fail("approval.request", { action: "one more", reason: "many" });
    assert.equal(flood.data.kind, "limit_exceeded");
    assert.match(flood.message, /approval\.list/);
    const listed = await fx.ok("approval.list", { status: "pending" });
    assert.deepEqual([listed.approvals.length, listed.total], [LIMITS.approvals_pending, LIMITS.approvals_pending]);
    await fx.ok("task.finish", { summary: "done" });
    assert.equal((await fx.fail("approval.request", { action: "late", reason: "after the end" })).data.reason, "task_finished");
  });

  test("a flood task after task stops at the root's bound, and the host is told how many wait", async () => {
    const perTask = LIMITS.approvals_pending;
    const tasks = Math.ceil(LIMITS.approvals_pending_root / perTask);
    const db = (await fx.root()).db;
    for (let t = 0; t < tasks; t++) {
      await fx.ok("task.start", { description: `flood ${t}` });
      const taskId = (await fx.ok("task.status")).task.task_id;
      // the first request of each task through the method; the rest straight into the table (the same rows, faster)
      await fx.ok("approval.request", { action: "a0", reason: "flood" });
      for (let i = 1; i < perTask; i++) {
        await db.execute({ sql: "INSERT INTO approvals(task_id, action, reason, status, requested_by, requested_at) VALUES (?, ?, 'flood', 'pending', 'agent:test', ?)", args: [taskId, `a${i}`, new Date().toISOString()] });
      }
    }
    await fx.ok("task.start", { description: "the real request" });
    const refused = await fx.fail("approval.request", { action: "email.send", reason: "a real one" });
    assert.deepEqual([refused.data.kind, refused.data.field], ["limit_exceeded", "pending approvals of the root"]);
    const all = await fx.ok("approval.list", { all_tasks: true, status: "pending" }, "host");
    assert.deepEqual([all.approvals.length, all.total], [100, LIMITS.approvals_pending_root]);
  });
});
