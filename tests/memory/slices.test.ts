/**
 * The memory index in slices (src/memory/slices.ts) and the search over them: every record lands
 * in the slice of its number, paging goes on past the ranked window, concurrent imports never
 * share a number, and an old root's memories are indexed into slices on first open, once.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { Database } from "../../src/db/database.ts";
import { MIGRATIONS, migrate } from "../../src/db/schema.ts";
import { LIST_SLICES_SQL, slicesOf } from "../../src/memory/slices.ts";
import { Root, type RootOptions } from "../../src/root/root.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

/** A root whose index slices hold `size` memories each (set before any memory is saved). */
async function rootWithSlices(dir: string, size: number, options: RootOptions = {}): Promise<Root> {
  const first = await Root.open(dir, { searchInWorker: false });
  await first.db.execute({ sql: "UPDATE root_meta SET value = ? WHERE key = 'memory_slice_size'", args: [String(size)] });
  await first.close();
  return Root.open(dir, { searchInWorker: false, ...options });
}

async function everyPage(root: Root, query: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await root.memory.search(query, { limit, cursor });
    assert.ok(page.hits.length <= limit);
    ids.push(...page.hits.map((h) => h.id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return ids;
}

describe("the memory index in slices", () => {
  test("an import across slice boundaries indexes every record in the slice of its number", async () => {
    const dir = tempDir();
    const root = await rootWithSlices(dir, 7);
    try {
      const ids = await root.memory.saveMany(Array.from({ length: 30 }, (_, i) => ({ type: "note", title: `import ${i}`, content: `接口适配 record${i}`, keywords: [] })));
      await root.memory.save({ type: "note", title: "one more", content: "接口 record30", keywords: [] });
      assert.deepEqual(slicesOf((await root.db.execute(LIST_SLICES_SQL)).rows), [4, 3, 2, 1, 0], "31 memories in slices of 7");
      for (const i of [0, 6, 7, 13, 14, 29]) assert.deepEqual((await root.memory.search(`record${i}`)).hits.map((h) => h.id), [ids[i]]);
      assert.equal((await everyPage(root, "接口", 4)).length, 31);
      // a slice's table holds only its own numbers
      const inFirst = (await root.db.execute("SELECT rowid FROM memory_slice_1 WHERE memory_slice_1 MATCH 'record7 OR record8 OR record0 OR record14'")).rows.map((r) => Number(r.rowid));
      assert.deepEqual(inFirst.sort((a, b) => a - b), [8, 9]);
    } finally {
      await root.close();
      removeDir(dir);
    }
  });

  test("paging goes on past the ranked window, newest first, and finds every match exactly once", async () => {
    const dir = tempDir();
    const root = await rootWithSlices(dir, 6, { testOnlySearchWindow: 5 });
    try {
      const items = Array.from({ length: 40 }, (_, i) => ({
        type: "note",
        title: i % 10 === 4 ? "alpha in the title" : `record ${i}`,
        content: i % 4 === 3 ? "nothing to see" : `the word alpha appears here ${i}`,
        keywords: [],
      }));
      const ids = await root.memory.saveMany(items);
      const matching = ids.filter((_, i) => i % 10 === 4 || i % 4 !== 3);
      for (const limit of [1, 3, 4, 7, 50]) {
        const found = await everyPage(root, "alpha", limit);
        assert.equal(new Set(found).size, found.length, `limit ${limit}: no record twice`);
        assert.deepEqual([...found].sort(), [...matching].sort(), `limit ${limit}: every match, nothing else`);
        // the first five are the window (the five newest matches), after them strictly older ones, newest first
        const newestFive = [...matching].sort().reverse().slice(0, 5);
        assert.deepEqual([...found.slice(0, 5)].sort(), [...newestFive].sort(), `limit ${limit}: the window is the newest five`);
        const rest = found.slice(5);
        assert.deepEqual(rest, [...rest].sort().reverse(), `limit ${limit}: after the window, newest first`);
      }
      // within the window, a title match ranks first
      const first = await root.memory.search("alpha", { limit: 5 });
      assert.equal(first.hits[0]!.id, ids[34], "the title match leads the window");
    } finally {
      await root.close();
      removeDir(dir);
    }
  });

  test("a cursor that is not one a search gave is refused, naming what to do", async () => {
    const dir = tempDir();
    const root = await Root.open(dir, { searchInWorker: false });
    try {
      await assert.rejects(root.memory.search("alpha", { cursor: "x1" }), /not a next_cursor value/);
    } finally {
      await root.close();
      removeDir(dir);
    }
  });

  test("two servers importing into one root at once get distinct numbers, and every record is searchable", async () => {
    const dir = tempDir();
    const a = await Root.open(dir);
    const b = await Root.open(dir);
    try {
      const batch = (who: string, round: number) => Array.from({ length: 50 }, (_, i) => ({ type: "note", title: `${who} ${round} ${i}`, content: `shared term ${who}x${round}x${i}`, keywords: [] }));
      const all: string[] = [];
      for (let round = 0; round < 6; round++) {
        const [x, y] = await Promise.all([a.memory.saveMany(batch("a", round)), b.memory.saveMany(batch("b", round))]);
        all.push(...x, ...y);
      }
      assert.equal(new Set(all).size, 600, "no number given twice");
      assert.equal(Number((await a.db.execute("SELECT COUNT(*) AS n FROM memories")).rows[0]!.n), 600);
      for (const [who, round, i] of [["a", 0, 0], ["b", 5, 49], ["a", 3, 17]] as const) {
        const hits = (await a.memory.search(`${who}x${round}x${i}`)).hits;
        assert.equal(hits.length, 1, `${who} ${round} ${i} is indexed once`);
        assert.equal(hits[0]!.title, `${who} ${round} ${i}`);
      }
    } finally {
      await a.close();
      await b.close();
      removeDir(dir);
    }
  });

  test("a search sees a slice another connection made after its last search (the slice list is read again after a commit)", async () => {
    const dir = tempDir();
    const searcher = await rootWithSlices(dir, 3, { searchInWorker: true });
    const writer = await Root.open(dir, { searchInWorker: false });
    try {
      await searcher.memory.saveMany(Array.from({ length: 2 }, (_, i) => ({ type: "note", title: `first ${i}`, content: "lattice word", keywords: [] })));
      assert.equal((await everyPage(searcher, "lattice", 10)).length, 2);
      assert.equal((await everyPage(searcher, "lattice", 10)).length, 2, "asked again with nothing new");
      // another connection fills the first slice and makes two more
      await writer.memory.saveMany(Array.from({ length: 6 }, (_, i) => ({ type: "note", title: `later ${i}`, content: `lattice word ${i}`, keywords: [] })));
      assert.deepEqual(slicesOf((await writer.db.execute(LIST_SLICES_SQL)).rows), [2, 1, 0]);
      assert.equal((await everyPage(searcher, "lattice", 10)).length, 8, "the new slices are searched");
    } finally {
      await searcher.close();
      await writer.close();
      removeDir(dir);
    }
  });

  test("an old root's memories are indexed into slices on first open, once, and the old index is dropped", async () => {
    const dir = tempDir();
    try {
      // a root as 0.1.0 left it: schema up to version 3, memories in the old index only
      const old = await Database.open(pathToFileURL(join(dir, "memory.db")).href, { writes: "inline" });
      await migrate(old, MIGRATIONS.filter((m) => m.version <= 3));
      for (let i = 1; i <= 1203; i++) {
        await old.execute({
          sql: "INSERT INTO memories(type, title, content, keywords, task_id, raw_ref, sha256, size, created_at) VALUES ('note', ?, ?, '[]', NULL, NULL, 'x', 1, '2026-01-01T00:00:00Z')",
          args: [`old ${i}`, i % 2 ? `供应商 entry${i}` : `서버 entry${i}`],
        });
      }
      await old.close();
      const root = await Root.open(dir, { searchInWorker: false });
      try {
        const tables = (await root.db.execute("SELECT name FROM sqlite_master WHERE name IN ('memories_fts', 'memory_index')")).rows;
        assert.deepEqual(tables, [], "the old index and the first draft of the new one are gone");
        assert.equal((await everyPage(root, "供应商", 100)).length, 602);
        assert.equal((await everyPage(root, "서버", 100)).length, 601);
        assert.deepEqual((await root.memory.search("entry1203")).hits.map((h) => h.id), ["S_1203"]);
        const next = await root.memory.save({ type: "note", title: "new", content: "entry1204", keywords: [] });
        assert.equal(next.record.id, "S_1204");
      } finally {
        await root.close();
      }
      // opening again indexes nothing twice
      const again = await Root.open(dir, { searchInWorker: false });
      try {
        assert.equal((await everyPage(again, "供应商", 100)).length, 602);
        assert.equal((await again.db.execute("SELECT value FROM root_meta WHERE key = 'memory_index_from'")).rows[0]!.value, "done");
      } finally {
        await again.close();
      }
    } finally {
      removeDir(dir);
    }
  });
});
