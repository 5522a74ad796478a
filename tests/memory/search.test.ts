import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { INLINE_BODY_BYTES, LIMITS } from "../../src/core/limits.ts";
import { Root } from "../../src/root/root.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

describe("memory search on libSQL FTS5", () => {
  let dir = "";
  let root: Root;
  const ids: Record<string, string> = {};

  before(async () => {
    dir = tempDir();
    root = await Root.open(dir);
    const save = async (key: string, title: string, content: string, type = "note") =>
      (ids[key] = (await root.memory.save({ type, title, content, keywords: [] })).record.id);
    await save("zh", "[LongRun Checkpoint]", "阶段：接口适配\n下一步：接入第二个供应商");
    await save("ko", "서버 작업", "오늘 서버를 재시작했다. 로그를 확인했다.");
    await save("en", "Payment adapters", "The payment adapters now retry timeouts twice.", "decision");
    await save("other", "Unrelated", "Gardening notes: tomatoes and basil.");
  });
  after(async () => {
    await root.close();
    removeDir(dir);
  });

  test("ids are S_0001-style and sequential in a root", () => {
    assert.deepEqual(Object.values(ids), ["S_0001", "S_0002", "S_0003", "S_0004"]);
  });

  test("a two-character Chinese word inside an unspaced sentence is found", async () => {
    const { hits } = await root.memory.search("接口");
    assert.deepEqual(hits.map((h) => h.id), [ids.zh]);
    assert.match(hits[0]!.snippet, /接口适配/);
  });

  test("a single Chinese character is found", async () => {
    assert.deepEqual((await root.memory.search("商")).hits.map((h) => h.id), [ids.zh]);
  });

  test("a Korean word with a particle attached is found by the bare word", async () => {
    assert.deepEqual((await root.memory.search("서버")).hits.map((h) => h.id), [ids.ko]);
    assert.deepEqual((await root.memory.search("로그")).hits.map((h) => h.id), [ids.ko]);
  });

  test("English words are found, stemmed", async () => {
    assert.deepEqual((await root.memory.search("adapter")).hits.map((h) => h.id), [ids.en]);
    assert.deepEqual((await root.memory.search("retrying")).hits.map((h) => h.id), [ids.en]);
  });

  test("an exact memory id is found", async () => {
    const { hits } = await root.memory.search(ids.other!);
    assert.equal(hits[0]?.id, ids.other);
  });

  test("terms are OR'ed and a record matching more of them ranks first", async () => {
    const { hits } = await root.memory.search("payment 서버 timeouts");
    assert.deepEqual(hits.map((h) => h.id), [ids.en, ids.ko]);
    assert.ok(hits[0]!.score > hits[1]!.score);
  });

  test("nothing found is an empty page, not an error", async () => {
    assert.deepEqual(await root.memory.search("kubernetes"), { hits: [], next_cursor: null });
    assert.deepEqual(await root.memory.search("!!! ???"), { hits: [], next_cursor: null });
  });

  test("FTS operators in a query are taken literally, not as syntax", async () => {
    const { hits } = await root.memory.search('adapters" OR "basil NEAR(');
    assert.ok(Array.isArray(hits));
  });

  test("the type filter narrows the hits", async () => {
    assert.deepEqual((await root.memory.search("adapters", { type: "note" })).hits, []);
    assert.equal((await root.memory.search("adapters", { type: "decision" })).hits.length, 1);
  });

  test("results are bounded by the limit and paginated with a cursor", async () => {
    const many = await Root.open(tempDir());
    try {
      for (let i = 0; i < 7; i++) await many.memory.save({ type: "note", title: `alpha ${i}`, content: "alpha body", keywords: [] });
      const p1 = await many.memory.search("alpha", { limit: 3 });
      const p2 = await many.memory.search("alpha", { limit: 3, cursor: p1.next_cursor! });
      const p3 = await many.memory.search("alpha", { limit: 3, cursor: p2.next_cursor! });
      assert.equal(p1.hits.length, 3);
      assert.equal(p2.hits.length, 3);
      assert.equal(p3.hits.length, 1);
      assert.equal(p3.next_cursor, null);
      const all = [...p1.hits, ...p2.hits, ...p3.hits].map((h) => h.id);
      assert.equal(new Set(all).size, 7);
      const big = await many.memory.search("alpha", { limit: 10_000 });
      assert.ok(big.hits.length <= LIMITS.search_limit);
    } finally {
      const d = many.dir;
      await many.close();
      removeDir(d);
    }
  });

  test("a long body is kept under raw_data/ with a generated name and a digest, and reads back whole", async () => {
    const body = "长文本 long body ".repeat(Math.ceil((INLINE_BODY_BYTES * 2) / 20));
    const { record } = await root.memory.save({ type: "note", title: "long", content: body, keywords: ["big"] });
    assert.ok(record.raw_ref);
    assert.match(record.raw_ref, /^raw_data\/m-[0-9a-f]{16}-[0-9a-f]{8}\.txt$/);
    const file = join(dir, record.raw_ref);
    assert.ok(existsSync(file));
    assert.equal(readFileSync(file, "utf8"), body);
    assert.equal(record.sha256, createHash("sha256").update(body).digest("hex"));
    assert.equal((await root.memory.get(record.id))?.content, body);
    assert.ok((await root.memory.search("长文本")).hits.some((h) => h.id === record.id));
  });

  test("a save with a dedupe key already used returns the first record and writes nothing", async () => {
    const a = await root.memory.save({ type: "note", title: "once", content: "x", keywords: [], dedupe_key: "k1" });
    const b = await root.memory.save({ type: "note", title: "twice", content: "y", keywords: [], dedupe_key: "k1" });
    assert.equal(a.created, true);
    assert.equal(b.created, false);
    assert.equal(b.record.id, a.record.id);
    assert.equal(b.record.title, "once");
  });

  test("over-long content is refused with limit_exceeded and nothing is written", async () => {
    const before = (await root.memory.search("overlong")).hits.length;
    await assert.rejects(
      root.memory.save({ type: "note", title: "overlong", content: "x".repeat(LIMITS.memory_content_chars + 1), keywords: [] }),
      (e: { kind?: string; data?: Record<string, unknown> }) =>
        e.kind === "limit_exceeded" && e.data?.field === "content" && e.data?.actual === LIMITS.memory_content_chars + 1,
    );
    assert.equal((await root.memory.search("overlong")).hits.length, before);
  });
});

describe("memory.save_many (an import)", () => {
  test("saves the records in one transaction, in order, each searchable, and all or none", async () => {
    const dir = tempDir();
    const root = await Root.open(dir);
    try {
      const items = Array.from({ length: 120 }, (_, i) => ({ type: "import", title: `record ${i}`, content: `body ${i} 接口适配 서버 ${i % 7 === 0 ? "x".repeat(INLINE_BODY_BYTES + 10) : ""}`, keywords: [`k${i}`] }));
      const ids = await root.memory.saveMany(items);
      assert.equal(ids.length, 120);
      assert.deepEqual(ids.slice(0, 3), ["S_0001", "S_0002", "S_0003"]);
      assert.equal((await root.memory.get(ids[7]!))?.content.length, items[7]!.content.length, "a long body reads back whole");
      assert.equal((await root.memory.search("接口", { limit: 50 })).hits.length, 50);
      assert.deepEqual((await root.memory.search("k42")).hits.map((h) => h.id), [ids[42]]);
      // one bad item: nothing of the batch is written
      await assert.rejects(root.memory.saveMany([{ type: "import", title: "ok", content: "fine", keywords: [] }, { type: "import", title: "t".repeat(LIMITS.short_text_chars + 1), content: "", keywords: [] }]), { kind: "limit_exceeded" });
      assert.equal(Number((await root.db.execute("SELECT COUNT(*) AS n FROM memories")).rows[0]!.n), 120);
    } finally {
      await root.close();
      removeDir(dir);
    }
  });
});
