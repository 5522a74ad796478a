/**
 * A root whose task state lives in memory.db reads `.longrun/state.json` never again: a stray one
 * (a directory made by hand, a torn file, a readable old state copied back) neither locks the root
 * nor becomes its task, and recovery always has a way out. Through the compiled binary.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { openSyncSqlite } from "../../src/db/sqlite.ts";
import { run, tempDir } from "../support/helpers.ts";
import { BINARY } from "../support/server.ts";
import { serveEachTest } from "../support/each_root.ts";

const OLD_STATE = {
  format: 2,
  task_id: "T_20200101_000000_old1",
  description: "an old task copied back",
  status: "in_progress",
  access_mode: "writable",
  turn_index: 7,
  version: 99,
};

describe("a stray state.json in a migrated root", () => {
  const serve = serveEachTest(() => tempDir());
  const statePath = () => join(serve.dir(), ".longrun", "state.json");

  async function rootWithTask(): Promise<string> {
    const s = serve();
    const id = (await s.result("task.start", { description: "the real task" })).task.task_id;
    await s.result("task.checkpoint", { summary: "so far", next_step: "on" });
    await s.close();
    return id;
  }

  async function usable(id: string, why: string): Promise<void> {
    const s = serve();
    const st = await s.result("task.status", {});
    assert.equal(st.task.task_id, id, `${why}: the task is the one in memory.db`);
    assert.equal((await s.result("task.resume", {})).task.task_id, id);
    assert.equal((await s.error("writes.require", { action: "edit a" })).data.kind, "write_gate_violation", `${why}: an ordinary refusal, not state_corrupt`);
    await s.result("writes.enable", { reason: "edit" });
    await s.result("writes.require", { action: "edit a" });
    await s.close();
  }

  test("a directory named state.json is ignored: status, the gate and resume work, in new processes too", async () => {
    const id = await rootWithTask();
    mkdirSync(statePath());
    await usable(id, "a directory");
    await usable(id, "again");
    assert.ok(existsSync(statePath()), "left where it is");
    const st = await run([BINARY, "status", "--root", serve.dir()]);
    assert.equal(st.code, 0, st.stderr);
    assert.doesNotMatch(st.stdout + st.stderr, /state_corrupt/);
  });

  test("a torn state.json is ignored", async () => {
    const id = await rootWithTask();
    writeFileSync(statePath(), '{"format":3,"task_id":"T_');
    await usable(id, "a torn file");
  });

  test("a readable old state.json put back is not migrated again and does not become the current task", async () => {
    const id = await rootWithTask();
    writeFileSync(statePath(), JSON.stringify(OLD_STATE));
    await usable(id, "a readable old file");
    const s = serve();
    const tasks = (await s.result("task.list", {})).tasks.map((t: { task_id: string }) => t.task_id);
    assert.deepEqual(tasks, [id], "never re-imported");
  });

  test("a root an earlier longrun marked corrupt for a stray file opens usable again, and recover --force has a way out", async () => {
    const id = await rootWithTask();
    mkdirSync(statePath());
    // what an earlier longrun wrote on finding it: the root marked corrupt
    const db = await openSyncSqlite(join(serve.dir(), "memory.db"), 1000);
    db.exec(`INSERT INTO root_meta(key, value) VALUES ('legacy_state_corrupt', '${statePath()}')`);
    db.close();
    const forced = await run([BINARY, "recover", "--force", "--root", serve.dir()]);
    assert.equal(forced.code, 0, forced.stderr);
    await usable(id, "after recover --force");
  });

  test("the first open of an old root still moves its readable state.json in, once", async () => {
    mkdirSync(join(serve.dir(), ".longrun"));
    writeFileSync(statePath(), JSON.stringify(OLD_STATE));
    const s = serve();
    const st = await s.result("task.status", {});
    assert.equal(st.task.task_id, OLD_STATE.task_id);
    assert.equal(st.task.access_mode, "read_only", "a writable legacy state arrives read-only");
    await s.close();
    assert.ok(!existsSync(statePath()), "kept as state.json.migrated-<time>");
  });
});
