import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { InvalidRootError, Root } from "../../src/root/root.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

describe("I4: one root binds state and memory", () => {
  test("the default memory binds to the task's root: everything lands under it, at the documented paths", async () => {
    const dir = tempDir();
    const root = await Root.open(dir);
    try {
      await root.contract.startTask("t");
      await root.contract.checkpoint({ summary: "s", next_step: "n" });
      await root.memory.save({ type: "note", title: "long", content: "x".repeat(20_000), keywords: [] });
      assert.ok(existsSync(join(dir, ".longrun")));
      assert.equal(Number((await root.db.execute("SELECT COUNT(*) AS n FROM tasks")).rows[0]!.n), 1, "the task state is in the root's database");
      assert.ok(existsSync(join(dir, "memory.db")));
      assert.ok(existsSync(join(dir, "raw_data")));
      assert.equal(root.paths.pending, join(dir, ".longrun", "pending_checkpoint.json"));
      assert.equal(root.db.url, "file://" + join(dir, "memory.db"));
      const rs = await root.db.execute("SELECT COUNT(*) AS n FROM memories");
      assert.equal(Number(rs.rows[0]!.n), 2);
    } finally {
      await root.close();
      removeDir(dir);
    }
  });

  test("two roots in one process are fully isolated; resume finds no memory rather than another project's", async () => {
    const [da, db] = [tempDir(), tempDir()];
    const [a, b] = [await Root.open(da), await Root.open(db)];
    try {
      const ta = await a.contract.startTask("project alpha supplier work");
      await a.contract.enableWrites({ reason: "x", granted_by: "host" });
      await a.contract.checkpoint({ summary: "alpha progress", next_step: "alpha next" });
      await a.contract.resume();
      await a.contract.enableWrites({ reason: "granted in A", granted_by: "host" });
      const tb = await b.contract.startTask("project alpha supplier work");
      await assert.rejects(b.contract.requireWritable("edit x"), { kind: "write_gate_violation" }, "a grant in A does not write in B");
      await a.contract.requireWritable("edit x");
      assert.deepEqual(tb.memories, [], "B's search must not see A's memory");
      assert.notEqual(ta.task.task_id, tb.task.task_id);
      const rb = await b.contract.resume();
      assert.deepEqual(rb.memories, []);
      assert.equal((await b.memory.search("alpha")).hits.length, 0);
      assert.equal((await a.memory.search("alpha")).hits.length, 1);
      assert.equal((await a.contract.status()).task?.task_id, ta.task.task_id);
      assert.equal((await b.contract.status()).task?.task_id, tb.task.task_id);
    } finally {
      await a.close();
      await b.close();
      removeDir(da);
      removeDir(db);
    }
  });

  test("a memory id is per root: both roots start at S_0001", async () => {
    const [da, db] = [tempDir(), tempDir()];
    const [a, b] = [await Root.open(da, { searchInWorker: false }), await Root.open(db, { searchInWorker: false })];
    try {
      const x = await a.memory.save({ type: "note", title: "a", content: "a", keywords: [] });
      const y = await b.memory.save({ type: "note", title: "b", content: "b", keywords: [] });
      assert.equal(x.record.id, "S_0001");
      assert.equal(y.record.id, "S_0001");
      assert.equal((await b.memory.get("S_0001"))?.title, "b");
    } finally {
      await a.close();
      await b.close();
      removeDir(da);
      removeDir(db);
    }
  });

  const bad: [string, (scratch: string) => string][] = [
    ["a relative path", () => "relative/dir"],
    ["a path that does not exist", () => "/nonexistent/longrun/root"],
    ["a file, not a directory", (scratch) => {
      writeFileSync(join(scratch, "f"), "x");
      return join(scratch, "f");
    }],
    ["an empty string", () => ""],
  ];
  for (const [name, make] of bad) {
    test(`a root that is ${name} is refused before anything is created`, async () => {
      const scratch = tempDir();
      try {
        const dir = make(scratch);
        await assert.rejects(Root.open(dir), (e: unknown) => e instanceof InvalidRootError && e.root === dir);
        if (dir.startsWith("/") && existsSync(dir)) assert.equal(existsSync(join(dir, ".longrun")), false);
      } finally {
        removeDir(scratch);
      }
    });
  }
});
