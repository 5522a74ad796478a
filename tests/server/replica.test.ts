/**
 * A primary and a read replica (`--grpc-listen-addr` / `--primary-grpc-url`): a runner pointed at
 * the replica has its writes forwarded to the primary and never reads older than its own writes —
 * also in its hook processes, which share the runner's state directory.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client/web";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { decision, hook } from "../support/hook_run.ts";
import { BINARY, requireBinary, Server } from "../support/server.ts";
import { type Sqld, sqldMissing, startSqld } from "../support/sqld.ts";

const skip = sqldMissing();

describe("a runner on a read replica", { skip }, () => {
  let primary: Sqld;
  let replica: Sqld;
  const dirs: string[] = [];
  before(async () => {
    requireBinary();
    primary = await startSqld({ grpc: true });
    replica = await startSqld({ primaryGrpcUrl: primary.grpcUrl! });
    dirs.push(tempDir(), tempDir());
  });
  after(async () => {
    await replica.stop();
    await primary.stop();
    for (const d of dirs) removeDir(d);
  });

  test("writes are forwarded to the primary; every read sees the runner's own writes at once", async () => {
    const state = join(dirs[0]!, ".longrun", "runner"); // inside a .longrun directory: the gate protects it
    const project = dirs[1]!;
    const s = new Server({ name: "binary", argv: [BINARY] }, ["serve", "--store", replica.url, "--project", "p", "--state-dir", state]);
    try {
      const task = (await s.result("task.start", { description: "on a replica" })).task;
      assert.equal((await s.result("task.status")).task.task_id, task.task_id, "the new task is read back at once");
      for (let i = 0; i < 40; i++) {
        const saved = await s.result("memory.save", { type: "note", title: `replicated ${i}`, content: `body ${i}` });
        const got = await s.result("memory.get", { id: saved.id });
        assert.equal(got.record?.title, `replicated ${i}`, `memory.get right after memory.save (${i})`);
        await s.result("writes.enable", { reason: `turn ${i}` });
        assert.equal((await s.result("writes.require", { action: "edit x" })).ok, true, `the grant is read back at once (${i})`);
        const cp = await s.result("task.checkpoint", { summary: `s${i}`, next_step: "n" });
        assert.equal((await s.error("writes.require", { action: "edit x" })).data.kind, "write_gate_violation", `the checkpoint's revocation is read back at once (${i})`);
        assert.equal((await s.result("task.status")).task.last_checkpoint.memory_id, cp.memory_id);
        await s.result("task.resume");
      }
      // a hook process of this runner (same state directory) sees the runner's grant at once
      const env = { LONGRUN_STORE: replica.url, LONGRUN_PROJECT: "p", LONGRUN_STATE_DIR: state };
      const write = { tool_name: "Write", tool_input: { file_path: join(project, "a.txt"), content: "x" } };
      for (let i = 0; i < 5; i++) {
        await s.result("writes.enable", { reason: "hook turn" });
        assert.notEqual(decision(await hook(project, "PreToolUse", write, env)), "deny", `hook after grant (${i})`);
        await s.result("task.checkpoint", { summary: "end", next_step: "n" });
        assert.equal(decision(await hook(project, "PreToolUse", write, env)), "deny", `hook after revocation (${i})`);
        await s.result("task.resume");
      }
      // the writes went to the primary
      const c = createClient({ url: primary.url });
      try {
        const n = Number((await c.execute("SELECT COUNT(*) AS n FROM memories WHERE title LIKE 'replicated %'")).rows[0]!.n);
        assert.equal(n, 40);
      } finally {
        c.close();
      }
    } finally {
      await s.close();
    }
  });
});
