/**
 * A root on a small tmpfs, under a running `longrun serve` (the compiled binary): the disk filled
 * to several levels, the file system remounted read-only, the state directory made read-only.
 * Each time: a clear error with a kind the client can act on, never a "saved" claim for what is
 * not in memory, never a failed checkpoint with the lease still open (also for a separate hook
 * process), and full service once the fault is gone, without a restart.
 *
 * Needs root (mount); CI runs as root. Elsewhere these tests are skipped, saying why.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { canMount, removeDir, tempDir } from "../support/helpers.ts";
import { decision, hook } from "../support/hook_run.ts";
import { Server, TARGETS } from "../support/server.ts";
import { skipped } from "../support/skips.ts";

const MOUNT = canMount();
const skip = skipped("tests/faults/disk: storage faults", MOUNT ? false : "needs root and mount (a tmpfs to fill); CI runs as root");

/** Fills the file system of `dir` until only about `leaveBytes` are free; returns the filler's path. */
function fill(dir: string, leaveBytes: number): string {
  const filler = join(dir, "filler");
  const fd = openSync(filler, "w");
  const chunk = Buffer.alloc(4096, 7);
  try {
    for (;;) {
      const st = statfsSync(dir);
      const free = st.bavail * st.bsize;
      if (free <= leaveBytes) break;
      try {
        writeSync(fd, chunk, 0, Math.min(chunk.length, free - leaveBytes));
      } catch {
        break; // ENOSPC: full
      }
    }
  } finally {
    closeSync(fd);
  }
  return filler;
}

const write = (root: string) => ({ tool_name: "Write", tool_input: { file_path: join(root, "a.txt"), content: "x" }, tool_use_id: "t1" });
const denied = async (root: string) => {
  return decision(await hook(root, "PreToolUse", write(root))) === "deny";
};

describe("storage faults under a running server", { skip }, () => {
  let base = "";
  let mnt = "";
  let s: Server;
  beforeEach(() => {
    base = tempDir();
    mnt = join(base, "fs");
    mkdirSync(mnt);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt]);
    s = new Server(TARGETS[0]!, ["serve", "--root", mnt]);
  });
  afterEach(async () => {
    if (s.child.exitCode === null && s.child.signalCode === null) await s.close();
    execFileSync("umount", ["-l", mnt]);
    removeDir(base);
  });

  for (const leave of [0, 8 * 1024, 24 * 1024, 64 * 1024]) {
    test(`disk full with ${leave / 1024} KiB left: a checkpoint is saved (and in memory) or refused with the lease ended everywhere; space back, full service`, async () => {
      await s.result("task.start", { description: "work on a nearly full disk" });
      await s.result("memory.save", { type: "note", title: "warm", content: "w".repeat(20_000), keywords: ["warm"] });
      await s.result("writes.enable", { reason: "go" });
      assert.equal(await denied(mnt), false, "writable before the fault");
      const filler = fill(mnt, leave);
      const a = await s.call("task.checkpoint", { summary: "s".repeat(30_000), next_step: "continue" });
      if (leave === 0) assert.ok(a.error, "with no space at all the checkpoint cannot be saved");
      if (a.result) {
        const r = a.result as { memory_id: string; text: string };
        assert.equal((await s.result("memory.get", { id: r.memory_id })).record.content, r.text, "a returned checkpoint is in memory");
      } else {
        const e = a.error as { code: number; message: string; data: Record<string, any> };
        assert.equal(e.data.kind, "checkpoint_write_error", e.message);
        assert.equal(e.data.storage?.reason, "disk_full", "the client can tell the disk is full");
        assert.match(e.message, /Checkpoint not saved/);
      }
      // saved or not, the checkpoint ended the lease: in this server and in a separate hook process
      assert.equal((await s.error("writes.require", { action: "edit" })).data.kind, "write_gate_violation");
      assert.equal(await denied(mnt), true, "a hook process refuses too");
      const big = await s.call("memory.save", { type: "note", title: "big", content: "b".repeat(200_000), keywords: [] });
      if (big.error) assert.equal((big.error as { data: { kind: string; reason: string } }).data.reason, "disk_full");
      rmSync(filler);
      const resumed = await s.result("task.resume", {});
      assert.equal(resumed.pending_checkpoint, null, "nothing left pending after the resume");
      await s.result("writes.enable", { reason: "again" });
      const cp = await s.result("task.checkpoint", { summary: "after", next_step: "go on" });
      assert.equal((await s.result("memory.get", { id: cp.memory_id })).record.content, cp.text);
      assert.ok((await s.result("memory.save", { type: "note", title: "after", content: "b".repeat(200_000), keywords: [] })).id);
    });
  }

  test("a root on a read-only file system: storage_error read_only (never internal), a checkpoint not claimed saved; writable again, the same server gives full service", async () => {
    await s.result("task.start", { description: "read-only file system" });
    await s.result("memory.save", { type: "note", title: "before", content: "x", keywords: ["before"] });
    await s.close();
    execFileSync("mount", ["--bind", mnt, mnt]);
    execFileSync("mount", ["-o", "remount,bind,ro", mnt]);
    let mounted = true;
    try {
      s = new Server(TARGETS[0]!, ["serve", "--root", mnt]);
      const save = await s.error("memory.save", { type: "note", title: "ro", content: "x", keywords: [] });
      assert.equal(save.data.kind, "storage_error", save.message);
      assert.equal(save.data.reason, "read_only");
      assert.equal(save.data.path.startsWith(mnt), true, "it names the file");
      const c = await s.call("task.checkpoint", { summary: "on ro", next_step: "n" });
      assert.ok(c.error, "no checkpoint can be saved on a read-only root");
      const kind = (c.error as { data: { kind: string } }).data.kind;
      assert.ok(["checkpoint_write_error", "storage_error"].includes(kind), kind);
      assert.equal((await s.error("writes.require", { action: "edit" })).data.kind === "internal", false);
      execFileSync("mount", ["-o", "remount,bind,rw", mnt]); // the fault is gone: the same mount, writable again
      assert.equal((await s.result("memory.search", { query: "before" })).hits.length, 1);
      await s.result("task.resume", {});
      await s.result("writes.enable", { reason: "writable again" });
      const cp = await s.result("task.checkpoint", { summary: "rw again", next_step: "n" });
      assert.equal((await s.result("memory.get", { id: cp.memory_id })).record.content, cp.text);
    } finally {
      await s.close();
      if (mounted) execFileSync("umount", ["-l", mnt]);
    }
  });

  test("the state directory (.longrun) read-only: a checkpoint that commits is saved; a failing one keeps nothing and says so; the gate refuses after either", async () => {
    await s.result("task.start", { description: "state dir read-only" });
    await s.result("writes.enable", { reason: "go" });
    const dotdir = join(mnt, ".longrun");
    execFileSync("mount", ["--bind", dotdir, dotdir]);
    execFileSync("mount", ["-o", "remount,bind,ro", dotdir]);
    try {
      const cp = await s.result("task.checkpoint", { summary: "state dir ro", next_step: "n" });
      assert.equal((await s.result("memory.get", { id: cp.memory_id })).record.content, cp.text, "memory is elsewhere: the checkpoint commits");
      assert.equal((await s.error("writes.require", { action: "edit" })).data.kind, "write_gate_violation");
      assert.equal(await denied(mnt), true);
    } finally {
      execFileSync("umount", [dotdir]);
    }
    await s.result("task.resume", {});
    await s.result("writes.enable", { reason: "again" });
    assert.ok((await s.result("writes.require", { action: "edit" })).lease);
  });
});
