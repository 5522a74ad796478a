/**
 * Forgetting and versions through the compiled binary (local root, or sqld under
 * LONGRUN_TEST_STORE=sqld): a forgotten memory is gone from search, memory.get, the FTS index
 * (read with SQL) and raw_data, and a replayed save does not bring it back; the agent side cannot
 * forget; memory.update makes a new version that search shows alone.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { INLINE_BODY_BYTES } from "../../src/core/limits.ts";
import { RpcFixture } from "../ledger/rpc.ts";
import { serveEachTest } from "../support/each_root.ts";
import { openTestDb, testStoreOf } from "../support/state.ts";

describe("memory.forget", () => {
  const serve = serveEachTest();

  test("a forgotten memory is gone from search, get, the index and raw_data, and a replayed save does not bring it back", async () => {
    const s = serve();
    await s.result("task.start", { description: "forget a note" });
    const long = "zanzibarword " + "x".repeat(INLINE_BODY_BYTES + 10);
    const saved = await s.result("memory.save", { type: "note", title: "secret zanzibar", content: long, idempotency_key: "k-forget" });
    const many = await s.result("memory.save_many", { items: [{ type: "note", title: "quokka", content: "quokka words" }], idempotency_key: "k-many" });
    assert.equal((await s.result("memory.search", { query: "zanzibar" })).hits.length, 1);
    const ref = saved.record.raw_ref as string;
    assert.ok(ref, "the long body went to raw_data");
    const out = await s.result("memory.forget", { ids: [saved.id, many.ids[0]], reason: "the user asked" });
    assert.deepEqual(out.forgotten, [saved.id, many.ids[0]]);
    assert.equal((await s.result("memory.search", { query: "zanzibar" })).hits.length, 0);
    assert.equal((await s.result("memory.search", { query: saved.id })).hits.length, 0, "not by its id either");
    assert.equal((await s.result("memory.search", { query: "quokka" })).hits.length, 0);
    assert.equal((await s.error("memory.get", { id: saved.id })).data.kind, "not_found");
    const db = await openTestDb(serve.dir());
    try {
      const seq = Number(saved.id.slice(2));
      assert.equal((await db.execute({ sql: "SELECT rowid FROM memory_slice_0 WHERE memory_slice_0 MATCH 'zanzibarword'", args: [] })).rows.length, 0, "gone from the FTS index");
      const row = (await db.execute({ sql: "SELECT title, content, raw_ref FROM memories WHERE seq = ?", args: [seq] })).rows[0]!;
      assert.deepEqual([row.title, row.content, row.raw_ref], ["", "", null], "the row keeps no text");
      const tomb = (await db.execute({ sql: "SELECT by, reason FROM memory_tombstones WHERE seq = ?", args: [seq] })).rows[0]!;
      assert.deepEqual([tomb.by, tomb.reason], ["host:stdio", "the user asked"]);
      if (testStoreOf(serve.dir())) assert.equal((await db.execute({ sql: "SELECT 1 FROM blobs WHERE ref = ?", args: [ref] })).rows.length, 0, "the body's blob row is gone");
      else assert.equal(existsSync(join(serve.dir(), ref)), false, "the raw_data file is gone");
    } finally {
      await db.close();
    }
    // late writes: the same calls replayed with their idempotency keys
    const replay = await s.result("memory.save", { type: "note", title: "secret zanzibar", content: long, idempotency_key: "k-forget" });
    assert.deepEqual(replay, { id: saved.id, created: false, forgotten: true });
    const replayMany = await s.result("memory.save_many", { items: [{ type: "note", title: "quokka", content: "quokka words" }], idempotency_key: "k-many" });
    assert.deepEqual(replayMany.ids, many.ids);
    assert.equal((await s.result("memory.search", { query: "zanzibar" })).hits.length, 0, "still gone");
    assert.equal((await s.result("memory.search", { query: "quokka" })).hits.length, 0, "still gone");
    assert.deepEqual((await s.result("memory.forget", { ids: [saved.id] })).already, [saved.id], "forgetting again is a no-op");
  });

  test("a checkpoint record and an unknown id are refused, and nothing changes", async () => {
    const s = serve();
    await s.result("task.start", { description: "keep checkpoints" });
    const note = await s.result("memory.save", { type: "note", title: "kept", content: "kept words" });
    const cp = await s.result("task.checkpoint", { summary: "s", next_step: "n" });
    const e = await s.error("memory.forget", { ids: [note.id, cp.memory_id] });
    assert.equal(e.data.kind, "transition_error");
    assert.match(e.message, /checkpoint or outcome record/);
    assert.equal((await s.error("memory.forget", { ids: ["S_9999"] })).data.kind, "not_found");
    assert.equal((await s.result("memory.search", { query: "kept" })).hits.length, 1, "all or none: the note stays");
  });

  test("forget by query: what search finds goes (dry_run lists it first), checkpoints are skipped, and the rest stays", async () => {
    const s = serve();
    await s.result("task.start", { description: "forget what the user said about walruses" });
    const a = await s.result("memory.save", { type: "note", title: "walrus one", content: "the walrus words" });
    const b = await s.result("memory.save", { type: "note", title: "walrus two", content: "more walrus words" });
    const c = await s.result("memory.save", { type: "fact", title: "walrus fact", content: "a walrus fact" });
    const other = await s.result("memory.save", { type: "note", title: "penguin", content: "penguin words" });
    const cp = await s.result("task.checkpoint", { summary: "walrus progress", next_step: "n" });
    const preview = await s.result("memory.forget", { query: "walrus", type: "note", dry_run: true });
    assert.deepEqual([[...preview.matched].sort(), preview.forgotten, preview.more], [[a.id, b.id].sort(), [], false]);
    assert.equal((await s.result("memory.search", { query: "walrus", type: "note" })).hits.length, 2, "a dry run forgets nothing");
    const out = await s.result("memory.forget", { query: "walrus", reason: "the user asked" });
    assert.deepEqual([...out.forgotten].sort(), [a.id, b.id, c.id].sort());
    assert.deepEqual(out.skipped, [cp.memory_id], "the checkpoint recovery reads is left");
    assert.deepEqual((await s.result("memory.search", { query: "walrus" })).hits.map((h: { id: string }) => h.id), [cp.memory_id]);
    assert.equal((await s.result("memory.get", { id: other.id })).record.content, "penguin words");
    const both = await s.error("memory.forget", { ids: [other.id], query: "penguin" });
    assert.deepEqual([both.data.kind, both.data.field], ["invalid_params", "ids"]);
    assert.equal((await s.error("memory.forget", {})).data.kind, "invalid_params");
  });

  test("memory.update: search shows the new version only; the old stays readable, marked superseded", async () => {
    const s = serve();
    await s.result("task.start", { description: "correct a note" });
    const old = await s.result("memory.save", { type: "decision", title: "db choice", content: "we use postgres" });
    const upd = await s.result("memory.update", { id: old.id, content: "we use sqlite after all" });
    assert.notEqual(upd.id, old.id);
    assert.equal(upd.supersedes, old.id);
    assert.deepEqual((await s.result("memory.search", { query: "db choice" })).hits.map((h: { id: string }) => h.id), [upd.id]);
    assert.equal((await s.result("memory.search", { query: "postgres" })).hits.length, 0);
    const oldRec = (await s.result("memory.get", { id: old.id })).record;
    assert.equal(oldRec.superseded_by, upd.id);
    assert.equal(oldRec.content, "we use postgres");
    const newRec = (await s.result("memory.get", { id: upd.id })).record;
    assert.deepEqual([newRec.supersedes, newRec.type, newRec.title], [old.id, "decision", "db choice"]);
    const again = await s.error("memory.update", { id: old.id, content: "x" });
    assert.equal(again.data.kind, "transition_error");
    assert.match(again.message, new RegExp(`update ${upd.id}`));
  });

  test("forgetting one version forgets every version of the record: none stays readable by id", async () => {
    const s = serve();
    await s.result("task.start", { description: "versions" });
    const v1 = await s.result("memory.save", { type: "note", title: "address", content: "lives at 12 zanzibar road" });
    const v2 = await s.result("memory.update", { id: v1.id, content: "lives at 14 zanzibar road" });
    const v3 = await s.result("memory.update", { id: v2.id, content: "lives at 16 zanzibar road" });
    const other = await s.result("memory.save", { type: "note", title: "unrelated", content: "zanzibar is an island" });
    const out = await s.result("memory.forget", { ids: [v2.id], reason: "the user asked" });
    assert.deepEqual([...out.forgotten].sort(), [v1.id, v2.id, v3.id].sort());
    for (const id of [v1.id, v2.id, v3.id]) assert.equal((await s.error("memory.get", { id })).data.kind, "not_found", id);
    assert.deepEqual((await s.result("memory.search", { query: "zanzibar" })).hits.map((h: { id: string }) => h.id), [other.id]);
  });
});

describe("memory.forget is the host's", () => {
  test("the agent side is refused (unauthorized) and the record stays", async () => {
    const f = new RpcFixture();
    try {
      await f.ok("task.start", { description: "t" });
      const saved = await f.ok("memory.save", { type: "note", title: "evidence", content: "evidence words" });
      assert.equal((await f.fail("memory.forget", { ids: [saved.id] })).data.kind, "unauthorized");
      assert.equal((await f.fail("memory.forget", { query: "evidence" })).data.kind, "unauthorized");
      assert.equal((await f.ok("memory.get", { id: saved.id })).record.content, "evidence words");
    } finally {
      await f.close();
    }
  });
});
