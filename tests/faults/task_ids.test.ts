/**
 * Task ids are the time to the second and 16 random bits: two tasks started in the same second
 * can draw the same id. A new task never overwrites an older one that has it (found by the
 * model-based soak: 19 overwrites in 100,000 sequences before this).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { IdSource } from "../../src/core/ports.ts";
import { Root } from "../../src/root/root.ts";
import { systemIds } from "../../src/store/system.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

/** Failure injection: an id source that draws the same task id again before a fresh one. */
function collidingIds(): IdSource {
  const drawn = ["T_20261130_120000_aaaa", "T_20261130_120000_aaaa", "T_20261130_120000_aaaa", "T_20261130_120000_bbbb"];
  return { ...systemIds, taskId: () => drawn.shift() ?? systemIds.taskId(new Date()) };
}

test("a task id drawn twice is drawn again: the first task keeps its state, the second gets its own id", async () => {
  const dir = tempDir();
  const root = await Root.open(dir, { searchInWorker: false, ids: collidingIds() });
  try {
    const first = (await root.contract.startTask("the first task")).task;
    assert.equal(first.task_id, "T_20261130_120000_aaaa");
    await root.contract.enableWrites({ reason: "first task's lease", granted_by: "host" });
    const second = (await root.contract.startTask("the second task")).task;
    assert.equal(second.task_id, "T_20261130_120000_bbbb", "the taken id was not reused");
    const kept = await root.state.loadTask(first.task_id);
    assert.equal(kept?.description, "the first task", "the first task was not overwritten");
    assert.equal((await root.contract.status()).task?.task_id, second.task_id);
    assert.equal((await root.state.list()).length, 2);
  } finally {
    await root.close();
    removeDir(dir);
  }
});

test("a deleted task's id is never drawn again: nothing that named the deleted task names the new one", async () => {
  const dir = tempDir();
  const drawn = ["T_20261130_120000_aaaa", "T_20261130_120000_bbbb", "T_20261130_120000_aaaa", "T_20261130_120000_cccc"];
  const ids: IdSource = { ...systemIds, taskId: () => drawn.shift() ?? systemIds.taskId(new Date()) };
  const root = await Root.open(dir, { searchInWorker: false, ids });
  try {
    const first = (await root.contract.startTask("the first task")).task;
    await root.contract.startTask("the second task");
    const out = await root.deleteTask({ task_id: first.task_id, by: "host:test", reason: null, memories: false });
    assert.equal(out.already, false);
    const third = (await root.contract.startTask("the third task")).task;
    assert.equal(third.task_id, "T_20261130_120000_cccc", "the deleted task's id was drawn again and refused");
  } finally {
    await root.close();
    removeDir(dir);
  }
});
