/**
 * What a root on a libSQL server sends it (issue 26): a gate check is one request, a checkpoint
 * one request (one write batch: the memory record, its index row and the task state, committed
 * only if the task is still the one it was drafted from). When that compare-and-set fails inside
 * the batch, nothing of the batch is written: the checkpoint runs again under the lock and its
 * record is saved once, the one whose text was shown. The requests are counted by a request-log
 * test double around `fetch` and `WebSocket` (the real ones carry every request to a real sqld).
 * Also on a local root: the same batch on this thread's connection, and the same outcome when
 * another connection moved the task on.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Database } from "../../src/db/database.ts";
import { libsqlConn } from "../../src/db/libsql_conn.ts";
import { openClient, remoteConn, RemoteSession } from "../../src/db/remote.ts";
import type { SqlConn } from "../../src/db/sql.ts";
import { Root } from "../../src/root/root.ts";
import { removeDir, tempDir } from "../support/helpers.ts";
import { type Sqld, sqldMissing, startSqld } from "../support/sqld.ts";

/** Request-log test double: every HTTP request and WebSocket message libSQL's client sends while `on`. */
class RequestLog {
  on = false;
  readonly sent: string[] = [];
  readonly #fetch = globalThis.fetch;
  readonly #ws = globalThis.WebSocket;
  readonly #send = globalThis.WebSocket.prototype.send;
  install(): void {
    const log = this;
    const realFetch = this.#fetch;
    globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
      if (log.on) log.sent.push(`http ${input instanceof Request ? input.url : String(input)}`);
      return realFetch(input, init);
    }) as typeof fetch;
    const send = this.#send;
    this.#ws.prototype.send = function (this: WebSocket, data: string | ArrayBufferLike | Blob | ArrayBufferView) {
      // a stream's opening and closing go in the same write as its request, answered or not
      if (log.on && !/"type":"(open|close)_stream"/.test(String(data))) log.sent.push(`ws ${String(data).slice(0, 120)}`);
      return send.call(this, data);
    };
  }
  restore(): void {
    globalThis.fetch = this.#fetch;
    this.#ws.prototype.send = this.#send;
  }
  async count(op: () => Promise<unknown>): Promise<string[]> {
    this.sent.length = 0;
    this.on = true;
    try {
      await op();
    } finally {
      this.on = false;
    }
    return [...this.sent];
  }
}

const CHECKPOINT = { summary: "adapter mapped", next_step: "connect supplier 2", kind: "progress" };

async function checkpointRecords(root: Root): Promise<{ seq: number; content: string }[]> {
  const rs = await root.db.read("SELECT seq, content FROM memories WHERE dedupe_key LIKE 'checkpoint:%' ORDER BY seq");
  return rs.rows.map((r) => ({ seq: Number(r.seq), content: String(r.content) }));
}

/** A checkpoint's answer is what was saved: its record holds the text, the stored task names the record, search finds it. */
async function assertSaved(root: Root, out: { text: string; memory_id: string }): Promise<void> {
  assert.equal((await root.memory.get(out.memory_id))?.content, out.text, "the record of the shown text is in memory");
  assert.equal((await root.state.load())?.last_checkpoint?.memory_id, out.memory_id, "the stored task names that record");
  assert.ok((await root.memory.search("adapter")).hits.some((h) => h.id === out.memory_id), "and search finds it at once");
}

describe("a root on a libSQL server: requests per call", { skip: sqldMissing() }, () => {
  for (const transport of ["http", "ws"] as const) {
    test(`over ${transport}: a gate check is one request and a checkpoint one request, and what it shows is saved`, async () => {
      const sqld = await startSqld();
      const state = tempDir();
      const log = new RequestLog();
      log.install();
      let root: Root | null = null;
      try {
        root = await Root.openServer({ url: transport === "ws" ? sqld.ws : sqld.url, project: "p", stateDir: state });
        const c = root.contract;
        await c.startTask("count the requests");
        await c.enableWrites({ reason: "edit", granted_by: "host" });
        await c.checkpoint(CHECKPOINT); // the first also learns the last memory number
        const gate = await log.count(() => c.requireWritable("edit a.md"));
        assert.equal(gate.length, 1, gate.join("\n"));
        for (let i = 0; i < 3; i++) {
          let out: { text: string; memory_id: string } | null = null;
          const sent = await log.count(async () => (out = await c.checkpoint({ ...CHECKPOINT, summary: `adapter mapped ${i}` })));
          assert.equal(sent.length, 1, sent.join("\n"));
          await assertSaved(root, out!);
        }
        assert.equal((await checkpointRecords(root)).length, 4);
      } finally {
        log.restore();
        await root?.close();
        await sqld.stop();
        removeDir(state);
      }
    });
  }

  test("a compare-and-set that fails inside the batch writes nothing of it: the checkpoint runs again under the lock, its record saved once", async () => {
    const sqld = await startSqld();
    const states = [tempDir(), tempDir()];
    const log = new RequestLog();
    log.install();
    const roots: Root[] = [];
    try {
      const a = await Root.openServer({ url: sqld.url, project: "p", stateDir: states[0]! });
      roots.push(a);
      await a.contract.startTask("two runners");
      await a.contract.checkpoint(CHECKPOINT);
      const b = await Root.openServer({ url: sqld.url, project: "p", stateDir: states[1]! });
      roots.push(b);
      const moved = await b.contract.enableWrites({ reason: "edit", granted_by: "host" }); // a's view of the task is now stale
      const before = await checkpointRecords(a);
      let out: { text: string; memory_id: string; task: { version: number } } | null = null;
      const sent = await log.count(async () => (out = await a.contract.checkpoint({ ...CHECKPOINT, summary: "adapter mapped after the other runner" })));
      assert.ok(sent.length > 1, `the batch, then a transaction under the lock: ${sent.join("\n")}`);
      const after = await checkpointRecords(a);
      assert.equal(after.length, before.length + 1, "one record, not one from the undone batch as well");
      assert.equal(after.at(-1)!.content, out!.text);
      assert.equal(out!.task.version, moved.version + 1, "drafted from the task as the other runner left it");
      await assertSaved(a, out!);
      // and the next checkpoint is one request again
      assert.equal((await log.count(() => a.contract.checkpoint(CHECKPOINT))).length, 1);
    } finally {
      log.restore();
      for (const r of roots) await r.close();
      await sqld.stop();
      for (const d of states) removeDir(d);
    }
  });
});

/** A batch whose insert comes before the check of a compare-and-set that does not hold: null, and the insert is not there. */
async function undoneBatch(conn: SqlConn, count: () => Promise<number>): Promise<void> {
  await conn.write(async (tx) => {
    await tx.run("CREATE TABLE IF NOT EXISTS cas_t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)");
    await tx.run("CREATE TABLE IF NOT EXISTS cas_m (seq INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL)");
    await tx.run("INSERT OR REPLACE INTO cas_t(id, v) VALUES (1, 1)");
    return null;
  });
  const step = (v: number) => [
    { sql: "INSERT INTO cas_m(body) VALUES (?)", args: [`at ${v}`] },
    { sql: "SELECT 1 FROM cas_t WHERE id = 1 AND v = ?", args: [v], check: true },
    { sql: "UPDATE cas_t SET v = v + 1 WHERE id = 1", args: [] },
  ];
  assert.equal(await conn.batch!(step(7)), null, "the compare-and-set did not hold");
  assert.equal(await count(), 0, "nothing of the batch was written");
  assert.ok(await conn.batch!(step(1)), "it holds at the stored value");
  assert.equal(await count(), 1);
}

describe("SqlConn.batch: a check step that finds no row undoes the batch", () => {
  test("on a local database (this thread's connection)", async () => {
    const dir = tempDir();
    const db = await Database.open(new URL(`file://${dir}/t.db`).href);
    try {
      const conn = libsqlConn(db);
      await undoneBatch(conn, async () => Number((await conn.run("SELECT count(*) AS n FROM cas_m"))[0]!.n));
    } finally {
      await db.close();
      removeDir(dir);
    }
  });

  test("on a libSQL server, over HTTP and WebSocket", { skip: sqldMissing() }, async () => {
    const sqld: Sqld = await startSqld();
    try {
      for (const url of [sqld.url, sqld.ws]) {
        const client = openClient(url);
        try {
          const conn = remoteConn(new RemoteSession(client), url);
          await conn.write((tx) => tx.run("DROP TABLE IF EXISTS cas_m").then(() => null));
          await undoneBatch(conn, async () => Number((await conn.run("SELECT count(*) AS n FROM cas_m"))[0]!.n));
        } finally {
          client.close();
        }
      }
    } finally {
      await sqld.stop();
    }
  });
});

describe("a local root: the checkpoint's batch", () => {
  test("another connection moved the task on: the batch writes nothing, the checkpoint is drafted again under the lock and saved once", async () => {
    const dir = tempDir();
    const roots: Root[] = [];
    try {
      const a = await Root.open(dir, { searchInWorker: false });
      roots.push(a);
      await a.contract.startTask("two connections");
      await a.contract.checkpoint(CHECKPOINT);
      const b = await Root.open(dir, { searchInWorker: false });
      roots.push(b);
      const moved = await b.contract.enableWrites({ reason: "edit", granted_by: "host" });
      const before = await checkpointRecords(a);
      const out = await a.contract.checkpoint({ ...CHECKPOINT, summary: "adapter mapped after the other connection" });
      const after = await checkpointRecords(a);
      assert.equal(after.length, before.length + 1);
      assert.equal(after.at(-1)!.content, out.text);
      assert.equal(out.task.version, moved.version + 1);
      assert.equal(out.task.lease?.reason, "edit", "a progress checkpoint keeps the lease the other connection granted");
      await assertSaved(a, out);
    } finally {
      for (const r of roots) await r.close();
      removeDir(dir);
    }
  });
});
