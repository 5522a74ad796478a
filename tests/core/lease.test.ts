import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { checkGate, consumeUse, grantLease, revokeLease } from "../../src/core/lease.ts";
import { newTaskState, type TaskState } from "../../src/core/task.ts";

const T0 = new Date("2026-11-29T10:00:00Z");

function task(over: Partial<TaskState> = {}): TaskState {
  return newTaskState({ task_id: "T_1", description: "d", keywords: [], status: "in_progress", turn_index: 1, version: 1, ...over }, T0.toISOString());
}

function refusal(state: TaskState, action = "write x", now = T0) {
  const d = checkGate(state, action, now);
  assert.equal(d.ok, false, "expected a refusal");
  if (d.ok) throw new Error("unreachable");
  return d;
}

describe("write lease rules", () => {
  test("a read-only task refuses a write with reason read_only", () => {
    const d = refusal(task());
    assert.equal(d.error.reason, "read_only");
    assert.equal(d.error.kind, "write_gate_violation");
    assert.equal(d.error.turn, 1);
    assert.equal(d.error.lease_turn, null);
  });

  test("a grant binds the lease to the current turn and allows a write", () => {
    const s = grantLease(task({ turn_index: 4 }), { reason: "plan approved", granted_by: "host" }, T0);
    assert.equal(s.access_mode, "writable");
    assert.equal(s.write_lease_turn, 4);
    assert.equal(s.lease?.granted_by, "host");
    assert.equal(s.lease?.reason, "plan approved");
    assert.equal(s.lease_log.at(-1)?.event, "granted");
    assert.equal(checkGate(s, "write x", T0).ok, true);
  });

  test("a stale lease is refused and marked for revocation even though the mode still says writable", () => {
    const s = grantLease(task(), { reason: "r", granted_by: "host" }, T0);
    s.turn_index = 2; // a new turn began without anyone revoking
    assert.equal(s.access_mode, "writable");
    const d = refusal(s);
    assert.equal(d.error.reason, "stale_lease");
    assert.equal(d.error.lease_turn, 1);
    assert.equal(d.error.turn, 2);
    assert.equal(d.revoke, true);
  });

  test("an action outside the scope is refused with out_of_scope and the lease stays", () => {
    const s = grantLease(task(), { reason: "r", granted_by: "host", scope: ["src/**"] }, T0);
    const d = refusal(s, "edit docs/a.md");
    assert.equal(d.error.reason, "out_of_scope");
    assert.equal(d.revoke, false);
    assert.equal(checkGate(s, "edit src/a.ts", T0).ok, true);
  });

  test("a lease with a time to live ends when it runs out", () => {
    const s = grantLease(task(), { reason: "r", granted_by: "host", ttl_seconds: 60 }, T0);
    assert.equal(checkGate(s, "w", new Date(T0.getTime() + 59_000)).ok, true);
    const d = refusal(s, "w", new Date(T0.getTime() + 60_000));
    assert.equal(d.error.reason, "expired");
    assert.equal(d.revoke, true);
  });

  test("a lease with max_uses allows that many writes", () => {
    let s = grantLease(task(), { reason: "r", granted_by: "host", max_uses: 2 }, T0);
    for (let i = 0; i < 2; i++) {
      const d = checkGate(s, "w", T0);
      assert.ok(d.ok && d.consumes_use);
      s = consumeUse(s);
    }
    assert.equal(refusal(s).error.reason, "uses_exhausted");
  });

  test("a writable lease on a task that is not in_progress is refused", () => {
    const s = grantLease(task(), { reason: "r", granted_by: "host" }, T0);
    s.status = "paused";
    assert.equal(refusal(s).error.reason, "not_in_progress");
  });

  test("revoking clears mode, lease turn and lease, and logs it once", () => {
    const s = revokeLease(grantLease(task(), { reason: "r", granted_by: "host" }, T0), "turn ended", T0);
    assert.equal(s.access_mode, "read_only");
    assert.equal(s.write_lease_turn, null);
    assert.equal(s.lease, null);
    assert.equal(s.lease_log.filter((e) => e.event === "revoked").length, 1);
    revokeLease(s, "again", T0);
    assert.equal(s.lease_log.filter((e) => e.event === "revoked").length, 1);
  });
});
