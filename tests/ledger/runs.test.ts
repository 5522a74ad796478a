/** The run ledger's rules, one behaviour per test, on a real root through the real dispatcher. */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { RpcFixture } from "./rpc.ts";

const QUESTION = "Compare the two theme funds with my holdings. First a grounded draft, then the key open questions.";

describe("runs, ownership and receipts", () => {
  let f: RpcFixture;
  let run: { run_id: string; epoch: number };
  beforeEach(async () => {
    f = new RpcFixture();
    await f.ok("task.start", { description: QUESTION });
    run = (await f.ok("run.start", { owner: "exec-A", tools: ["calc", "fetch"], sources: ["fund-docs"], budget: { tool_calls: 10 }, constraints: ["Do not use my personal holdings", "Compare on the given date only"] })).run;
  });
  afterEach(() => f.close());

  test("a run belongs to a task that keeps the user's question and constraints verbatim", async () => {
    assert.equal(run.epoch, 1);
    const got = await f.ok("run.get", { run_id: run.run_id });
    assert.equal(got.question, QUESTION);
    assert.deepEqual(got.constraints, ["Do not use my personal holdings", "Compare on the given date only"]);
    assert.deepEqual(got.run.authorization, { tools: ["calc", "fetch"], sources: ["fund-docs"], send: [], scope: [] });
    assert.equal(got.run.owner, "exec-A");
    assert.equal(got.run.status, "running");
  });

  test("run.start needs a task", async () => {
    const g = new RpcFixture();
    try {
      assert.equal((await g.fail("run.start", { owner: "x" })).data.kind, "no_active_task");
    } finally {
      await g.close();
    }
  });

  test("a receipt is recorded before the effect, and a completed key replays its result instead of a new effect", async () => {
    const begun = await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: "overlap-1", args: { a: 1, b: 2 } });
    assert.equal(begun.receipt.status, "begun");
    assert.equal(begun.replayed, false);
    const listed = await f.ok("receipt.list", { run_id: run.run_id });
    assert.equal(listed.receipts[0].status, "begun", "durable before the effect runs");
    await f.ok("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: begun.receipt.receipt_id, outcome: "completed", result_ref: "C_0001" });
    const again = await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: "overlap-1", args: { b: 2, a: 1 } });
    assert.equal(again.replayed, true);
    assert.equal(again.receipt.receipt_id, begun.receipt.receipt_id);
    assert.equal(again.receipt.result_ref, "C_0001");
    assert.equal((await f.ok("receipt.list", { run_id: run.run_id })).receipts.length, 1);
    assert.equal((await f.ok("budget.status", { run_id: run.run_id })).budget.spent.tool_calls, 1, "a replay is not a new tool call");
  });

  test("the same key with different arguments is refused, naming the receipt", async () => {
    const a = await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: "k", args: [1] });
    const e = await f.fail("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: "k", args: [2] });
    assert.equal(e.data.kind, "conflict");
    assert.equal(e.data.receipt_id, a.receipt.receipt_id);
  });

  test("a completed receipt needs its result reference; a settled one is not settled again", async () => {
    const b = await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: "k", args: {} });
    assert.equal((await f.fail("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: b.receipt.receipt_id, outcome: "completed" })).code, -32602);
    await f.ok("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: b.receipt.receipt_id, outcome: "failed", error: "timeout" });
    assert.equal((await f.fail("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: b.receipt.receipt_id, outcome: "completed", result_ref: "x" })).data.reason, "receipt_status");
    const retry = await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: "k", args: {} });
    assert.equal(retry.receipt.attempt, 2, "a failed effect may be retried as a new attempt");
  });

  test("a tool outside the run's authorization is refused", async () => {
    const e = await f.fail("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "send-email", idempotency_key: "k", args: {} });
    assert.equal(e.data.kind, "unauthorized");
  });

  test("claiming a run bumps the epoch; an older epoch is refused with stale_epoch and changes nothing", async () => {
    const open = await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "in-flight", args: {} });
    const claimed = await f.ok("run.claim", { run_id: run.run_id, owner: "exec-B" });
    assert.equal(claimed.run.epoch, 2);
    assert.equal(claimed.run.run_id, run.run_id, "same run id");
    assert.deepEqual(claimed.run.authorization.tools, ["calc", "fetch"], "same authorization");
    assert.deepEqual(claimed.newly_unknown.map((r: { receipt_id: string }) => r.receipt_id), [open.receipt.receipt_id]);
    const before = await f.ok("receipt.list", { run_id: run.run_id });
    for (const [m, p] of [
      ["receipt.begin", { tool: "calc", idempotency_key: "late", args: {} }],
      ["budget.charge", { cost: 1 }],
      ["run.park", { waiting_for: "x" }],
      ["run.finish", { outcome: "done" }],
    ] as [string, Record<string, unknown>][]) {
      const e = await f.fail(m, { run_id: run.run_id, epoch: 1, ...p });
      assert.equal(e.data.kind, "stale_epoch", m);
      assert.equal(e.data.current_epoch, 2);
    }
    assert.deepEqual(await f.ok("receipt.list", { run_id: run.run_id }), before);
    assert.equal((await f.ok("budget.status", { run_id: run.run_id })).budget.spent.cost, 0);
  });

  test("an unknown receipt is never re-run: beginning its key is refused until it is reconciled with evidence", async () => {
    const open = await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "q1", args: {} });
    await f.ok("run.claim", { run_id: run.run_id, owner: "exec-B" });
    const refused = await f.fail("receipt.begin", { run_id: run.run_id, epoch: 2, tool: "fetch", idempotency_key: "q1", args: {} });
    assert.equal(refused.data.reason, "receipt_unknown");
    assert.equal(refused.data.receipt_id, open.receipt.receipt_id);
    const noEvidence = await f.fail("receipt.settle", { run_id: run.run_id, epoch: 2, receipt_id: open.receipt.receipt_id, outcome: "completed", result_ref: "r" });
    assert.equal(noEvidence.data.kind, "conflict");
    assert.equal((await f.ok("run.get", { run_id: run.run_id })).unknown_receipts.length, 1, "listed until reconciled");
    const rec = await f.ok("receipt.settle", { run_id: run.run_id, epoch: 2, receipt_id: open.receipt.receipt_id, outcome: "completed", result_ref: "r", evidence: "provider log shows request 7 succeeded" });
    assert.equal(rec.receipt.status, "completed");
    assert.equal((await f.ok("run.get", { run_id: run.run_id })).unknown_receipts.length, 0);
    assert.equal((await f.ok("receipt.begin", { run_id: run.run_id, epoch: 2, tool: "fetch", idempotency_key: "q1", args: {} })).replayed, true);
  });

  test("a result that arrives after ownership moved is recorded as late and not applied", async () => {
    const b = await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "slow", args: {} });
    await f.ok("run.claim", { run_id: run.run_id, owner: "exec-B" });
    const e = await f.fail("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: b.receipt.receipt_id, outcome: "completed", result_ref: "late-ref" });
    assert.equal(e.data.kind, "stale_epoch");
    const got = await f.ok("run.get", { run_id: run.run_id });
    assert.equal(got.unknown_receipts[0].status, "unknown");
    const late = got.events.find((x: { kind: string }) => x.kind === "late_result");
    assert.equal(late.detail.result_ref, "late-ref");
    assert.equal(late.detail.applied, false);
  });

  test("a write refused for a stale epoch leaves no file behind", async () => {
    await f.ok("run.claim", { run_id: run.run_id, owner: "exec-B" });
    const { readdirSync } = await import("node:fs");
    const root = await f.root();
    // the blobs: files in raw_data/, or rows of the blobs table for a root on a server
    const blobs = async () => (root.server ? (await root.db.values("SELECT ref FROM blobs")).map((r) => String(r[0])) : readdirSync(`${f.dir}/raw_data`)).sort();
    const before = await blobs();
    assert.equal((await f.fail("artifact.put", { name: "r", kind: "draft", content: "x", run_id: run.run_id, epoch: 1, attachments: [{ name: "a", content: "y" }] })).data.kind, "stale_epoch");
    assert.equal((await f.fail("context.put", { label: "l", content: "z", run_id: run.run_id, epoch: 1 })).data.kind, "stale_epoch");
    assert.deepEqual(await blobs(), before);
  });

  test("observing a run changes nothing", async () => {
    await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "x", args: {} });
    const a = await f.ok("run.get", { run_id: run.run_id });
    await f.ok("receipt.list", { run_id: run.run_id });
    await f.ok("budget.status", { run_id: run.run_id });
    const b = await f.ok("run.get", { run_id: run.run_id });
    // the run's age moves on by itself; everything else is as it was
    for (const x of [a, b]) {
      delete x.budget.elapsed_seconds;
      delete x.budget.seconds_left;
    }
    assert.deepEqual(b, a);
    assert.equal(b.receipt_counts.begun, 1, "observing does not turn begun into unknown");
  });

  test("an explicit continuation is a new run linked to its parent, with the permissions but not the effects or spend", async () => {
    const done = await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: "c", args: {} });
    await f.ok("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: done.receipt.receipt_id, outcome: "completed", result_ref: "r1" });
    const open = await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "o", args: {} });
    await f.ok("run.claim", { run_id: run.run_id, owner: "exec-B" });
    assert.equal((await f.fail("run.continue", { parent_run_id: run.run_id, owner: "exec-C", budget: {} })).data.reason, "run_status", "a running parent is claimed, not continued");
    await f.ok("run.finish", { run_id: run.run_id, epoch: 2, outcome: "window exhausted", gaps: ["full overlap"] });
    assert.equal((await f.fail("run.continue", { parent_run_id: run.run_id, owner: "exec-C" })).data.kind, "invalid_params", "the allowance is explicit");
    const cont = await f.ok("run.continue", { parent_run_id: run.run_id, owner: "exec-C", budget: { tool_calls: 5 } });
    assert.notEqual(cont.run.run_id, run.run_id);
    assert.equal(cont.run.parent_run_id, run.run_id);
    assert.equal(cont.run.epoch, 1);
    assert.deepEqual(cont.run.authorization, { tools: ["calc", "fetch"], sources: ["fund-docs"], send: [], scope: [] });
    assert.deepEqual(cont.open_items.map((r: { receipt_id: string; status: string }) => [r.receipt_id, r.status]), [[open.receipt.receipt_id, "unknown"]]);
    const got = await f.ok("run.get", { run_id: cont.run.run_id });
    assert.equal(got.question, QUESTION);
    assert.equal(got.constraints.length, 2);
    assert.equal(got.budget.spent.tool_calls, 0, "its own budget ledger");
    assert.deepEqual(got.receipt_counts, { begun: 0, completed: 0, failed: 0, unknown: 0 }, "no receipts carried as results");
    assert.equal((await f.ok("receipt.begin", { run_id: cont.run.run_id, epoch: 1, tool: "calc", idempotency_key: "c", args: {} })).replayed, false, "the parent's completed effect is not reused as a new result");
  });

  test("an agent cannot end a task's runs with it (cancel_runs is the host's call)", async () => {
    const e = await f.fail("task.finish", { summary: "done", cancel_runs: true });
    assert.equal(e.data.kind, "unauthorized");
    assert.equal((await f.ok("run.get", { run_id: run.run_id })).run.status, "running", "nothing was cancelled");
    assert.equal((await f.fail("task.finish", { summary: "done" })).data.reason, "open_runs");
  });

  test("a new task never inherits a run's permissions", async () => {
    await f.ok("run.finish", { run_id: run.run_id, epoch: 1, outcome: "done" });
    await f.ok("task.finish", { summary: "done" });
    await f.ok("task.start", { description: "an unrelated new question" });
    const fresh = (await f.ok("run.start", { owner: "exec-A" })).run;
    assert.deepEqual(fresh.authorization, { tools: [], sources: [], send: [], scope: [] });
    assert.equal((await f.fail("receipt.begin", { run_id: fresh.run_id, epoch: 1, tool: "calc", idempotency_key: "k", args: {} })).data.kind, "unauthorized");
  });

  test("yield and cancel are distinct causes; a yield never ends the run", async () => {
    const y = await f.ok("run.yield", { run_id: run.run_id, epoch: 1, reason: "adopt the user's adjustment", request_id: "req-7" });
    assert.equal(y.run.status, "running");
    assert.equal((await f.fail("run.cancel", { run_id: run.run_id, reason: "agent wants out" })).code, -32602, "an agent cancels only with its epoch");
    const c = await f.ok("run.cancel", { run_id: run.run_id, reason: "the user stopped it" }, "host");
    assert.equal(c.run.status, "cancelled");
    const kinds = (await f.ok("run.get", { run_id: run.run_id })).events.map((e: { kind: string }) => e.kind);
    assert.deepEqual(kinds, ["started", "granted", "yielded", "cancelled"]);
    assert.equal((await f.fail("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: "k", args: {} })).data.reason, "run_status");
  });

  test("parking records what the run waits for; waking keeps its identity and ledgers", async () => {
    await f.ok("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, input_tokens: 1200 });
    const p = await f.ok("run.park", { run_id: run.run_id, epoch: 1, waiting_for: "the user's answer about the date" });
    assert.equal(p.run.status, "parked");
    assert.equal(p.run.parked_on, "the user's answer about the date");
    assert.equal((await f.fail("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: "k", args: {} })).data.reason, "run_status");
    const w = await f.ok("run.wake", { run_id: run.run_id, epoch: 1, reason: "answered" });
    assert.equal(w.run.status, "running");
    assert.equal(w.run.run_id, run.run_id);
    assert.equal(w.run.parked_on, null);
    assert.equal((await f.ok("budget.status", { run_id: run.run_id })).budget.spent.input_tokens, 1200);
  });

  test("finishing records the outcome and the open gaps; it does not close unknown effects", async () => {
    await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "x", args: {} });
    await f.ok("run.claim", { run_id: run.run_id, owner: "exec-B" });
    const fin = await f.ok("run.finish", { run_id: run.run_id, epoch: 2, outcome: "draft delivered", gaps: ["holdings of fund B are not disclosed beyond the top 10"] });
    assert.equal(fin.run.status, "finished");
    assert.deepEqual(fin.run.gaps, ["holdings of fund B are not disclosed beyond the top 10"]);
    const got = await f.ok("run.get", { run_id: run.run_id });
    assert.equal(got.unknown_receipts.length, 1);
    assert.ok(got.run.ended_at);
  });
});

describe("budgets", () => {
  let f: RpcFixture;
  beforeEach(async () => {
    f = new RpcFixture();
    await f.ok("task.start", { description: "budgeted research" });
  });
  afterEach(() => f.close());

  test("at a limit new effects are refused but real spending is still recorded; artifacts stay readable and can still be saved", async () => {
    const run = (await f.ok("run.start", { owner: "a", tools: ["calc"], budget: { tool_calls: 2 } })).run;
    for (const k of ["a", "b"]) await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: k, args: {} });
    await f.ok("artifact.put", { name: "report", kind: "draft", content: "early findings", run_id: run.run_id, epoch: 1 });
    const e = await f.fail("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: "c", args: {} });
    assert.equal(e.code, -32007);
    assert.deepEqual(e.data.exhausted_by, ["tool_calls"]);
    const late = await f.ok("budget.charge", { run_id: run.run_id, epoch: 1, cost: 1, note: "the in-flight request's real cost" });
    assert.match(late.charge_id, /^CH_\d+$/);
    assert.equal(late.budget.spent.cost, 1, "usage past the limit is recorded, never lost");
    assert.equal(late.budget.effects_allowed, false);
    assert.equal((await f.ok("budget.status", { run_id: run.run_id })).budget.spent.cost, 1);
    assert.equal((await f.ok("artifact.get", { name: "report" })).artifact.content, "early findings");
    const final = await f.ok("artifact.put", { name: "report", kind: "full", content: "final within budget", run_id: run.run_id, epoch: 1 });
    assert.equal(final.artifact.version, 2);
  });

  test("an unknown charge counts as unknown and, with a ceiling, toward the limit", async () => {
    const run = (await f.ok("run.start", { owner: "a", budget: { cost: 1, unknown_ceiling: { cost: 0.6 } } })).run;
    const s1 = (await f.ok("budget.charge", { run_id: run.run_id, epoch: 1, unknown: true, note: "request sent, usage lost" })).budget;
    assert.equal(s1.unknown_charges, 1);
    assert.equal(s1.spent.cost, 0);
    assert.equal(s1.effective.cost, 0.6);
    assert.equal(s1.exhausted, false);
    await f.ok("budget.charge", { run_id: run.run_id, epoch: 1, unknown: true });
    assert.equal((await f.ok("budget.status", { run_id: run.run_id })).budget.exhausted, true);
  });
});

describe("adjustments", () => {
  let f: RpcFixture;
  let run: { run_id: string };
  beforeEach(async () => {
    f = new RpcFixture();
    await f.ok("task.start", { description: "fund comparison" });
    run = (await f.ok("run.start", { owner: "a", tools: ["model"] })).run;
  });
  afterEach(() => f.close());

  const WORDS = "  Also compare the tracking error,\nplease — 추적 오차도 비교에 포함해 주세요.  ";

  test("received, handed and satisfied are three facts with three timestamps; the user's words stay verbatim", async () => {
    assert.equal((await f.fail("adjust.receive", { text: WORDS })).data.kind, "unauthorized", "the agent does not put words in the user's mouth");
    const adj = (await f.ok("adjust.receive", { text: WORDS, run_id: run.run_id }, "host")).adjustment;
    assert.equal(adj.text, WORDS);
    assert.equal(adj.handed, null);
    assert.equal(adj.satisfied, null);
    assert.equal((await f.fail("adjust.satisfy", { adjustment_id: adj.adjustment_id, artifact: "report", version: 1 })).data.reason, "not_handed");
    assert.equal((await f.fail("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 1, request_id: "req-42" })).data.kind, "not_found", "a handoff names a recorded request");
    const request = (await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "model", idempotency_key: "request-42", args: { prompt: "with the adjustment" } })).receipt;
    const handed = (await f.ok("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 1, request_id: request.receipt_id })).adjustment;
    assert.equal(handed.handed.request_id, request.receipt_id);
    assert.equal((await f.fail("adjust.satisfy", { adjustment_id: adj.adjustment_id, artifact: "report", version: 1 })).data.kind, "not_found", "only an existing artifact version satisfies it");
    await f.ok("artifact.put", { name: "report", kind: "full", content: "with tracking error" });
    const sat = (await f.ok("adjust.satisfy", { adjustment_id: adj.adjustment_id, artifact: "report", version: 1 })).adjustment;
    assert.deepEqual([sat.satisfied.artifact, sat.satisfied.version], ["report", 1]);
    assert.ok(sat.received_at <= sat.handed.at && sat.handed.at <= sat.satisfied.at);
    assert.equal((await f.ok("adjust.list")).adjustments[0].text, WORDS);
  });

  test("nothing can rewrite an adjustment's text, not even SQL", async () => {
    const adj = (await f.ok("adjust.receive", { text: WORDS }, "host")).adjustment;
    const root = await f.root();
    await assert.rejects(root.db.execute({ sql: "UPDATE adjustments SET text = 'a summary' WHERE seq = 1" }), /verbatim/);
    assert.equal((await f.ok("adjust.list")).adjustments[0].text, WORDS);
    assert.ok(adj);
  });
});

describe("staged artifacts", () => {
  let f: RpcFixture;
  beforeEach(async () => {
    f = new RpcFixture();
    await f.ok("task.start", { description: "report" });
  });
  afterEach(() => f.close());

  test("versions per name: a full version supersedes earlier ones, which stay readable", async () => {
    await f.ok("artifact.put", { name: "report", kind: "draft", content: "v1 draft" });
    await f.ok("artifact.put", { name: "report", kind: "increment", content: "v2 new finding" });
    const full = (await f.ok("artifact.put", { name: "report", kind: "full", content: "v3 whole report" })).artifact;
    assert.deepEqual(full.supersedes, [1, 2]);
    assert.equal((await f.ok("artifact.get", { name: "report" })).artifact.content, "v3 whole report");
    const old = (await f.ok("artifact.get", { name: "report", version: 1 })).artifact;
    assert.equal(old.content, "v1 draft");
    assert.equal(old.superseded_by, 3);
    const list = (await f.ok("artifact.list", { name: "report" })).artifacts.map((a: { version: number; kind: string }) => [a.version, a.kind]);
    assert.deepEqual(list, [[1, "draft"], [2, "increment"], [3, "full"]]);
    assert.equal((await f.fail("artifact.put", { name: "report", kind: "full", content: "x", supersedes: [9] })).data.kind, "not_found");
  });

  test("preview, saved, exported and opened are separate marks with their own times; a failure is marked as one", async () => {
    await f.ok("artifact.put", { name: "report", kind: "draft", content: "x" });
    await f.ok("artifact.mark", { name: "report", version: 1, mark: "preview" });
    await f.ok("artifact.mark", { name: "report", version: 1, mark: "saved" });
    const a = (await f.ok("artifact.mark", { name: "report", version: 1, mark: "exported", ok: false, detail: "PDF renderer crashed" })).artifact;
    assert.deepEqual(a.marks.map((m: { mark: string; ok: boolean }) => [m.mark, m.ok]), [["preview", true], ["saved", true], ["exported", false]]);
    assert.ok(a.marks.every((m: { at: string }) => typeof m.at === "string"));
    assert.equal(a.marks.some((m: { mark: string }) => m.mark === "opened"), false, "exported is not opened");
  });

  test("one failed attachment is marked as such and hides none of the rest", async () => {
    const a = (await f.ok("artifact.put", {
      name: "report",
      kind: "full",
      content: "body",
      attachments: [{ name: "holdings.csv", content: "fund,weight" }, { name: "source.pdf", error: "the source PDF was corrupt" }, { name: "chart.svg", content: "<svg/>" }],
    })).artifact;
    assert.deepEqual(a.attachments.map((x: { name: string; status: string }) => [x.name, x.status]), [["chart.svg", "ok"], ["holdings.csv", "ok"], ["source.pdf", "failed"]]);
    assert.equal((await f.ok("artifact.get", { name: "report", version: 1, attachment: "holdings.csv" })).content, "fund,weight");
    assert.equal((await f.ok("artifact.get", { name: "report" })).artifact.content, "body");
    assert.equal((await f.fail("artifact.get", { name: "report", version: 1, attachment: "source.pdf" })).data.reason, "attachment_failed");
  });
});

describe("externalised context", () => {
  let f: RpcFixture;
  beforeEach(async () => {
    f = new RpcFixture();
    await f.ok("task.start", { description: "context" });
  });
  afterEach(() => f.close());

  test("a large result is stored by reference and read back by exact range, with coverage that never claims a partial read is whole", async () => {
    const body = "row,value\n" + Array.from({ length: 2000 }, (_, i) => `${i},${i * 3}`).join("\n");
    const put = await f.ok("context.put", { label: "fund B holdings", content: body });
    assert.match(put.ref, /^C_\d+$/);
    assert.equal(put.size, Buffer.byteLength(body));
    const { createHash } = await import("node:crypto");
    assert.equal(put.sha256, createHash("sha256").update(body).digest("hex"));
    const first = await f.ok("context.read", { ref: put.ref, offset: 0, length: 100 });
    assert.equal(first.text, body.slice(0, 100));
    assert.equal(first.coverage.complete, false);
    assert.equal(first.coverage.bytes_read, 100);
    const rest = await f.ok("context.read", { ref: put.ref, offset: 100, length: put.size });
    assert.equal(rest.length, put.size - 100);
    assert.equal(rest.coverage.complete, true);
  });

  test("a range that cuts a multi-byte character comes back as exact bytes, not as text", async () => {
    const put = await f.ok("context.put", { label: "ko", content: "서버를" });
    const r = await f.ok("context.read", { ref: put.ref, offset: 0, length: 4 });
    assert.equal(r.text, null);
    assert.deepEqual([...Buffer.from(r.data_base64, "base64")], [...Buffer.from("서버를").subarray(0, 4)]);
  });

  test("a source outside the run's authorization is refused", async () => {
    const run = (await f.ok("run.start", { owner: "a", sources: ["fund-docs"] })).run;
    assert.equal((await f.fail("context.put", { label: "x", content: "y", source: "private-email", run_id: run.run_id, epoch: 1 })).data.kind, "unauthorized");
    assert.ok((await f.ok("context.put", { label: "x", content: "y", source: "fund-docs", run_id: run.run_id, epoch: 1 })).ref);
  });
});
