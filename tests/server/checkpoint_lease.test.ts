/**
 * On a root on a libSQL server: a checkpoint that fails while the server is unreachable ends the
 * lease for good: task.status reads read_only in a new runner process once the server is back, and
 * a progress checkpoint that replays the pending one applies it (the pause, the end of the lease).
 * Also when the runner could not even open the root. Through the compiled binary.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary, Server } from "../support/server.ts";
import { sqldMissing, startSqld } from "../support/sqld.ts";

const runner = (url: string, stateDir: string) => new Server({ name: "binary", argv: [BINARY] }, ["serve", "--store", url, "--project", "p", "--state-dir", stateDir]);

describe("a failed checkpoint on a server store", { skip: sqldMissing() }, () => {
  test("server unreachable during the checkpoint: a new runner sees read_only once it is back; a progress checkpoint's replay pauses the task and keeps the lease ended", async () => {
    requireBinary();
    const own = await startSqld();
    const state = tempDir();
    const servers: Server[] = [];
    try {
      const s = runner(own.url, state);
      servers.push(s);
      await s.result("task.start", { description: "outage" });
      await s.result("writes.enable", { reason: "edit" });
      await own.kill();
      const cp = await s.error("task.checkpoint", { summary: "half", next_step: "rest" });
      assert.equal(cp.data.kind, "checkpoint_write_error");
      await own.start();
      const other = runner(own.url, state);
      servers.push(other);
      const st = await other.result("task.status", {});
      assert.equal(st.task.access_mode, "read_only", "the pending checkpoint ended the lease, seen from another process");
      assert.equal(st.task.lease, null);
      const progress = await s.result("task.checkpoint", { summary: "on", next_step: "more", kind: "progress" });
      assert.equal(progress.task.status, "paused", "the replayed pause checkpoint paused the task");
      assert.equal(existsSync(join(state, "pending_checkpoint.json")), false);
      assert.equal((await other.error("writes.require", { action: "edit a" })).data.kind, "write_gate_violation");
      assert.ok((await other.result("task.status", {})).task.lease_log.some((e: { event: string }) => e.event === "revoked"));
    } finally {
      for (const x of servers) await x.close();
      await own.stop();
      removeDir(state);
    }
  });

  test("a runner that cannot reach the server to open the root: the checkpoint still ends the lease (the marker), and the gate refuses once the server is back", async () => {
    requireBinary();
    const own = await startSqld();
    const state = tempDir();
    const servers: Server[] = [];
    try {
      const s = runner(own.url, state);
      servers.push(s);
      await s.result("task.start", { description: "outage at open" });
      await s.result("writes.enable", { reason: "edit" });
      await s.close();
      await own.kill();
      const cold = runner(own.url, state);
      servers.push(cold);
      const cp = await cold.error("task.checkpoint", { summary: "half", next_step: "rest" });
      assert.equal(cp.data.kind, "checkpoint_write_error", JSON.stringify(cp));
      assert.ok(existsSync(join(state, "pending_checkpoint.json")), "the marker is on the runner's disk");
      await own.start();
      const back = runner(own.url, state);
      servers.push(back);
      assert.equal((await back.error("writes.require", { action: "edit a" })).data.kind, "write_gate_violation");
      assert.equal((await back.result("task.status", {})).task.access_mode, "read_only");
      const resumed = await back.result("task.resume", {});
      assert.equal(resumed.task.turn_index, 2);
      assert.equal(existsSync(join(state, "pending_checkpoint.json")), false);
    } finally {
      for (const x of servers) if (x.child.exitCode === null && x.child.signalCode === null) await x.close();
      await own.stop();
      removeDir(state);
    }
  });
});
