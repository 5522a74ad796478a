/**
 * Memory locked past the busy timeout by another process (a real one, holding BEGIN IMMEDIATE),
 * then freed: the very next calls work. A statement that failed busy never poisons the connection.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { Root } from "../../src/root/root.ts";
import { holdWriteLock, REPO, removeDir, scriptArgv, tempDir, until } from "../support/helpers.ts";

const holdLock = holdWriteLock;

for (const mode of ["worker", "inline"] as const) {
  test(`after memory was locked past the timeout and freed, the first resume and checkpoint succeed (${mode} writes)`, async () => {
    const dir = tempDir();
    const root = await Root.open(dir, { lockTimeoutMs: 300, searchInWorker: mode === "worker" });
    try {
      const c = root.contract;
      await c.startTask("locked memory");
      await c.enableWrites({ reason: "go", granted_by: "host" });
      const release = await holdLock(join(dir, "memory.db"));
      try {
        await assert.rejects(c.checkpoint({ summary: "while locked", next_step: "retry" }), { kind: "checkpoint_write_error" });
        await assert.rejects(c.requireWritable("write a file"), { kind: "write_gate_violation" }, "the failed checkpoint ended the lease");
        await assert.rejects(root.memory.save({ type: "note", title: "locked", content: "x", keywords: [] }), { kind: "conflict" });
      } finally {
        await release();
      }
      // at once, no waiting: the connection that failed busy is as good as new
      const resumed = await c.resume();
      assert.ok(resumed.replayed, "the pending checkpoint was saved by the first resume");
      const saved = await root.memory.save({ type: "note", title: "after", content: "works", keywords: [] });
      assert.ok(saved.created);
      await c.enableWrites({ reason: "again", granted_by: "host" });
      const cp = await c.checkpoint({ summary: "after the lock", next_step: "go on" });
      assert.equal((await root.memory.get(cp.memory_id))?.content, cp.text);
    } finally {
      await root.close();
      removeDir(dir);
    }
  });
}
