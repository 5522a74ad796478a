/**
 * memory.db gone, emptied, damaged or replaced — between runs and under a running server — is an
 * error that names the file and the way back, never a silent fresh start; once the file is back,
 * the same server serves it again without a restart. Through the compiled binary over stdio.
 */
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY, Server, TARGETS } from "../support/server.ts";

const note = (title: string) => ({ type: "note", title, content: `${title} body`, keywords: [title] });

describe("memory.db is remembered by its root", () => {
  let dir = "";
  let s: Server | null = null;
  beforeEach(() => (dir = tempDir()));
  afterEach(async () => {
    if (s && s.child.exitCode === null && s.child.signalCode === null) await s.close();
    s = null;
    removeDir(dir);
  });

  async function serve(): Promise<Server> {
    s = new Server(TARGETS[0]!, ["serve", "--root", dir]);
    return s;
  }

  async function seed(n: number): Promise<string[]> {
    const srv = await serve();
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await srv.result("memory.save", note(`record${i}`))).id);
    await srv.close();
    return ids;
  }

  test("truncated to 0 bytes between runs: storage_error naming the file and the way back; no S_0001 handed out again", async () => {
    await seed(5);
    truncateSync(join(dir, "memory.db"), 0);
    for (const f of ["memory.db-wal", "memory.db-shm"]) if (existsSync(join(dir, f))) truncateSync(join(dir, f), 0);
    const srv = await serve();
    const e = await srv.error("memory.save", note("after"));
    assert.equal(e.data.kind, "storage_error");
    assert.equal(e.data.reason, "missing");
    assert.equal(e.data.path, join(dir, "memory.db"));
    assert.match(e.message, /empty.*truncated.*recover --accept-memory/s);
    assert.equal((await srv.error("memory.search", { query: "record1" })).data.kind, "storage_error");
    assert.equal((await srv.error("task.status", {})).data.kind, "storage_error", "no task state is invented either");
    await srv.close();
    // the host decides to go on without it: an explicit command, which keeps the old file aside
    const r = await run([BINARY, "recover", "--accept-memory", "--root", dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /kept aside: .*memory\.db\.set-aside-/);
    assert.ok(readdirSync(dir).some((f) => f.startsWith("memory.db.set-aside-")));
    const again = await serve();
    assert.equal((await again.result("memory.save", note("fresh"))).id, "S_0001", "a new memory, because the host said so");
  });

  test("the file deleted between runs is storage_error, and the server does not create an empty one", async () => {
    await seed(3);
    for (const f of ["memory.db", "memory.db-wal", "memory.db-shm"]) if (existsSync(join(dir, f))) renameSync(join(dir, f), join(dir, `${f}.away`));
    const srv = await serve();
    const e = await srv.error("memory.get", { id: "S_0001" });
    assert.equal(e.data.kind, "storage_error");
    assert.match(e.message, /gone/);
    assert.ok(!existsSync(join(dir, "memory.db")), "no empty database was created in its place");
    await srv.close();
    for (const f of ["memory.db", "memory.db-wal", "memory.db-shm"]) if (existsSync(join(dir, `${f}.away`))) renameSync(join(dir, `${f}.away`), join(dir, f));
    const back = await serve();
    assert.equal((await back.result("memory.get", { id: "S_0003" })).record.title, "record2", "restored, everything is there");
  });

  test("overwritten past the header (a damaged file) is memory_corrupt with what to do, and accept-memory keeps it aside", async () => {
    await seed(20);
    const db = join(dir, "memory.db");
    truncateSync(db, 8192);
    const srv = await serve();
    const e = await srv.error("memory.search", { query: "record1" });
    assert.equal(e.data.kind, "memory_corrupt");
    assert.equal(e.code, -32013);
    assert.equal(e.data.path, db);
    assert.match(e.message, /backup.*recover --accept-memory/s);
    await srv.close();
    const r = await run([BINARY, "recover", "--accept-memory", "--root", dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /kept aside \(unreadable\)/);
    const again = await serve();
    assert.ok((await again.result("memory.save", note("new"))).id);
  });

  test("removed under a running server: the next calls fail with storage_error (nothing written into the vanished file); moved back, the same server serves it again", async () => {
    const srv = await serve();
    await srv.result("task.start", { description: "keep memory safe" });
    const before = await srv.result("memory.save", note("before"));
    const db = join(dir, "memory.db");
    renameSync(db, `${db}.moved`);
    const e = await srv.error("memory.save", note("while gone"));
    assert.equal(e.data.kind, "storage_error");
    assert.equal(e.data.reason, "missing");
    assert.equal((await srv.error("writes.require", { action: "edit" })).data.kind, "storage_error", "the gate refuses while memory is gone");
    renameSync(`${db}.moved`, db);
    assert.equal((await srv.result("memory.get", { id: before.id })).record.title, "before");
    const after = await srv.result("memory.save", note("after"));
    assert.notEqual(after.id, before.id);
    assert.equal((await srv.result("task.status", {})).task.description, "keep memory safe");
    assert.equal((await srv.result("memory.search", { query: "while" })).hits.length, 0, "the refused save left nothing");
  });

  test("replaced under a running server by another root's memory: storage_error saying so; the right file back, service resumes", async () => {
    const other = tempDir();
    try {
      const o = new Server(TARGETS[0]!, ["serve", "--root", other]);
      await o.result("memory.save", note("other root"));
      await o.close();
      const srv = await serve();
      await srv.result("memory.save", note("mine"));
      const db = join(dir, "memory.db");
      // the whole database moved away (a database and its WAL belong together) and another put in
      for (const f of ["", "-wal", "-shm"]) if (existsSync(db + f)) renameSync(db + f, `${db}.mine${f}`);
      copyFileSync(join(other, "memory.db"), db);
      const e = await srv.error("memory.search", { query: "mine" });
      assert.equal(e.data.kind, "storage_error");
      assert.match(e.message, /replaced/);
      for (const f of ["-wal", "-shm"]) if (existsSync(db + f)) renameSync(db + f, `${db}.theirs${f}`);
      for (const f of ["", "-wal", "-shm"]) if (existsSync(`${db}.mine${f}`)) renameSync(`${db}.mine${f}`, db + f);
      assert.equal((await srv.result("memory.search", { query: "mine" })).hits.length, 1);
    } finally {
      removeDir(other);
    }
  });

  test("state.json as a directory (an old root's state file broken by hand) is state_corrupt naming it; recover with no checkpoint moves it aside and the root starts again", async () => {
    const bad = join(dir, ".longrun", "state.json");
    mkdirSync(bad, { recursive: true });
    writeFileSync(join(bad, "x"), "not a state");
    const srv = await serve();
    const e = await srv.error("task.status", {});
    assert.equal(e.data.kind, "state_corrupt", e.message);
    assert.equal(e.data.path, bad);
    assert.equal((await srv.error("task.start", { description: "blocked" })).data.kind, "state_corrupt", "never treated as no task");
    const r = await srv.result("task.recover", {});
    assert.equal(r.task, null);
    assert.match(r.quarantined, /state\.json\.corrupt-/);
    assert.ok(!existsSync(bad) && readdirSync(join(dir, ".longrun")).some((f) => f.startsWith("state.json.corrupt-")), "kept aside, not deleted");
    assert.equal((await srv.result("task.start", { description: "a new start" })).task.status, "in_progress");
  });
});
