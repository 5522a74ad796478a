/** The page's "recent turns and grants": a lease that ran out by its own bounds is a line of its own. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { TaskState } from "../../src/core/task.ts";
import { timelineOf } from "../../src/http/page/snapshot.ts";

function task(lease: Partial<NonNullable<TaskState["lease"]>> | null): TaskState {
  return {
    task_id: "T_1", description: "d", status: "in_progress", turn_index: 3, phase: "", next_step: "",
    created_at: "2026-12-02T07:00:00.000Z", updated_at: "2026-12-02T07:05:00.000Z", version: 4, last_checkpoint: null,
    history: [], lease_log: [{ at: "2026-12-02T07:01:00.000Z", turn: 3, event: "granted", reason: "fix it", by: "host:cli", scope: null }],
    lease: lease && { turn: 3, reason: "fix it", granted_by: "host:cli", granted_at: "2026-12-02T07:01:00.000Z", scope: null, expires_at: null, max_uses: null, uses: 0, ...lease },
  } as unknown as TaskState;
}
const at = new Date("2026-12-02T07:30:00.000Z");

describe("timelineOf", () => {
  test("a lease past its time to live is an `ended` entry at the moment it ran out, newest first", () => {
    const t = timelineOf(task({ expires_at: "2026-12-02T07:11:00.000Z" }), at);
    assert.equal(t[0]!.event, "ended");
    assert.equal(t[0]!.at, "2026-12-02T07:11:00.000Z");
    assert.equal(t[0]!.turn, 3);
    assert.match(t[0]!.text, /time to live/);
  });

  test("a lease whose writes are all used is an `ended` entry", () => {
    const t = timelineOf(task({ max_uses: 2, uses: 2 }), at);
    assert.equal(t[0]!.event, "ended");
    assert.match(t[0]!.text, /2 writes were all used/);
  });

  test("a live lease, or none, adds nothing", () => {
    for (const lease of [{ expires_at: "2026-12-02T08:00:00.000Z" }, { max_uses: 2, uses: 1 }, null]) {
      assert.deepEqual(timelineOf(task(lease), at).map((e) => e.event), ["granted"]);
    }
  });
});
