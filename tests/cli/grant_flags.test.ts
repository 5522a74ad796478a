/** `longrun grant`'s flags and its one-line description of a lease, in process (src/cli/person/grant.ts). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DEFAULT_GRANT_TTL_SECONDS, describeLease, grantInput, shownDuration, ttlSeconds } from "../../src/cli/person/grant.ts";
import { PersonError } from "../../src/cli/person/host.ts";

describe("a grant's flags", () => {
  test("--ttl takes seconds, minutes, hours and days; 0 and other words are refused", () => {
    assert.deepEqual(["90", "90s", "10m", "2h", "1d"].map(ttlSeconds), [90, 90, 600, 7200, 86400]);
    for (const bad of ["0", "0m", "10x", "-5", "m", "", "1.5h"]) assert.equal(ttlSeconds(bad), null, bad);
  });

  test("without --ttl a grant lasts ten minutes; never longer than seven days", () => {
    assert.equal(DEFAULT_GRANT_TTL_SECONDS, 600);
    assert.deepEqual(grantInput({ reason: " fix the parser " }), { reason: "fix the parser", scope: null, ttl_seconds: 600, max_uses: null });
    assert.deepEqual(grantInput({ reason: "r", scope: "src/**, tests/**", ttl: "1h", uses: "3" }), { reason: "r", scope: ["src/**", "tests/**"], ttl_seconds: 3600, max_uses: 3 });
    assert.equal(grantInput({ reason: "r", ttl: "7d" }).ttl_seconds, 7 * 86400);
    for (const bad of [{ reason: "" }, { reason: "r", ttl: "8d" }, { reason: "r", uses: "0" }, { reason: "r", uses: "many" }, { reason: "r", scope: " , " }]) {
      assert.throws(() => grantInput(bad), (e: unknown) => e instanceof PersonError && /nothing was granted$/.test(e.message), JSON.stringify(bad));
    }
  });

  test("a lease is described in one line: what, by whom, its scope and uses, until when", () => {
    const task = { task_id: "T_1" } as Parameters<typeof describeLease>[0];
    const line = describeLease(task, { turn: 2, reason: "fix", granted_by: "host:cli", granted_at: "2026-12-02T07:00:00.000Z", scope: ["src/**"], expires_at: "2026-12-02T07:10:00.000Z", max_uses: 3, uses: 0 });
    assert.equal(line, 'writes granted for turn 2 of task T_1 ("fix", by host:cli): scope src/**; at most 3 write(s); until 2026-12-02T07:10:00Z (10m), or sooner when the turn ends or the task checkpoints; `longrun revoke` ends it now');
    assert.deepEqual([45, 600, 5400, 90061].map(shownDuration), ["45s", "10m", "1h30m", "1d1h1m1s"]);
  });
});
