/**
 * The research-run rules that used to give way, one behaviour per test, through the compiled
 * binary over stdio (`longrun serve`), with real SIGKILLs where a crash is the point.
 */
import assert from "node:assert/strict";
import { testRoot } from "../support/sqld.ts";
import { after, afterEach, before, beforeEach, describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { Server, TARGETS } from "../support/server.ts";

const BINARY = TARGETS[0]!;

// stdio is the host's side of the protocol; agent-side refusals are tested in tests/ledger/runs.test.ts
describe("research-run rules through the binary", () => {
  let root = "";
  let s: Server;
  beforeEach(async () => {
    root = await testRoot();
    s = new Server(BINARY, ["serve", "--root", root]);
  });
  afterEach(async () => {
    if (s.child.exitCode === null && s.child.signalCode === null) await s.close();
    removeDir(root);
  });

  async function research(budget: Record<string, unknown> = {}, tools = ["fetch", "model"]) {
    const task = (await s.result("task.start", { description: "Compare the two theme funds" })).task;
    const run = (await s.result("run.start", { owner: "exec-A", tools, sources: ["filings"], budget })).run;
    return { task, run };
  }

  async function kill(server: Server): Promise<void> {
    process.kill(server.child.pid!, "SIGKILL");
    await server.exited;
  }

  test("an effect unknown in a parent run is never begun again by its continuation until reconciled there with evidence", async () => {
    const { run } = await research();
    await s.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "series", args: { w: "3y" } });
    await kill(s);
    s = new Server(BINARY, ["serve", "--root", root]);
    const claimed = await s.result("run.claim", { run_id: run.run_id, owner: "exec-B" });
    const unknown = claimed.newly_unknown[0].receipt_id;
    await s.result("run.finish", { run_id: run.run_id, epoch: 2, outcome: "stopped", gaps: ["series"] });
    const cont = (await s.result("run.continue", { parent_run_id: run.run_id, owner: "exec-B", budget: {} })).run;
    for (const args of [{ w: "3y" }, { w: "5y" }]) {
      const e = await s.error("receipt.begin", { run_id: cont.run_id, epoch: 1, tool: "fetch", idempotency_key: "series", args });
      assert.equal(e.data.reason, "receipt_unknown", "the same key, with the same or other arguments, starts nothing");
      assert.equal(e.data.receipt_id, unknown);
    }
    assert.equal((await s.error("receipt.settle", { run_id: cont.run_id, epoch: 1, receipt_id: unknown, outcome: "failed" })).data.kind, "conflict", "only with evidence");
    await s.result("receipt.settle", { run_id: cont.run_id, epoch: 1, receipt_id: unknown, outcome: "failed", error: "timeout", evidence: "provider log: never received" });
    const fresh = await s.result("receipt.begin", { run_id: cont.run_id, epoch: 1, tool: "fetch", idempotency_key: "series", args: { w: "3y" } });
    assert.equal(fresh.receipt.run_id, cont.run_id);
    const parentEvents = (await s.result("run.get", { run_id: cont.run_id })).events.map((e: { kind: string }) => e.kind);
    assert.ok(parentEvents.includes("reconciled"), "the reconciliation is recorded in the continuation");
  });

  test("a second run beside a running one is refused, also from a fresh process after a crash; after it ends, a new one starts", async () => {
    const { run } = await research();
    const same = await s.error("run.start", { owner: "exec-A2" });
    assert.equal(same.data.reason, "run_active");
    await kill(s);
    s = new Server(BINARY, ["serve", "--root", root]);
    const after = await s.error("run.start", { owner: "exec-B" });
    assert.equal(after.data.kind, "conflict");
    assert.equal(after.data.run_id, run.run_id);
    assert.match(after.message, /run\.get/);
    assert.match(after.message, /run\.claim/);
    assert.equal((await s.result("run.list")).runs.length, 1, "nothing was started");
    await s.result("run.park", { run_id: run.run_id, epoch: 1, waiting_for: "the user" });
    assert.equal((await s.error("run.start", { owner: "exec-B" })).data.reason, "run_active", "a parked run is still the task's run");
    await s.result("run.cancel", { run_id: run.run_id, epoch: 1, reason: "user stopped it" });
    assert.equal((await s.result("run.start", { owner: "exec-B" })).run.epoch, 1);
  });

  test("usage past the limit is recorded; an unknown cost without a ceiling reads as uncertain, stops new effects, and is reconciled with evidence", async () => {
    const { run } = await research({ requests: 1, cost: 1 });
    await s.result("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, cost: 0.4 });
    const past = await s.result("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, cost: 0.5, note: "in flight when the limit was reached" });
    assert.equal(past.budget.spent.requests, 2);
    assert.equal(past.budget.spent.cost, 0.9);
    assert.deepEqual(past.budget.exhausted_by, ["requests"]);
    assert.equal((await s.error("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "k", args: {} })).data.kind, "budget_exhausted");

    const other = (await s.result("task.start", { description: "another research" })).task;
    assert.ok(other);
    const r2 = (await s.result("run.start", { owner: "exec-C", tools: ["fetch"], budget: { cost: 10 } })).run;
    const lost = await s.result("budget.charge", { run_id: r2.run_id, epoch: 1, requests: 1, unknown: true, note: "usage never reported" });
    assert.equal(lost.budget.remaining.cost, null, "an unknown cost never reads as zero: what remains is not known");
    assert.deepEqual(lost.budget.uncertain, ["cost"]);
    assert.equal(lost.budget.effects_allowed, false);
    assert.match(lost.budget.policy, /no new effects until budget\.reconcile/);
    const refused = await s.error("receipt.begin", { run_id: r2.run_id, epoch: 1, tool: "fetch", idempotency_key: "k", args: {} });
    assert.equal(refused.data.kind, "budget_exhausted");
    assert.deepEqual(refused.data.unknown_charge_ids, [lost.charge_id]);
    const known = await s.result("budget.reconcile", { run_id: r2.run_id, epoch: 1, charge_id: lost.charge_id, cost: 0.7, evidence: "invoice line 14" });
    assert.equal(known.budget.remaining.cost, 9.3);
    assert.equal(known.budget.effects_allowed, true);
    assert.equal((await s.result("receipt.begin", { run_id: r2.run_id, epoch: 1, tool: "fetch", idempotency_key: "k", args: {} })).replayed, false);
    assert.equal((await s.error("budget.reconcile", { run_id: r2.run_id, epoch: 1, charge_id: lost.charge_id, cost: 1, evidence: "again" })).data.reason, "charge_known");
  });

  test("time is a budget: past the deadline or the wall time no new effect begins; spending is still recorded", async () => {
    const { run } = await research({ wall_seconds: 1 });
    await s.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "early", args: {} });
    await new Promise((r) => setTimeout(r, 1100));
    const e = await s.error("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "late", args: {} });
    assert.deepEqual(e.data.exhausted_by, ["wall_seconds"]);
    assert.equal((await s.result("budget.charge", { run_id: run.run_id, epoch: 1, cost: 0.1 })).budget.spent.cost, 0.1);
    await s.result("run.finish", { run_id: run.run_id, epoch: 1, outcome: "time up" });
    const cont = (await s.result("run.continue", { parent_run_id: run.run_id, owner: "x", budget: { deadline: new Date(Date.now() - 1000).toISOString() } })).run;
    const status = (await s.result("budget.status", { run_id: cont.run_id })).budget;
    assert.ok(status.seconds_left <= 0);
    assert.deepEqual(status.exhausted_by, ["deadline"]);
    assert.equal((await s.error("run.continue", { parent_run_id: run.run_id, owner: "x", budget: { deadline: "tomorrow" } })).data.kind, "invalid_params");
  });

  test("a new question beside running research is its own current task, inheriting nothing; the research goes on; switching ends the turn", async () => {
    const { task: researchTask, run } = await research();
    await s.result("writes.enable", { reason: "plan approved" });
    assert.equal((await s.call("writes.require", { action: "save notes" })).error, undefined, "the research task's lease holds");
    const q = await s.result("task.start", { description: "What does TER mean?" });
    assert.equal(q.previous_task, researchTask.task_id);
    assert.equal(q.task.access_mode, "read_only");
    assert.equal((await s.error("writes.require", { action: "save notes" })).data.kind, "write_gate_violation", "the lease did not move to the new task");
    const left = await s.result("task.status", { task_id: researchTask.task_id });
    assert.equal(left.task.status, "in_progress");
    assert.equal(left.task.lease, null);
    assert.equal(left.runs[0].run_id, run.run_id);
    assert.equal(left.runs[0].status, "running", "the research run keeps going");
    await s.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "bg", args: {} });
    const tasks = (await s.result("task.list")).tasks;
    assert.equal(tasks.length, 2);
    assert.equal(tasks.find((t: { current: boolean }) => t.current).task_id, q.task.task_id);
    await s.result("task.transition", { task_id: researchTask.task_id, to: "blocked", reason: "waiting for the user's files" });
    assert.equal((await s.result("task.status", { task_id: researchTask.task_id })).task.status, "blocked");
    assert.equal((await s.result("task.status")).task.task_id, q.task.task_id, "addressing another task does not make it current");
    await s.result("task.finish", { summary: "total expense ratio" });
    await s.result("task.transition", { task_id: researchTask.task_id, to: "in_progress", reason: "files arrived" });
    const back = (await s.result("task.switch", { task_id: researchTask.task_id })).task;
    assert.equal(back.access_mode, "read_only");
    assert.equal((await s.error("task.switch", { task_id: q.task.task_id })).data.reason, "task_finished");
    assert.equal((await s.error("task.status", { task_id: "T_nope" })).data.kind, "not_found");
  });

  test("two processes starting tasks at once lose nothing: both tasks exist, one is current", async () => {
    const other = new Server(BINARY, ["serve", "--root", root]);
    try {
      const [a, b] = await Promise.all([
        s.result("task.start", { description: "question from process one" }),
        other.result("task.start", { description: "question from process two" }),
      ]);
      const tasks = (await s.result("task.list")).tasks;
      assert.deepEqual(tasks.map((t: { task_id: string }) => t.task_id).sort(), [a.task.task_id, b.task.task_id].sort());
      assert.equal(tasks.filter((t: { current: boolean }) => t.current).length, 1);
    } finally {
      await other.close();
    }
  });

  test("a task does not end while its runs run; the host may end them with it; a continuation belongs to an open task", async () => {
    const { task, run } = await research();
    const e = await s.error("task.finish", { summary: "done" });
    assert.equal(e.data.reason, "open_runs");
    assert.deepEqual(e.data.runs, [run.run_id]);
    assert.equal((await s.error("task.transition", { to: "failed", reason: "give up" })).data.reason, "open_runs");
    // stdio is the host's side: the host may end the runs with the task (an agent may not: tests/ledger/runs.test.ts)
    const done = await s.result("task.finish", { summary: "done", cancel_runs: true });
    assert.deepEqual(done.cancelled_runs, [run.run_id]);
    const hostDone = await s.result("run.get", { run_id: run.run_id });
    assert.equal(hostDone.run.status, "cancelled");
    // the old task is completed: a continuation from a later task lands in that later task
    assert.equal((await s.error("run.continue", { parent_run_id: run.run_id, owner: "x", budget: {} })).data.kind, "no_active_task");
    const later = (await s.result("task.start", { description: "follow-up research" })).task;
    const cont = (await s.result("run.continue", { parent_run_id: run.run_id, owner: "x", budget: {} })).run;
    assert.equal(cont.task_id, later.task_id);
    assert.notEqual(cont.task_id, task.task_id);
  });

  test("runs are listed with status, owner epoch, budget and open items; the task's total spans its runs", async () => {
    const { run } = await research({ cost: 3 });
    await s.result("budget.charge", { run_id: run.run_id, epoch: 1, cost: 1 });
    await s.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "x", args: {} });
    await kill(s);
    s = new Server(BINARY, ["serve", "--root", root]);
    await s.result("run.claim", { run_id: run.run_id, owner: "exec-B" });
    await s.result("run.finish", { run_id: run.run_id, epoch: 2, outcome: "partial" });
    const cont = (await s.result("run.continue", { parent_run_id: run.run_id, owner: "exec-B", budget: { cost: 2 } })).run;
    await s.result("budget.charge", { run_id: cont.run_id, epoch: 1, cost: 0.5 });
    const listed = await s.result("run.list");
    assert.deepEqual(listed.runs.map((r: { run_id: string; status: string; epoch: number; open_items: number }) => [r.run_id, r.status, r.epoch, r.open_items]), [
      [cont.run_id, "running", 1, 1],
      [run.run_id, "finished", 2, 0],
    ]);
    assert.equal(listed.runs[1].budget.spent.cost, 1);
    assert.equal(listed.total.spent.cost, 1.5);
    assert.equal(listed.total.runs, 2);
    assert.equal((await s.result("task.status")).runs.length, 2);
  });

  test("a continuation may narrow, never widen, and its allowance is explicit", async () => {
    const { run } = await research({ cost: 5 });
    await s.result("run.finish", { run_id: run.run_id, epoch: 1, outcome: "draft" });
    assert.equal((await s.error("run.continue", { parent_run_id: run.run_id, owner: "x" })).data.kind, "invalid_params");
    const wider = await s.error("run.continue", { parent_run_id: run.run_id, owner: "x", budget: {}, sources: ["filings", "the-web"] });
    assert.equal(wider.data.kind, "unauthorized");
    assert.deepEqual(wider.data.wider, ["the-web"]);
    const narrow = (await s.result("run.continue", { parent_run_id: run.run_id, owner: "x", budget: { cost: 1 }, tools: ["model"], scope: [] })).run;
    assert.deepEqual(narrow.authorization, { tools: ["model"], sources: ["filings"], send: [], scope: [] });
    assert.deepEqual(narrow.budget_limits, { cost: 1 });
    assert.equal((await s.error("receipt.begin", { run_id: narrow.run_id, epoch: 1, tool: "fetch", idempotency_key: "k", args: {} })).data.kind, "unauthorized");
  });

  test("every adjustment stage is appended; a handoff names a recorded request; satisfy needs a version made after the adjustment", async () => {
    const { run } = await research();
    const old = (await s.result("artifact.put", { name: "report", kind: "draft", content: "before", run_id: run.run_id, epoch: 1 })).artifact;
    const earlyRequest = (await s.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "model", idempotency_key: "req-1", args: {} })).receipt;
    const adj = (await s.result("adjust.receive", { text: "add tracking error", run_id: run.run_id })).adjustment;
    assert.equal((await s.error("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 1, request_id: "req-2" })).data.kind, "not_found");
    assert.equal((await s.error("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 1, request_id: earlyRequest.receipt_id })).data.reason, "request_before_adjustment");
    const r2 = (await s.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "model", idempotency_key: "req-2", args: {} })).receipt;
    const r3 = (await s.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "model", idempotency_key: "req-3", args: {} })).receipt;
    await s.result("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 1, request_id: r2.receipt_id });
    await s.result("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 1, request_id: r3.receipt_id });
    const stale = await s.error("adjust.satisfy", { adjustment_id: adj.adjustment_id, artifact: "report", version: old.version });
    assert.equal(stale.data.reason, "version_before_adjustment");
    const v2 = (await s.result("artifact.put", { name: "report", kind: "full", content: "with tracking error", run_id: run.run_id, epoch: 1 })).artifact;
    const v3 = (await s.result("artifact.put", { name: "report", kind: "full", content: "with tracking error, fixed", run_id: run.run_id, epoch: 1 })).artifact;
    await s.result("adjust.satisfy", { adjustment_id: adj.adjustment_id, artifact: "report", version: v2.version });
    await s.result("adjust.satisfy", { adjustment_id: adj.adjustment_id, artifact: "report", version: v3.version });
    const [a] = (await s.result("adjust.list")).adjustments;
    assert.deepEqual(a.history.map((e: { kind: string; request_id: string | null; version: number | null }) => [e.kind, e.request_id ?? e.version]), [
      ["received", null],
      ["handed", r2.receipt_id],
      ["handed", r3.receipt_id],
      ["satisfied", v2.version],
      ["satisfied", v3.version],
    ]);
    assert.equal(a.handed.request_id, r3.receipt_id, "the latest handoff, the first still in history");
  });

  test("a context ref belongs to its task: another reads it only through a share; coverage is per run", async () => {
    const { task, run } = await research();
    const ctx = await s.result("context.put", { label: "filing", content: "x".repeat(100), source: "filings", run_id: run.run_id, epoch: 1 });
    const mine = await s.result("context.read", { ref: ctx.ref, offset: 0, length: 60, run_id: run.run_id });
    assert.equal(mine.coverage.bytes_read, 60);
    const other = (await s.result("task.start", { description: "unrelated" })).task;
    const refused = await s.error("context.read", { ref: ctx.ref, offset: 0, length: 10 });
    assert.equal(refused.data.kind, "unauthorized");
    assert.equal(refused.data.owner_task, task.task_id);
    assert.equal((await s.error("context.share", { ref: ctx.ref, task_id: other.task_id })).data.kind, "unauthorized", "only the owning task shares");
    await s.result("task.switch", { task_id: task.task_id });
    await s.result("context.share", { ref: ctx.ref, task_id: other.task_id });
    await s.result("task.switch", { task_id: other.task_id });
    const shared = await s.result("context.read", { ref: ctx.ref, offset: 50, length: 50 });
    assert.equal(shared.coverage.bytes_read, 50, "this task's own coverage, not the run's 60");
    assert.equal(shared.coverage.complete, false);
  });

  test("a run keeps its own working checkpoint (settled, open, the methods that failed, the next step), which recovery reads after a crash", async () => {
    const { run } = await research();
    await s.result("run.checkpoint", { run_id: run.run_id, epoch: 1, settled: ["fees confirmed"], open: ["tracking error", "overlap"], note: "draft saved" });
    await s.result("run.checkpoint", {
      run_id: run.run_id,
      epoch: 1,
      settled: ["fees confirmed", "overlap (top 10)"],
      open: ["tracking error"],
      failed: ["the fund site's search: it returns nothing before 2020"],
      next_step: "compute tracking error from the monthly NAVs",
      note: "",
    });
    await kill(s);
    s = new Server(BINARY, ["serve", "--root", root]);
    const seen = await s.result("run.get", { run_id: run.run_id });
    assert.deepEqual(seen.checkpoint.open, ["tracking error"]);
    const claimed = await s.result("run.claim", { run_id: run.run_id, owner: "exec-B" });
    assert.deepEqual(claimed.checkpoint.settled, ["fees confirmed", "overlap (top 10)"]);
    assert.deepEqual([claimed.checkpoint.failed, claimed.checkpoint.next_step], [["the fund site's search: it returns nothing before 2020"], "compute tracking error from the monthly NAVs"], "whoever goes on knows what not to try again");
    assert.equal((await s.error("run.checkpoint", { run_id: run.run_id, epoch: 1, settled: [], open: [] })).data.kind, "stale_epoch");
  });
});

describe("the new methods are described", () => {
  let root = "";
  let s: Server;
  before(async () => {
    root = await testRoot();
    s = new Server(BINARY, ["serve", "--root", root]);
  });
  after(async () => {
    await s.close();
    removeDir(root);
  });

  test("system.describe lists them with their params", async () => {
    const d = await s.result("system.describe");
    const by = new Map(d.methods.map((m: { name: string }) => [m.name, m]));
    for (const m of ["task.list", "task.switch", "run.list", "run.checkpoint", "budget.reconcile", "context.share"]) assert.ok(by.has(m), m);
    const props = (name: string) => Object.keys((by.get(name) as { params: { properties: Record<string, unknown> } }).params.properties);
    for (const p of ["task_id"]) {
      assert.ok(props("task.status").includes(p));
      assert.ok(props("task.finish").includes(p));
      assert.ok(props("task.transition").includes(p));
    }
    assert.ok(props("task.finish").includes("cancel_runs"));
    assert.ok(props("run.continue").includes("tools"));
    assert.ok(props("budget.charge").includes("unknown"));
    assert.ok((by.get("run.continue") as { params: { required: string[] } }).params.required.includes("budget"));
  });
});
