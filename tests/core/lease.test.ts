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

  test("a grant records its bounds: scope copied, time to live as an instant, uses from zero; the log names who and what", () => {
    const scope = ["src/**"];
    const s = grantLease(task({ turn_index: 3 }), { reason: "plan approved", granted_by: "host", scope, ttl_seconds: 90, max_uses: 5 }, T0);
    assert.deepEqual(s.lease, {
      turn: 3,
      reason: "plan approved",
      granted_by: "host",
      granted_at: T0.toISOString(),
      scope: ["src/**"],
      expires_at: "2026-11-29T10:01:30.000Z",
      max_uses: 5,
      uses: 0,
    });
    scope.push("**"); // the caller's array is not the lease's
    assert.deepEqual(s.lease?.scope, ["src/**"]);
    assert.deepEqual(s.lease_log, [{ at: T0.toISOString(), event: "granted", turn: 3, reason: "plan approved", by: "host", scope: ["src/**"] }]);
  });

  test("a grant without bounds, or with an empty scope, has none", () => {
    for (const scope of [undefined, null, []]) {
      const s = grantLease(task(), { reason: "r", granted_by: "host", scope, ttl_seconds: null, max_uses: null }, T0);
      assert.equal(s.lease?.scope, null);
      assert.equal(s.lease?.expires_at, null);
      assert.equal(s.lease?.max_uses, null);
    }
  });

  test("a lease without max_uses does not count uses; one with it does", () => {
    const free = checkGate(grantLease(task(), { reason: "r", granted_by: "host" }, T0), "w", T0);
    assert.ok(free.ok);
    assert.equal(free.consumes_use, false);
    const counted = checkGate(grantLease(task(), { reason: "r", granted_by: "host", max_uses: 1 }, T0), "w", T0);
    assert.ok(counted.ok);
    assert.equal(counted.consumes_use, true);
  });

  test("consumeUse counts one use and leaves a state without a lease alone", () => {
    const s = consumeUse(consumeUse(grantLease(task(), { reason: "r", granted_by: "host", max_uses: 3 }, T0)));
    assert.equal(s.lease?.uses, 2);
    const none = task();
    assert.equal(consumeUse(none), none);
    assert.equal(none.lease, null);
  });

  test("a lease with max_uses 0 allows no write at all", () => {
    const d = refusal(grantLease(task(), { reason: "r", granted_by: "host", max_uses: 0 }, T0));
    assert.equal(d.error.reason, "uses_exhausted");
  });

  test("each refusal names the action, the cause and what to do, and says whether to revoke", () => {
    const grant = (input: Partial<Parameters<typeof grantLease>[1]> = {}) => grantLease(task({ turn_index: 5 }), { reason: "r", granted_by: "host", ...input }, T0);

    const readOnly = refusal(task({ turn_index: 5 }), "edit a.ts");
    assert.equal(readOnly.revoke, false);
    assert.match(readOnly.error.message, /^Write refused: "edit a\.ts" needs a write lease and the task is read-only \(turn 5\); .*writes\.enable/);
    assert.equal(readOnly.error.data.action, "edit a.ts");

    const staleState = grant();
    staleState.turn_index = 6;
    const stale = refusal(staleState, "edit a.ts");
    assert.match(stale.error.message, /"edit a\.ts".*granted in turn 5 and this is turn 6.*revoked; .*writes\.enable/);

    const pausedState = grant();
    pausedState.status = "blocked";
    const paused = refusal(pausedState, "edit a.ts");
    assert.equal(paused.revoke, true);
    assert.match(paused.error.message, /"edit a\.ts": the task is blocked, not in_progress; .*in_progress.*new lease/);

    const expired = refusal(grant({ ttl_seconds: 10 }), "edit a.ts", new Date(T0.getTime() + 10_000));
    assert.match(expired.error.message, /"edit a\.ts": the write lease expired at 2026-11-29T10:00:10\.000Z .*writes\.enable/);
    assert.equal(expired.error.data.expires_at, "2026-11-29T10:00:10.000Z");

    const used = grant({ max_uses: 2 });
    consumeUse(consumeUse(used));
    const exhausted = refusal(used, "edit a.ts");
    assert.equal(exhausted.revoke, true);
    assert.match(exhausted.error.message, /"edit a\.ts": the write lease allowed 2 write\(s\) and all were used; .*writes\.enable/);
    assert.equal(exhausted.error.data.max_uses, 2);

    const outside = refusal(grant({ scope: ["src/**", "docs/*.md"] }), "edit a.ts");
    assert.match(outside.error.message, /"edit a\.ts" is outside the lease's scope \["src\/\*\*","docs\/\*\.md"\]; .*lease that covers this action/);
    assert.deepEqual(outside.error.data.scope, ["src/**", "docs/*.md"]);
  });

  test("a task marked writable without a lease is refused as read-only and marked for revocation (cleans the mode up)", () => {
    const s = task({ access_mode: "writable", write_lease_turn: 1 });
    const d = refusal(s);
    assert.equal(d.error.reason, "read_only");
    assert.equal(d.revoke, true);
  });

  test("a lease left on a read-only task grants nothing", () => {
    const s = grantLease(task(), { reason: "r", granted_by: "host" }, T0);
    s.access_mode = "read_only";
    const d = refusal(s);
    assert.equal(d.error.reason, "read_only");
    assert.equal(d.revoke, false);
  });

  test("a lease whose own turn is not this turn is stale even when write_lease_turn was moved along", () => {
    const s = grantLease(task(), { reason: "r", granted_by: "host" }, T0);
    s.turn_index = 2;
    s.write_lease_turn = 2;
    const d = refusal(s);
    assert.equal(d.error.reason, "stale_lease");
    assert.equal(d.revoke, true);
  });

  test("a lease is valid only while write_lease_turn is this turn, whatever the lease itself says", () => {
    for (const write_lease_turn of [null, 0]) {
      const s = grantLease(task(), { reason: "r", granted_by: "host" }, T0);
      s.write_lease_turn = write_lease_turn;
      const d = refusal(s);
      assert.equal(d.error.reason, "stale_lease");
      assert.equal(d.revoke, true);
    }
  });

  test("revoking any remnant of a lease (mode, lease turn or lease alone) clears it all and logs the revocation", () => {
    const lease = grantLease(task(), { reason: "r", granted_by: "host" }, T0).lease;
    const remnants: Partial<TaskState>[] = [{ access_mode: "writable" }, { write_lease_turn: 1 }, { lease }];
    for (const remnant of remnants) {
      const s = revokeLease(task({ turn_index: 7, ...remnant }), "turn ended", T0);
      assert.equal(s.access_mode, "read_only");
      assert.equal(s.write_lease_turn, null);
      assert.equal(s.lease, null);
      assert.deepEqual(s.lease_log, [{ at: T0.toISOString(), event: "revoked", turn: 7, reason: "turn ended" }], JSON.stringify(remnant));
    }
    assert.deepEqual(revokeLease(task(), "nothing held", T0).lease_log, []);
  });
});
