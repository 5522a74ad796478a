/**
 * What a caller is told is what holds (issue 24), through the compiled binary over stdio, on a
 * local root and (LONGRUN_TEST_STORE=sqld) on a libSQL server: a lease no longer in force reads as
 * read-only, a user message begins one turn however many calls it makes, and refusals read as
 * sentences naming what was wrong and what to do.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { removeDir, until } from "../support/helpers.ts";
import { serveEachTest } from "../support/each_root.ts";

describe("what it says is what holds", () => {
  const serve = serveEachTest();

  test("a lease whose uses ran out reads read_only in task.status before any gate check, also from a new process", async () => {
    const s = serve();
    await s.result("task.start", { description: "stale lease" });
    await s.result("writes.enable", { reason: "one write", max_uses: 1 });
    assert.equal((await s.result("task.status", {})).task.access_mode, "writable");
    await s.result("writes.require", { action: "edit a.txt" });
    const st = (await s.result("task.status", {})).task;
    assert.equal(st.access_mode, "read_only", "its one use is spent");
    assert.equal(st.lease, null);
    await s.close();
    const fresh = serve();
    assert.equal((await fresh.result("task.status", {})).task.access_mode, "read_only", "derived on load, not stored");
    assert.equal((await fresh.error("writes.require", { action: "edit a.txt" })).data.kind, "write_gate_violation");
  });

  test("a lease whose time to live ran out reads read_only in task.status without a gate check", async () => {
    const s = serve();
    await s.result("task.start", { description: "expiring lease" });
    await s.result("writes.enable", { reason: "briefly", ttl_seconds: 1 });
    await until(async () => (await s.result("task.status", {})).task.access_mode === "read_only", "the lease to read as ended once its time ran out", 5_000);
    assert.equal((await s.result("task.status", {})).task.write_lease_turn, null);
  });

  test("task.resume and turn.begin with one message_id begin one turn; the same id again begins none; a new id begins the next", async () => {
    const s = serve();
    await s.result("task.start", { description: "double turns" });
    await s.result("task.checkpoint", { summary: "pause", next_step: "resume" });
    const r = await s.result("task.resume", { message_id: "msg-1" });
    assert.equal(r.task.turn_index, 2);
    const b = await s.result("turn.begin", { message_id: "msg-1" });
    assert.equal(b.task.turn_index, 2, "the message that resumed the task begins no second turn");
    await s.result("writes.enable", { reason: "edit" });
    assert.equal((await s.result("turn.begin", { message_id: "msg-1" })).task.turn_index, 2);
    assert.equal((await s.result("writes.require", { action: "edit a.txt" })).turn, 2, "a repeated begin of the same message keeps the turn's lease");
    assert.equal((await s.result("task.resume", { message_id: "msg-1" })).task.turn_index, 2, "a repeated resume of the same message too");
    assert.equal((await s.result("turn.begin", { message_id: "msg-2" })).task.turn_index, 3);
    assert.equal((await s.result("turn.begin", {})).task.turn_index, 4, "without an id every call begins a turn, as before");
    const bad = await s.error("turn.begin", { message_id: "" });
    assert.equal(bad.data.kind, "invalid_params");
  });

  test("refusals read as sentences: an unknown param names the params the method takes; a finished task says so; a limit names the most allowed", async () => {
    const s = serve();
    const unknown = await s.error("task.status", { desc: "x" });
    assert.equal(unknown.data.kind, "invalid_params");
    assert.equal(unknown.data.field, "desc");
    assert.match(unknown.message, /"desc" is not a param of task\.status; it takes task_id and root/);
    assert.doesNotMatch(unknown.message, /Expected never/);
    const choice = await s.error("task.transition", { to: "bogus", reason: "r" });
    assert.equal(choice.data.field, "to");
    assert.match(choice.message, /to is "bogus", which is not one of the values it takes: "pending", .* or "failed"/);
    const missing = await s.error("writes.require", {});
    assert.match(missing.message, /action is missing, and it is required/);
    const big = await s.error("context.read", { ref: "C_1", length: 1_000_000_000 });
    assert.equal(big.data.kind, "limit_exceeded");
    assert.deepEqual([big.data.field, big.data.limit, big.data.actual, big.data.unit], ["length", 262144, 1_000_000_000, "value"]);
    assert.match(big.message, /length is 1000000000, more than the most allowed, 262144; send a length of at most 262144/);
    await s.result("task.start", { description: "finish twice" });
    await s.result("task.finish", {});
    const twice = await s.error("task.finish", {});
    assert.equal(twice.data.kind, "transition_error");
    assert.deepEqual([twice.data.from, twice.data.to, twice.data.allowed], ["completed", "completed", []]);
    assert.match(twice.message, /the task is already completed, which is final; start a new task with task\.start/);
    await s.result("task.start", { description: "a transition not allowed" });
    await s.result("task.checkpoint", { summary: "pause", next_step: "on" });
    const wrong = await s.error("task.transition", { to: "waiting_verification", reason: "skip" });
    assert.equal(wrong.data.kind, "transition_error");
    assert.match(wrong.message, /a task that is paused cannot become waiting_verification; it may become /);
  });
});
