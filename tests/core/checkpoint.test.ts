import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { machineLine, parseMachineLine, renderCheckpoint } from "../../src/core/checkpoint.ts";
import { STATE_FORMAT, type TaskState } from "../../src/core/task.ts";

const state: TaskState = {
  format: STATE_FORMAT,
  task_id: "T_20261129_100000_abcd",
  description: "Fix the --> comment breaker <script> & 接口适配",
  keywords: ["接口"],
  status: "paused",
  access_mode: "read_only",
  turn_index: 3,
  write_lease_turn: null,
  lease: null,
  phase: "接口适配",
  next_step: "接入第二个供应商",
  created_at: "2026-11-29T10:00:00.000Z",
  updated_at: "2026-11-29T10:00:00.000Z",
  version: 7,
  last_checkpoint: null,
  history: [],
  lease_log: [],
};

describe("checkpoint text and its machine line", () => {
  test("the machine line round-trips the state it was made from", () => {
    const text = renderCheckpoint(state, { summary: "s", kind: "manual" }, "cp-1", "2026-11-29T11:00:00.000Z");
    const m = parseMachineLine(text);
    assert.ok(m);
    assert.equal(m.task_id, state.task_id);
    assert.equal(m.description, state.description);
    assert.equal(m.status, "paused");
    assert.equal(m.access_mode, "read_only");
    assert.equal(m.turn_index, 3);
    assert.equal(m.phase, "接口适配");
    assert.equal(m.next_step, "接入第二个供应商");
    assert.equal(m.checkpoint_id, "cp-1");
    assert.equal(m.version, 7);
  });

  test("the machine line is one HTML comment even when the text contains -->", () => {
    const line = machineLine(state, "cp-1", "t");
    assert.ok(line.startsWith("<!-- longrun-state: {"));
    assert.ok(line.endsWith("} -->"));
    assert.equal(line.indexOf("-->"), line.length - 3);
    assert.equal(line.includes("\n"), false);
  });

  test("the human part states status, gate and turn before the machine line", () => {
    const text = renderCheckpoint(state, { summary: "adapters done", kind: "manual" }, "cp-1", "t");
    const lines = text.split("\n");
    assert.equal(lines[0], "[LongRun Checkpoint]");
    assert.match(text, /status: paused · gate: read_only · turn: 3/);
    assert.ok(lines.at(-1)!.startsWith("<!-- longrun-state: "));
  });

  test("text without a machine line, or with a broken one, parses to null", () => {
    assert.equal(parseMachineLine("just prose"), null);
    assert.equal(parseMachineLine("<!-- longrun-state: {not json} -->"), null);
    assert.equal(parseMachineLine('<!-- longrun-state: {"task_id":"T","status":"nope","turn_index":1,"checkpoint_id":"c"} -->'), null);
  });

  test("the newest (last) machine line wins", () => {
    const a = machineLine({ ...state, turn_index: 1 }, "a", "t");
    const b = machineLine({ ...state, turn_index: 9 }, "b", "t");
    assert.equal(parseMachineLine(`${a}\n${b}`)?.checkpoint_id, "b");
  });
});
