/** The pure rules of owner liveness and time budgets (src/core/run_rules/liveness.ts). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { heartbeatStop, livenessOf, mayClaim, timeLimitAt } from "../../src/core/run_rules/liveness.ts";

const at = (iso: string) => new Date(iso);

describe("owner liveness rules", () => {
  test("a running run goes stale at its last beat plus the TTL, not a millisecond before", () => {
    const beat = "2026-12-02T09:00:00.000Z";
    assert.equal(livenessOf("running", 60, beat, at("2026-12-02T09:00:59.999Z")).stale_owner, false);
    const stale = livenessOf("running", 60, beat, at("2026-12-02T09:01:00.000Z"));
    assert.equal(stale.stale_owner, true);
    assert.equal(stale.stale_since, "2026-12-02T09:01:00.000Z");
  });
  test("no TTL, no beat, or a run that is not running: never stale", () => {
    const late = at("2030-01-01T00:00:00Z");
    assert.equal(livenessOf("running", null, "2026-12-02T09:00:00Z", late).stale_owner, false);
    assert.equal(livenessOf("running", 60, null, late).stale_owner, false);
    for (const s of ["parked", "requested", "finished", "cancelled"]) assert.equal(livenessOf(s, 60, "2026-12-02T09:00:00Z", late).stale_owner, false, s);
  });
  test("a stale run is claimed only by the host or a named standby; a live one by anyone", () => {
    assert.equal(mayClaim(false, "agent", "anyone", []), true);
    assert.equal(mayClaim(true, "agent", "worker-2", []), false);
    assert.equal(mayClaim(true, "agent", "worker-2", ["worker-2"]), true);
    assert.equal(mayClaim(true, "agent", "Worker-2", ["worker-2"]), false, "names match exactly");
    assert.equal(mayClaim(true, "host", "anyone", []), true);
  });
  test("the heartbeat's stop: superseded first, then cancelled, then the time budget, then any other limit", () => {
    assert.equal(heartbeatStop(1, 2, "cancelled", { exhausted_by: ["deadline"] }), "superseded");
    assert.equal(heartbeatStop(2, 2, "cancelled", { exhausted_by: ["deadline"] }), "cancelled");
    assert.equal(heartbeatStop(2, 2, "running", { exhausted_by: ["cost", "wall_seconds"] }), "deadline");
    assert.equal(heartbeatStop(2, 2, "running", { exhausted_by: ["cost"] }), "budget_exhausted");
    assert.equal(heartbeatStop(2, 2, "parked", { exhausted_by: [] }), null);
  });
  test("a time budget ends at the earlier of the deadline and the start plus wall_seconds", () => {
    const start = "2026-12-02T09:00:00.000Z";
    assert.equal(timeLimitAt({}, start), null);
    assert.equal(timeLimitAt({ wall_seconds: 60 }, start), Date.parse("2026-12-02T09:01:00Z"));
    assert.equal(timeLimitAt({ wall_seconds: 60, deadline: "2026-12-02T09:00:30Z" }, start), Date.parse("2026-12-02T09:00:30Z"));
  });
});
