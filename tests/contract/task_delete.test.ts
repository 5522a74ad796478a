/**
 * task.delete through the protocol (local root, or sqld under LONGRUN_TEST_STORE=sqld): the host
 * deletes a task that is not current and has no open run; its state, checkpoints, runs, receipts,
 * charges, artifacts, contexts, adjustments, approvals and events go (every table that names it is
 * checked, so a table added later and forgotten here fails the test); a tombstone and one
 * `task.deleted` event stay; memories saved under it stay unless `memories: true`.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { RpcFixture } from "../ledger/rpc.ts";

describe("task.delete", () => {
  let fx: RpcFixture;
  beforeEach(() => (fx = new RpcFixture()));
  afterEach(() => fx.close());

  /** A task with a bit of everything, ended and left for another: its ids, and the artifact's and context's blobs. */
  async function fullTask() {
    const { task } = await fx.ok("task.start", { description: "compare the pension funds" });
    const note = await fx.ok("memory.save", { type: "note", title: "fund A fees", content: "fund A charges 0.45 percent a year" });
    const run = (await fx.ok("run.start", { owner: "lead", tools: ["fetch"], budget: { requests: 5 } })).run;
    const r = (await fx.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "k1", args: { url: "https://example.org/a" } })).receipt;
    await fx.ok("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: r.receipt_id, outcome: "completed", result_ref: "r1" });
    await fx.ok("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1 });
    await fx.ok("artifact.put", { name: "report", kind: "full", content: "Private comparison of fund A and fund B for the user", run_id: run.run_id, epoch: 1 });
    await fx.ok("context.put", { label: "fees", content: "the user's salary is 4,200 a month", run_id: run.run_id, epoch: 1 });
    await fx.ok("adjust.receive", { text: "also compare fund C, my partner's", run_id: run.run_id }, "host");
    await fx.ok("approval.request", { action: "email.send", reason: "send the comparison to the user's bank" });
    await fx.ok("run.checkpoint", { run_id: run.run_id, epoch: 1, settled: ["fees of A"], open: ["fees of B"], note: "halfway" });
    await fx.ok("run.finish", { run_id: run.run_id, epoch: 1, outcome: "compared A and B", gaps: ["fund C, the partner's, not compared"] });
    const cp = await fx.ok("task.checkpoint", { summary: "compared fund A and fund B zebraquartz", next_step: "write it up" });
    const root = await fx.root();
    const blobs = [
      ...(await root.db.execute({ sql: "SELECT ref, sha256 FROM artifacts WHERE task_id = ?", args: [task.task_id] })).rows,
      ...(await root.db.execute({ sql: "SELECT path AS ref, sha256 FROM contexts WHERE task_id = ?", args: [task.task_id] })).rows,
    ].map((b) => ({ ref: String(b.ref), sha256: String(b.sha256) }));
    assert.equal(blobs.length, 2);
    await fx.ok("task.start", { description: "an unrelated question" });
    return { task_id: task.task_id as string, run, note: note.id as string, checkpoint_memory: cp.memory_id as string, blobs };
  }

  /** Rows that still name the task (any table with a task_id column) or its runs (any with a run_seq column), by table. */
  async function leftovers(taskId: string, runSeqs: number[]): Promise<Record<string, number>> {
    const root = await fx.root();
    const tables = (await root.db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%fts%'")).rows.map((r) => String(r.name));
    const out: Record<string, number> = {};
    for (const t of tables) {
      const cols = (await root.db.execute(`SELECT name FROM pragma_table_info('${t}')`)).rows.map((r) => String(r.name));
      const where = [
        ...(cols.includes("task_id") ? ["task_id = ?"] : []),
        ...(cols.includes("reader_task") ? ["reader_task = ?"] : []),
        ...["run_seq", "handed_run_seq"].filter((c) => cols.includes(c)).map((c) => `${c} IN (${runSeqs.join(",") || "NULL"})`),
      ];
      if (!where.length) continue;
      const args = [...(cols.includes("task_id") ? [taskId] : []), ...(cols.includes("reader_task") ? [taskId] : [])];
      const n = Number((await root.db.execute({ sql: `SELECT COUNT(*) AS n FROM ${t} WHERE ${where.join(" OR ")}`, args })).rows[0]!.n);
      if (n) out[t] = n;
    }
    return out;
  }

  test("the host deletes a task and everything it holds; a tombstone and one task.deleted event stay; deleting again answers already", async () => {
    const t = await fullTask();
    const seq = Number(t.run.run_id.slice(2));
    const before = await leftovers(t.task_id, [seq]);
    for (const table of ["tasks", "runs", "receipts", "charges", "run_checkpoints", "run_events", "artifacts", "contexts", "adjustments", "approvals", "gaps", "events", "memories"]) assert.ok(before[table], `the task has rows in ${table}`);
    const out = await fx.ok("task.delete", { task_id: t.task_id, reason: "the user asked to delete it" }, "host");
    const root = await fx.root();
    assert.deepEqual([out.deleted, out.already, out.runs, out.memories_kept, out.artifacts], [true, false, [t.run.run_id], 1, 1]);
    assert.ok(out.memories_forgotten.includes(t.checkpoint_memory), "its checkpoint is forgotten");
    assert.ok(!out.memories_forgotten.includes(t.note), "a memory saved under it stays project memory");
    // nothing names it any more but its tombstone, its event, the memory kept and the forgotten checkpoint's emptied row
    assert.deepEqual(await leftovers(t.task_id, [seq]), { task_tombstones: 1, events: 1, memories: 2 });
    const rows = (await root.db.execute({ sql: "SELECT title, content FROM memories WHERE task_id = ? ORDER BY seq", args: [t.task_id] })).rows;
    assert.deepEqual(rows.map((r) => [String(r.title), String(r.content)]), [["fund A fees", "fund A charges 0.45 percent a year"], ["", ""]]);
    assert.ok(!(await fx.ok("task.list")).tasks.some((x: { task_id: string }) => x.task_id === t.task_id));
    assert.equal((await fx.fail("run.get", { run_id: t.run.run_id })).data.kind, "not_found");
    assert.equal((await fx.ok("memory.search", { query: "zebraquartz" })).hits.length, 0, "the checkpoint's words are out of the index");
    assert.equal((await fx.ok("memory.search", { query: "fund A charges" })).hits.length, 1);
    for (const b of t.blobs) await assert.rejects(root.blobs.get(b.ref, b.sha256, "test"), `blob ${b.ref} removed`);
    const events = (await fx.ok("events.read", { task_id: t.task_id })).events;
    assert.deepEqual(events.map((e: { kind: string; detail: { by: string; reason: string } }) => [e.kind, e.detail.by, e.detail.reason]), [["task.deleted", "host:test", "the user asked to delete it"]]);
    const again = await fx.ok("task.delete", { task_id: t.task_id }, "host");
    assert.deepEqual([again.deleted, again.already, again.runs], [true, true, []]);
    assert.equal((await fx.ok("events.read", { task_id: t.task_id })).events.length, 1, "a retry records nothing more");
  });

  test("memories: true forgets what was saved under the task too", async () => {
    const t = await fullTask();
    const out = await fx.ok("task.delete", { task_id: t.task_id, memories: true }, "host");
    assert.equal(out.memories_kept, 0);
    assert.ok(out.memories_forgotten.includes(t.note));
    assert.equal((await fx.ok("memory.search", { query: "fund A charges" })).hits.length, 0);
  });

  test("refused, changing nothing: the agent, the current task, a task with an open run, one a run of another task continues, an unknown id", async () => {
    const agent = await fx.fail("task.delete", { task_id: "T_20261203_000000_0000" });
    assert.equal(agent.data.kind, "unauthorized");
    const { task } = await fx.ok("task.start", { description: "first" });
    const current = await fx.fail("task.delete", { task_id: task.task_id }, "host");
    assert.equal(current.data.reason, "current_task");
    assert.match(current.message, /start or switch to another task first/);
    const run = (await fx.ok("run.start", { owner: "lead", tools: ["fetch"] })).run;
    await fx.ok("task.start", { description: "second" });
    const open = await fx.fail("task.delete", { task_id: task.task_id }, "host");
    assert.deepEqual([open.data.reason, open.data.runs], ["runs_open", [run.run_id]]);
    await fx.ok("run.finish", { run_id: run.run_id, epoch: 1, outcome: "done" });
    // a run of the second task continues the first task's run: it inherits what that one left open
    const cont = (await fx.ok("run.continue", { parent_run_id: run.run_id, owner: "lead-2", budget: {} })).run;
    const elsewhere = await fx.fail("task.delete", { task_id: task.task_id }, "host");
    assert.deepEqual([elsewhere.data.reason, elsewhere.data.runs], ["continued_elsewhere", [cont.run_id]]);
    assert.ok((await fx.ok("task.list")).tasks.some((x: { task_id: string }) => x.task_id === task.task_id), "nothing was deleted");
    assert.equal((await fx.ok("run.get", { run_id: run.run_id })).run.status, "finished");
    assert.equal((await fx.fail("task.delete", { task_id: "T_20261203_000000_0000" }, "host")).data.kind, "not_found");
    assert.equal((await fx.fail("task.delete", { task_id: "../etc" }, "host")).data.kind, "invalid_params");
  });

  test("a body another task's artifact shares by content stays", async () => {
    const t = await fullTask();
    const same = "Private comparison of fund A and fund B for the user";
    await fx.ok("artifact.put", { name: "copy", kind: "full", content: same });
    await fx.ok("task.delete", { task_id: t.task_id }, "host");
    assert.equal((await fx.ok("artifact.get", { name: "copy" })).artifact.content, same);
  });
  test("a kept answer (idempotency) never gives back what was deleted: a replay runs again and finds nothing; a kept memory's save still replays", async () => {
    const { task } = await fx.ok("task.start", { description: "A" });
    const run = (await fx.ok("run.start", { owner: "lead", tools: ["fetch"], budget: { requests: 3 } })).run;
    const ctx = await fx.ok("context.put", { label: "pay", content: "the user's salary is 4,200 a month", run_id: run.run_id, epoch: 1 });
    const calls: [string, Record<string, unknown>][] = [
      ["context.read", { ref: ctx.ref, idempotency_key: "k-read" }],
      ["run.checkpoint", { run_id: run.run_id, epoch: 1, settled: ["fund A is 0.45%"], open: ["the partner's fund C"], note: "private", idempotency_key: "k-cp" }],
      ["budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, idempotency_key: "k-charge" }],
      ["artifact.put", { name: "report", kind: "full", content: "private report body", run_id: run.run_id, epoch: 1, idempotency_key: "k-art" }],
    ];
    for (const [m, p] of calls) await fx.ok(m, p);
    const saved = await fx.ok("memory.save", { type: "note", title: "fund A", content: "fund A charges 0.45 percent", idempotency_key: "k-mem" });
    await fx.ok("run.finish", { run_id: run.run_id, epoch: 1, outcome: "done" });
    await fx.ok("task.start", { description: "B" });
    await fx.ok("task.delete", { task_id: task.task_id }, "host");
    const read = await fx.call(...calls[0]!);
    assert.equal(read.error?.data.kind, "not_found", "the context's text is not replayed");
    assert.ok(!JSON.stringify(read).includes("4,200"));
    assert.equal((await fx.call(...calls[1]!)).error?.data.kind, "not_found", "the run checkpoint is not replayed as saved");
    assert.equal((await fx.call(...calls[2]!)).error?.data.kind, "not_found", "the charge is not replayed as recorded");
    assert.equal((await fx.call(...calls[3]!)).error?.data.kind, "not_found", "the artifact is not replayed as saved");
    const root = await fx.root();
    const kept = (await root.db.execute("SELECT key FROM idempotency ORDER BY key")).rows.map((r) => String(r.key));
    assert.ok(!kept.some((k) => ["k-read", "k-cp", "k-charge"].includes(k)), kept.join(","));
    assert.equal((await fx.ok("memory.save", { type: "note", title: "fund A", content: "fund A charges 0.45 percent", idempotency_key: "k-mem" })).id, saved.id, "a kept memory's save replays");
  });

  test("a refused continuation in another task does not hold the delete (it loses its link); a requested one does until refused", async () => {
    const { task } = await fx.ok("task.start", { description: "A" });
    const run = (await fx.ok("run.start", { owner: "lead", tools: ["fetch"] })).run;
    await fx.ok("run.finish", { run_id: run.run_id, epoch: 1, outcome: "done" });
    await fx.ok("task.start", { description: "B" });
    const asked = (await fx.ok("run.continue", { parent_run_id: run.run_id, owner: "w", budget: {} }, "agent")).run;
    assert.equal(asked.status, "requested");
    const held = await fx.fail("task.delete", { task_id: task.task_id }, "host");
    assert.deepEqual([held.data.reason, held.data.runs], ["continued_elsewhere", [asked.run_id]]);
    assert.match(held.message, /run\.refuse/);
    await fx.ok("run.refuse", { run_id: asked.run_id, reason: "no" }, "host");
    await fx.ok("task.delete", { task_id: task.task_id }, "host");
    const left = (await fx.ok("run.get", { run_id: asked.run_id })).run;
    assert.deepEqual([left.status, left.parent_run_id], ["refused", null]);
  });

  test("nothing can be shared with a deleted task", async () => {
    const t = await fullTask();
    await fx.ok("task.delete", { task_id: t.task_id }, "host");
    const ctx = await fx.ok("context.put", { label: "mine", content: "the second task's notes" });
    const e = await fx.fail("context.share", { ref: ctx.ref, task_id: t.task_id });
    assert.equal(e.data.kind, "not_found");
  });
});
