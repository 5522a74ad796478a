/**
 * A failed checkpoint ends the lease, whatever made it fail, in this process and in every other
 * one, and the end holds through a later replay: through the compiled binary over stdio.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { holdWriteLock, tempDir } from "../support/helpers.ts";
import type { Server } from "../support/server.ts";
import { serveEachTest } from "../support/each_root.ts";

const holdLock = holdWriteLock;

describe("a failed checkpoint ends the lease", () => {
  const serve = serveEachTest(() => tempDir());
  const pendingPath = () => join(serve.dir(), ".longrun", "pending_checkpoint.json");

  async function leased(s: Server) {
    await s.result("task.start", { description: "lease under a failing checkpoint" });
    await s.result("writes.enable", { reason: "edit" });
    assert.equal((await s.result("writes.require", { action: "edit a.txt" })).turn, 1);
  }

  test("a checkpoint against a missing memory.db drafts the pending marker and ends the lease; with the file back, writes are refused", async () => {
    const s = serve();
    await leased(s);
    await s.close();
    renameSync(join(serve.dir(), "memory.db"), join(serve.dir(), "memory.db.away"));
    const s2 = serve();
    const e = await s2.error("task.checkpoint", { summary: "while gone", next_step: "put it back" });
    assert.equal(e.data.kind, "checkpoint_write_error");
    assert.equal(e.data.storage?.reason, "missing");
    assert.equal(e.data.lease_revoked, false, "the database could not record the end itself");
    assert.ok(existsSync(pendingPath()), "the pending file (or its empty marker) marks the failed checkpoint");
    assert.match(e.message, /lease/);
    await s2.close();
    renameSync(join(serve.dir(), "memory.db.away"), join(serve.dir(), "memory.db"));
    const s3 = serve();
    const refused = await s3.error("writes.require", { action: "edit a.txt" });
    assert.equal(refused.data.kind, "write_gate_violation", "the lease granted before the failed checkpoint is over");
    const st = await s3.result("task.status", {});
    assert.equal(st.task.access_mode, "read_only");
    const resumed = await s3.result("task.resume", {});
    assert.equal(resumed.task.turn_index, 2);
    assert.ok(!existsSync(pendingPath()), "resume clears the marker");
    await s3.result("writes.enable", { reason: "again" });
    assert.equal((await s3.result("writes.require", { action: "edit a.txt" })).turn, 2);
  });

  test("a checkpoint on a busy database keeps nothing open: status is read-only here and in a new process, and a later progress checkpoint's replay keeps the lease ended", async () => {
    const s = serve();
    await leased(s);
    const release = await holdLock(join(serve.dir(), "memory.db"));
    let e;
    try {
      // the checkpoint waits out the busy timeout (10 s), then its lease's end waits too
      const a = await s.answer(await s.write(JSON.stringify({ jsonrpc: "2.0", id: "cp", method: "task.checkpoint", params: { summary: "while locked", next_step: "retry" } }) + "\n").then(() => "cp"), 45_000);
      e = a.error as { data: Record<string, any> };
      assert.equal(e.data.kind, "checkpoint_write_error");
      assert.equal(e.data.pending_kept, true);
      const st = await s.result("task.status", {});
      assert.equal(st.task.access_mode, "read_only", "a pending pause is the end of the lease");
      assert.equal(st.task.lease, null);
      assert.ok(st.pending_checkpoint);
    } finally {
      await release();
    }
    const fresh = serve();
    const st2 = await fresh.result("task.status", {});
    assert.equal(st2.task.access_mode, "read_only", "also from a new process after the lock is released");
    await fresh.close();
    const cp = await s.result("task.checkpoint", { summary: "progress", next_step: "go on", kind: "progress" });
    assert.ok(!existsSync(pendingPath()), "the progress checkpoint replayed the pending one");
    assert.equal(cp.task.status, "paused", "the replayed pause checkpoint paused the task");
    const refused = await s.error("writes.require", { action: "edit a.txt" });
    assert.equal(refused.data.kind, "write_gate_violation", "the pause checkpoint's end of the lease is not lost");
    const log = (await s.result("task.status", {})).task.lease_log.map((l: { event: string }) => l.event);
    assert.ok(log.includes("revoked"), `lease_log records the end: ${JSON.stringify(log)}`);
    void readFileSync;
  });
});
