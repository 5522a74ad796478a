/**
 * A checkpoint's record commits with the task state; its search index rows follow in a write of
 * their own (src/memory/store.ts, the `memory_index_pending` mark). SIGKILL between the two
 * commits (crash points `memory.before_index`, `memory.after_index`, `checkpoint.before_reply`,
 * in the crash-test build of the binary) loses nothing: after a restart, a search for a word only
 * in the checkpoint finds it, once, and later checkpoints are found too.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { CRASH_BINARY, Server } from "../support/server.ts";

const binary = { name: "the compiled binary (crash-test build)", argv: [CRASH_BINARY] };
const ids = (page: Record<string, any>): string[] => page.hits.map((h: { id: string }) => h.id);

describe("a checkpoint's index rows across SIGKILL between its two commits", () => {
  let root = "";
  beforeEach(async () => {
    root = tempDir();
    const s = new Server(binary, ["serve", "--root", root]);
    await s.result("task.start", { description: "crash points for the deferred index" });
    await s.close();
  });
  afterEach(() => removeDir(root));

  for (const point of ["memory.before_index", "memory.after_index"]) {
    test(`killed at ${point} (the checkpoint shown, its index rows not yet or just written): found after a restart`, async () => {
      const s = new Server(binary, ["serve", "--root", root], { LONGRUN_CRASH_AT: point });
      const cp = await s.result("task.checkpoint", { summary: "the word plumbifax only here", next_step: "go on", kind: "progress" });
      assert.match(String(cp.text), /plumbifax/, "the checkpoint was shown");
      // the search sends the index rows first: the process dies there
      await s.write(JSON.stringify({ jsonrpc: "2.0", id: 99, method: "memory.search", params: { query: "plumbifax" } }) + "\n");
      const end = await s.exited;
      assert.equal(end.signal, "SIGKILL", `the process died at ${point} (stderr: ${s.stderr})`);
      const again = new Server(binary, ["serve", "--root", root]);
      try {
        assert.deepEqual(ids(await again.result("memory.search", { query: "plumbifax" })), [cp.memory_id], "found after the restart");
        assert.deepEqual(ids(await again.result("memory.search", { query: "plumbifax" })), [cp.memory_id], "indexed once");
        const next = await again.result("task.checkpoint", { summary: "then the word quillenbar", next_step: "go on", kind: "progress" });
        assert.deepEqual(ids(await again.result("memory.search", { query: "quillenbar" })), [next.memory_id]);
      } finally {
        await again.close();
      }
    });
  }

  test("killed at checkpoint.before_reply (committed, never shown): found after a restart", async () => {
    const s = new Server(binary, ["serve", "--root", root], { LONGRUN_CRASH_AT: "checkpoint.before_reply" });
    await s.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.checkpoint", params: { summary: "the word vorpalite only here", next_step: "go on", kind: "progress" } }) + "\n");
    const end = await s.exited;
    assert.equal(end.signal, "SIGKILL", `the process died (stderr: ${s.stderr})`);
    assert.equal(s.answers.length, 0, "nothing was acknowledged");
    const again = new Server(binary, ["serve", "--root", root]);
    try {
      const status = await again.result("task.status", {});
      const hits = ids(await again.result("memory.search", { query: "vorpalite" }));
      assert.equal(hits.length, 1, "the committed checkpoint is found");
      assert.equal(hits[0], status.task.last_checkpoint.memory_id, "it is the task's last checkpoint");
    } finally {
      await again.close();
    }
  });
});
