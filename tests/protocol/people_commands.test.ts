/**
 * The commands for a person at a terminal (`longrun resume|checkpoint|finish|recover|hook install`):
 * in a directory with no root they create nothing and say so in one line; every failure is one
 * line with the way out, exit 2, never a stack trace. Through the compiled binary.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readdirSync } from "node:fs";
import { describe, test } from "node:test";
import { removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";
import { skipped } from "../support/skips.ts";

const COMMANDS: string[][] = [["resume"], ["finish"], ["checkpoint", "--summary", "s", "--next-step", "n"], ["recover"], ["recover", "--force"]];
const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

function oneLine(r: { code: number | null; stdout: string; stderr: string }, what: string): void {
  assert.equal(r.code, 2, `${what}: ${r.stderr}`);
  assert.equal(r.stderr.trim().split("\n").length, 1, `${what}: one line: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at |mkdirSync|\$bunfs/, `${what}: no stack trace`);
}

describe("a person's commands", () => {
  test("in an empty directory that is no root, resume, finish, checkpoint and recover create nothing and say so in one line", async () => {
    requireBinary();
    const dir = tempDir();
    try {
      for (const cmd of COMMANDS) {
        const r = await run([BINARY, ...cmd, "--root", dir]);
        oneLine(r, cmd.join(" "));
        assert.match(r.stderr, /no longrun root in .*nothing was created.*--root DIR/);
        assert.deepEqual(readdirSync(dir), [], `${cmd.join(" ")} created nothing (no memory.db, -wal, -shm, .longrun, raw_data)`);
      }
    } finally {
      removeDir(dir);
    }
  });

  test("as a user who may not write the directory: one line with the way out, exit 2, no stack trace (also hook install)", { skip: skipped("tests/protocol/people_commands: as a user who may not write", isRoot ? false : "needs root to run the binary as nobody (setpriv)") }, async () => {
    requireBinary();
    // under /tmp itself: the suite's own TMPDIR may be closed to other users
    const empty = mkdtempSync("/tmp/longrun-nobody-");
    const rooted = mkdtempSync("/tmp/longrun-nobody-");
    try {
      const start = await run([BINARY, "serve", "--root", rooted], { input: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.start", params: { description: "read-only root" } }) + "\n" });
      assert.equal(start.code, 0, start.stderr);
      chmodSync(empty, 0o755);
      chmodSync(rooted, 0o755);
      const asNobody = (args: string[], cwd: string) => run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BINARY, ...args], { cwd });
      for (const cmd of COMMANDS) {
        const r = await asNobody(cmd, empty);
        oneLine(r, `${cmd.join(" ")} (no root)`);
        const w = await asNobody(cmd, rooted);
        oneLine(w, `${cmd.join(" ")} (a root nobody may write)`);
        assert.match(w.stderr, /writ/, w.stderr);
      }
      const hook = await asNobody(["hook", "install", "claude"], empty);
      oneLine(hook, "hook install");
      assert.match(hook.stderr, /EACCES.*run it as a user who may write there/);
      assert.deepEqual(readdirSync(empty), []);
    } finally {
      removeDir(empty);
      removeDir(rooted);
    }
  });

  test("finish twice says in a sentence that the task is already completed and what to do", async () => {
    requireBinary();
    const dir = tempDir();
    try {
      await run([BINARY, "serve", "--root", dir], { input: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.start", params: { description: "finish twice" } }) + "\n" });
      assert.equal((await run([BINARY, "finish", "--root", dir])).code, 0);
      const again = await run([BINARY, "finish", "--root", dir]);
      oneLine(again, "finish twice");
      assert.match(again.stderr, /transition_error: .*already completed, which is final; start a new task with task.start/);
      assert.doesNotMatch(again.stderr, /may go to none/);
    } finally {
      removeDir(dir);
    }
  });
});
