/**
 * Idempotency keys: a write sent again with the same `idempotency_key` and params gets its first
 * answer and has no second effect, also from a new process; the same key with other params is
 * refused and changes nothing. Through the compiled binary, on a local root and (LONGRUN_TEST_STORE=sqld)
 * on a libSQL server.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { serveEachTest } from "../support/each_root.ts";

describe("idempotency keys", () => {
  const serve = serveEachTest();

  test("task.start sent twice with one key makes one task and answers alike, also after a restart", async () => {
    const s = serve();
    const first = await s.result("task.start", { description: "retry me", idempotency_key: "k-start-1" });
    const again = await s.result("task.start", { description: "retry me", idempotency_key: "k-start-1" });
    assert.deepEqual(again, first, "the first answer, as it was");
    assert.equal((await s.result("task.list", {})).tasks.length, 1, "one task, not two");
    await s.close();
    const fresh = serve();
    const later = await fresh.result("task.start", { keywords: undefined, description: "retry me", idempotency_key: "k-start-1" });
    assert.equal(later.task.task_id, first.task.task_id, "kept in memory.db: a new process answers the same");
    assert.equal((await fresh.result("task.list", {})).tasks.length, 1);
    const other = await fresh.result("task.start", { description: "retry me", idempotency_key: "k-start-2" });
    assert.notEqual(other.task.task_id, first.task.task_id, "another key is another call");
  });

  test("the same key with other params, or for another method, is idempotency_conflict and changes nothing", async () => {
    const s = serve();
    await s.result("task.start", { description: "conflicts" });
    const saved = await s.result("memory.save", { type: "note", title: "one", content: "a", idempotency_key: "k-save" });
    assert.equal((await s.result("memory.save", { type: "note", title: "one", content: "a", idempotency_key: "k-save" })).id, saved.id);
    const e = await s.error("memory.save", { type: "note", title: "two", content: "b", idempotency_key: "k-save" });
    assert.equal(e.data.kind, "idempotency_conflict");
    assert.equal(e.code, -32015);
    assert.deepEqual([e.data.key, e.data.method, e.data.first_method], ["k-save", "memory.save", "memory.save"]);
    assert.match(e.message, /already used for memory\.save with other params.*use a new key/);
    const m = await s.error("task.checkpoint", { summary: "s", next_step: "n", idempotency_key: "k-save" });
    assert.equal(m.data.kind, "idempotency_conflict");
    assert.equal(m.data.first_method, "memory.save");
    assert.equal((await s.result("memory.search", { query: "two" })).hits.length, 0, "the refused call saved nothing");
    assert.equal((await s.result("task.status", {})).task.status, "in_progress", "nor did the refused checkpoint pause the task");
  });

  test("a checkpoint retried with its key is saved once; a failed call keeps nothing; a read method takes no key", async () => {
    const s = serve();
    await s.result("task.start", { description: "checkpoint once" });
    const cp = await s.result("task.checkpoint", { summary: "s", next_step: "n", idempotency_key: "k-cp" });
    const again = await s.result("task.checkpoint", { summary: "s", next_step: "n", idempotency_key: "k-cp" });
    assert.equal(again.memory_id, cp.memory_id);
    assert.equal(again.text, cp.text);
    const refused = await s.error("writes.enable", { reason: "edit", idempotency_key: "k-grant" });
    assert.equal(refused.data.kind, "conflict", "the task is paused");
    await s.result("task.resume", {});
    const granted = await s.result("writes.enable", { reason: "edit", idempotency_key: "k-grant" });
    assert.equal(granted.task.access_mode, "writable", "a refusal kept nothing: the call runs again");
    await s.result("writes.require", { action: "edit a" });
    await s.result("turn.end", {});
    const gate = await s.error("writes.require", { action: "edit a", idempotency_key: "k-gate" });
    assert.equal(gate.data.kind, "invalid_params", "the gate check takes no key: it answers for now, never from a kept answer");
    const read = await s.error("task.status", { idempotency_key: "k-read" });
    assert.equal(read.data.kind, "invalid_params");
    assert.equal((await s.error("task.start", { description: "x", idempotency_key: "" })).data.field, "idempotency_key");
    const d = await s.result("system.describe", {});
    assert.deepEqual(d.idempotency, { param: "idempotency_key", window_seconds: 86400, max_chars: 200 });
  });
});
