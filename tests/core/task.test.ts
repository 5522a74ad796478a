import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cloneState, LOG_LIMIT, newTaskState, pushBounded, STATE_FORMAT } from "../../src/core/task.ts";

const AT = "2026-11-29T10:00:00.000Z";

describe("task state", () => {
  test("a new task is read-only, without a lease or checkpoint, with empty logs, at version 0", () => {
    assert.deepEqual(newTaskState({ task_id: "T_1", description: "d", keywords: ["k"], status: "pending", turn_index: 0 }, AT), {
      format: STATE_FORMAT,
      task_id: "T_1",
      description: "d",
      keywords: ["k"],
      status: "pending",
      access_mode: "read_only",
      turn_index: 0,
      write_lease_turn: null,
      lease: null,
      phase: "",
      next_step: "",
      created_at: AT,
      updated_at: AT,
      version: 0,
      last_checkpoint: null,
      history: [],
      lease_log: [],
    });
  });

  test("given fields override the defaults", () => {
    const s = newTaskState({ task_id: "T_1", description: "d", keywords: [], status: "in_progress", turn_index: 2, phase: "p", version: 4, created_at: "c" }, AT);
    assert.equal(s.phase, "p");
    assert.equal(s.version, 4);
    assert.equal(s.created_at, "c");
    assert.equal(s.updated_at, AT);
  });

  test("new tasks do not share their logs", () => {
    const a = newTaskState({ task_id: "A", description: "", keywords: [], status: "pending", turn_index: 0 }, AT);
    const b = newTaskState({ task_id: "B", description: "", keywords: [], status: "pending", turn_index: 0 }, AT);
    a.history.push({ at: AT, from: null, to: "pending", reason: "r", turn: 0 });
    a.lease_log.push({ at: AT, event: "requested", turn: 0, reason: "r" });
    assert.deepEqual(b.history, []);
    assert.deepEqual(b.lease_log, []);
  });

  test("a clone is deep: changing it leaves the original as it was", () => {
    const s = newTaskState({ task_id: "T_1", description: "d", keywords: ["k"], status: "in_progress", turn_index: 1 }, AT);
    s.history.push({ at: AT, from: "pending", to: "in_progress", reason: "start", turn: 1 });
    s.last_checkpoint = { checkpoint_id: "c", memory_id: "m", at: AT, data: { nested: { n: 1 } } };
    const before = structuredClone(s);
    const c = cloneState(s);
    assert.deepEqual(c, s);
    c.keywords.push("x");
    c.history[0]!.reason = "changed";
    (c.last_checkpoint!.data!.nested as { n: number }).n = 2;
    c.status = "failed";
    assert.deepEqual(s, before);
  });

  test("bounded logs append below the limit and keep the newest entries at it", () => {
    assert.deepEqual(pushBounded([1, 2], 3, 3), [1, 2, 3]);
    assert.deepEqual(pushBounded([1, 2, 3], 4, 5), [1, 2, 3, 4]);
    assert.deepEqual(pushBounded([1, 2, 3], 4, 3), [2, 3, 4]);
    assert.deepEqual(pushBounded([1, 2, 3, 4, 5], 6, 3), [4, 5, 6]);
    const list = [1];
    pushBounded(list, 2);
    assert.deepEqual(list, [1], "the given list is not changed");
    const full = Array.from({ length: LOG_LIMIT }, (_, i) => i);
    const next = pushBounded(full, LOG_LIMIT);
    assert.equal(next.length, LOG_LIMIT);
    assert.equal(next[0], 1);
    assert.equal(next.at(-1), LOG_LIMIT);
    assert.equal(pushBounded(full.slice(1), LOG_LIMIT).length, LOG_LIMIT);
  });
});
