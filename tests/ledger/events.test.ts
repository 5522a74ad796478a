/**
 * The root's event log (events.read), local and on sqld under LONGRUN_TEST_STORE=sqld: one ordered
 * list of what happened to tasks and runs, written in the same transaction as each change; filters
 * by kind (a prefix ends in "."), task and run; a read with wait_ms answers as soon as an event
 * comes, or empty when the time is up; a refused call leaves no event; pruning bounds it.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { LIMITS } from "../../src/core/limits.ts";
import { RpcFixture } from "./rpc.ts";

describe("events.read", () => {
  let fx: RpcFixture;
  beforeEach(() => (fx = new RpcFixture()));
  afterEach(() => fx.close());

  const kinds = async (params: Record<string, unknown> = {}) => (await fx.ok("events.read", params)).events.map((e: { kind: string }) => e.kind);

  test("a task's and a run's life, in order: what a host waits for is each an event", async () => {
    const { task } = await fx.ok("task.start", { description: "research the filings" });
    await fx.ok("writes.request", { reason: "save the notes" });
    await fx.ok("writes.enable", { reason: "go ahead" }, "host");
    await fx.ok("task.checkpoint", { summary: "read 3", next_step: "read 4", kind: "progress" });
    const run = (await fx.ok("run.start", { owner: "w1", budget: { requests: 1 } }, "agent")).run;
    await fx.ok("run.grant", { run_id: run.run_id, reason: "go" }, "host");
    await fx.ok("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1 });
    await fx.ok("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, note: "in flight" });
    await fx.ok("run.park", { run_id: run.run_id, epoch: 1, waiting_for: "the user's key", for_user: true });
    await fx.ok("run.wake", { run_id: run.run_id, reason: "answered", answer: { text: "key B" } }, "host");
    await fx.ok("task.checkpoint", { summary: "paused", next_step: "go on" });
    const all = (await fx.ok("events.read")).events;
    assert.deepEqual(all.map((e: { kind: string }) => e.kind), [
      "task.created", "lease.requested", "lease.granted", "task.checkpoint",
      "run.requested", "run.granted", "run.budget_exhausted", "run.parked", "run.woken",
      "lease.revoked", "task.checkpoint", "task.status",
    ], "budget_exhausted once, at the first charge that reached the limit");
    assert.deepEqual(all.map((e: { id: number }) => e.id), [...all.map((e: { id: number }) => e.id)].sort((a: number, b: number) => a - b), "ids increase");
    assert.ok(all.every((e: { task_id: string }) => e.task_id === task.task_id), "each names its task");
    const woken = all.find((e: { kind: string }) => e.kind === "run.woken");
    assert.equal(woken.run_id, run.run_id);
    assert.equal(woken.detail.answer.text, "key B");
    assert.deepEqual(all.find((e: { kind: string }) => e.kind === "task.status").detail, { from: "in_progress", to: "paused", reason: "checkpoint (manual)" });
    assert.equal(all.find((e: { kind: string }) => e.kind === "lease.requested").detail.reason, "save the notes");
    // filters and paging
    assert.deepEqual(await kinds({ kinds: ["run."] }), ["run.requested", "run.granted", "run.budget_exhausted", "run.parked", "run.woken"]);
    assert.deepEqual(await kinds({ kinds: ["lease.requested", "run.parked"] }), ["lease.requested", "run.parked"]);
    assert.deepEqual(await kinds({ run_id: run.run_id, limit: 2 }), ["run.requested", "run.granted"]);
    const tail = await fx.ok("events.read", { after: all[9].id });
    assert.deepEqual(tail.events.map((e: { kind: string }) => e.kind), ["task.checkpoint", "task.status"]);
    assert.equal(tail.last_id, all.at(-1).id);
  });

  test("a refused call leaves no event", async () => {
    await fx.ok("task.start", { description: "t" });
    const before = (await fx.ok("events.read")).last_id;
    assert.equal((await fx.fail("writes.enable", { reason: "I approve myself" })).data.kind, "unauthorized");
    assert.equal((await fx.fail("turn.begin", { reason: "a new turn, by me" })).data.kind, "unauthorized");
    assert.equal((await fx.fail("task.transition", { to: "pending", reason: "back" })).data.kind, "transition_error");
    assert.equal((await fx.ok("events.read")).last_id, before);
  });

  test("wait_ms answers when an event comes, and empty when the time is up", async () => {
    await fx.ok("task.start", { description: "t" });
    const last = (await fx.ok("events.read")).last_id;
    const empty = await fx.ok("events.read", { after: last, wait_ms: 150 });
    assert.deepEqual(empty.events, []);
    const waiting = fx.ok("events.read", { after: last, wait_ms: 20_000 });
    await new Promise((r) => setTimeout(r, 100));
    await fx.ok("writes.request", { reason: "need to write" });
    const got = await waiting;
    assert.deepEqual(got.events.map((e: { kind: string }) => e.kind), ["lease.requested"]);
  });

  test("the log is bounded: pruning keeps the newest events, and a reader from an old id goes on from the oldest kept", async () => {
    await fx.ok("task.start", { description: "t" });
    for (let i = 0; i < 6; i++) await fx.ok("writes.request", { reason: `please ${i}` });
    const before = (await fx.ok("events.read")).events;
    assert.equal(before.length, 7);
    assert.equal(await (await fx.root()).events.prune(3), 4);
    const after = await fx.ok("events.read", { after: before[0].id });
    assert.deepEqual(after.events.map((e: { id: number }) => e.id), before.slice(4).map((e: { id: number }) => e.id));
    assert.equal(after.last_id, before.at(-1).id, "ids go on, never reused");
    await fx.ok("writes.request", { reason: "one more" });
    assert.equal((await fx.ok("events.read", { after: after.last_id })).events[0].id, before.at(-1).id + 1);
  });

  test("waiting reads are bounded per side: the agent's sixteen do not keep the host from waiting", async () => {
    await fx.ok("task.start", { description: "t" });
    const last = (await fx.ok("events.read")).last_id;
    const waits = Array.from({ length: LIMITS.events_waiting }, () => fx.call("events.read", { after: last, wait_ms: 20_000 }));
    await new Promise((r) => setTimeout(r, 150));
    const refused = await fx.fail("events.read", { after: last, wait_ms: 20_000 });
    assert.equal(refused.data.kind, "limit_exceeded");
    assert.match(refused.message, /without wait_ms/);
    assert.deepEqual((await fx.ok("events.read", { after: last })).events, [], "a read that does not wait is still answered");
    const host = fx.call("events.read", { after: last, wait_ms: 20_000 }, "host");
    await new Promise((r) => setTimeout(r, 150));
    await fx.ok("writes.request", { reason: "wake them all" });
    for (const w of [...waits, host]) assert.equal((await w).result.events[0].kind, "lease.requested");
  });

  test("bad params are refused naming the field", async () => {
    assert.equal((await fx.fail("events.read", { after: -1 })).data.field, "after");
    assert.equal((await fx.fail("events.read", { wait_ms: 60_000 })).data.field, "wait_ms");
    assert.equal((await fx.fail("events.read", { kinds: ["Run Parked"] })).data.field, "kinds.0");
  });
});
