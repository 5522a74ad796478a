/**
 * A checkpoint's record commits with the task state and its search index rows follow in the
 * writer's next transaction (src/memory/store.ts, `memory_index_pending`): through the real
 * database, a search right after the checkpoint finds it (with the Worker searcher and in
 * process); the follow-up never sent (a crash between the two commits) leaves the number on the
 * mark, and the next search, in this process or after a reopen, indexes it and finds it, once.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { INDEX_PENDING_KEY } from "../../src/memory/store.ts";
import { Root } from "../../src/root/root.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

const pending = async (root: Root): Promise<string | null> => {
  const v = (await root.db.read({ sql: "SELECT value FROM root_meta WHERE key = ?", args: [INDEX_PENDING_KEY] })).rows[0]?.value;
  return v === undefined ? null : String(v);
};

describe("a checkpoint's index rows after its commit", () => {
  for (const searchInWorker of [true, false]) {
    test(`search right after a checkpoint finds it (search ${searchInWorker ? "in the Worker" : "in process"})`, async () => {
      const dir = tempDir();
      const root = await Root.open(dir, { searchInWorker });
      try {
        await root.contract.startTask("deferred index");
        for (let i = 0; i < 5; i++) {
          const word = `zorblax${i}`;
          const cp = await root.contract.checkpoint({ summary: `progress with ${word}`, next_step: "go on", kind: "progress" });
          const hits = (await root.memory.search(word)).hits;
          assert.deepEqual(hits.map((h) => h.id), [cp.memory_id], `checkpoint ${i} is found at once`);
        }
        assert.equal(await pending(root), "[]", "every follow-up took its number off the mark");
      } finally {
        await root.close();
        removeDir(dir);
      }
    });
  }

  test("checkpoints back to back: their index rows go in batches, none starved, every one found", async () => {
    const dir = tempDir();
    const root = await Root.open(dir);
    try {
      await root.contract.startTask("deferred index, batches");
      const made: string[] = [];
      for (let i = 0; i < 40; i++) made.push((await root.contract.checkpoint({ summary: `batch word wibblequark number ${i}`, next_step: "go on", kind: "progress" })).memory_id);
      await root.memory.indexSettled();
      const waiting = JSON.parse((await pending(root)) ?? "[]") as number[];
      assert.ok(waiting.length < 16, `at most one batch waits (${waiting.length})`);
      const found: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await root.memory.search("wibblequark", { limit: 50, cursor });
        found.push(...page.hits.map((h) => h.id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      assert.deepEqual(found.sort(), [...made].sort(), "each checkpoint found once");
      assert.equal(await pending(root), "[]");
    } finally {
      await root.close();
      removeDir(dir);
    }
  });

  test("the follow-up never sent (a crash between the commits): the next search and a reopened root find it, indexed once", async () => {
    const dir = tempDir();
    let id = "";
    const first = await Root.open(dir, { searchInWorker: false });
    try {
      await first.contract.startTask("deferred index, crash");
      first.memory.indexSaved = () => {}; // as if the process died after the commit
      id = (await first.contract.checkpoint({ summary: "the word quuxolite only here", next_step: "go on", kind: "progress" })).memory_id;
      assert.equal(await pending(first), `[${Number(id.slice(2))}]`, "the mark names the record");
    } finally {
      await first.close();
    }
    const root = await Root.open(dir);
    try {
      assert.deepEqual((await root.memory.search("quuxolite")).hits.map((h) => h.id), [id], "found after the reopen");
      assert.equal(await pending(root), "[]");
      assert.deepEqual((await root.memory.search("quuxolite")).hits.map((h) => h.id), [id], "indexed once");
      const cp = await root.contract.checkpoint({ summary: "and then frobnitz", next_step: "go on", kind: "progress" });
      assert.deepEqual((await root.memory.search("frobnitz")).hits.map((h) => h.id), [cp.memory_id]);
      assert.deepEqual((await root.memory.search("quuxolite")).hits.map((h) => h.id), [id]);
    } finally {
      await root.close();
      removeDir(dir);
    }
  });

  test("a checkpoint whose commit fails leaves nothing to index, and the number reused is indexed with its own record", async () => {
    const dir = tempDir();
    const root = await Root.open(dir, { searchInWorker: false });
    try {
      await root.contract.startTask("deferred index, rollback");
      const seen: string[] = [];
      const state = root.state as unknown as { transact: (fn: (tx: unknown) => Promise<unknown>) => Promise<unknown> };
      const real = state.transact.bind(root.state);
      let fail = true;
      state.transact = (fn) =>
        real(async (tx) => {
          const out = await fn(tx);
          if (fail) {
            fail = false;
            throw new Error("commit refused (test)");
          }
          return out;
        });
      await assert.rejects(root.contract.checkpoint({ summary: "the word glimmerdrop rolled back", next_step: "go on", kind: "progress" }));
      state.transact = real;
      await root.contract.resume();
      const cp = await root.contract.checkpoint({ summary: "the word brightfern committed", next_step: "go on", kind: "progress" });
      seen.push(...(await root.memory.search("brightfern")).hits.map((h) => h.id));
      assert.ok(seen.includes(cp.memory_id), "the committed checkpoint is found");
      assert.equal((await root.memory.search("glimmerdrop")).hits.some((h) => h.id === cp.memory_id), false, "the rolled-back text is not indexed under the number");
      assert.equal(await pending(root), "[]");
    } finally {
      await root.close();
      removeDir(dir);
    }
  });
});
