/**
 * What a run's spending says is what was spent (issue 24), through the compiled binary over
 * stdio, on a local root and (LONGRUN_TEST_STORE=sqld) on a libSQL server: reconciling a charge
 * fills in only what it left unknown; an unknown cost anywhere in a run chain is an open item of
 * its continuations and keeps their budget uncertain until reconciled; a receipt's kind decides
 * where its effect counts (a model request as a request, not a tool call).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { serveEachTest } from "../support/each_root.ts";

describe("spending reads as it was recorded", () => {
  const serve = serveEachTest();

  test("a partial reconcile fills in the unknown cost and keeps the charge's known requests; a known dimension is refused, naming it", async () => {
    const s = serve();
    await s.result("task.start", { description: "partial reconcile" });
    const run = (await s.result("run.start", { owner: "exec-A", tools: ["fetch"], budget: { cost: 5 } })).run;
    await s.result("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, cost: 0.1 });
    const lost = await s.result("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, unknown: ["cost"], note: "cost never reported" });
    assert.equal(lost.budget.spent.requests, 2);
    assert.equal(lost.budget.remaining.cost, null);

    const wrong = await s.error("budget.reconcile", { run_id: run.run_id, epoch: 1, charge_id: lost.charge_id, requests: 0, cost: 0.3, evidence: "invoice" });
    assert.equal(wrong.code, -32602);
    assert.equal(wrong.data.kind, "invalid_params");
    assert.equal(wrong.data.field, "requests");
    assert.deepEqual(wrong.data.known_dimensions, ["requests"]);
    assert.match(wrong.message, /already knows requests/);
    assert.equal((await s.result("budget.status", { run_id: run.run_id })).budget.remaining.cost, null, "a refused reconcile changes nothing");

    const known = (await s.result("budget.reconcile", { run_id: run.run_id, epoch: 1, charge_id: lost.charge_id, cost: 0.3, evidence: "invoice line 3" })).budget;
    assert.equal(known.spent.requests, 2, "the request the charge knew stays counted");
    assert.equal(Math.round(known.spent.cost * 100) / 100, 0.4);
    assert.equal(Math.round(known.remaining.cost * 100) / 100, 4.6);
    assert.equal(known.unknown_charges, 0);
    await s.close();
    const fresh = serve();
    const again = (await fresh.result("run.get", { run_id: run.run_id })).budget;
    assert.equal(again.spent.requests, 2, "also from a new process");
    const total = (await fresh.result("run.list", {})).total;
    assert.equal(total.spent.requests, 2);
  });

  test("a parent's unknown cost is an open item of the continuation and keeps the chain's remaining budget uncertain until reconciled on the parent", async () => {
    const s = serve();
    await s.result("task.start", { description: "chain unknown" });
    const parent = (await s.result("run.start", { owner: "exec-A", tools: ["fetch"], budget: { cost: 5 } })).run;
    const lost = await s.result("budget.charge", { run_id: parent.run_id, epoch: 1, requests: 1, unknown: ["cost"], note: "usage never reported" });
    await s.result("run.finish", { run_id: parent.run_id, epoch: 1, outcome: "stopped", gaps: ["cost of the last request"] });

    const cont = await s.result("run.continue", { parent_run_id: parent.run_id, owner: "exec-B", budget: { cost: 2 } });
    const child = cont.run;
    assert.deepEqual(cont.open_items.map((o: any) => o.charge_id), [lost.charge_id], "the parent's unknown charge travels as an open item");
    assert.equal(cont.open_items[0].run_id, parent.run_id);
    assert.deepEqual(cont.open_items[0].unknown, ["cost"]);

    const seen = await s.result("run.get", { run_id: child.run_id });
    assert.deepEqual(seen.open_items.map((o: any) => o.charge_id), [lost.charge_id]);
    assert.equal(seen.budget.remaining.cost, null, "what is left is not known while the chain has an unknown cost");
    assert.deepEqual(seen.budget.uncertain, ["cost"]);
    assert.equal(seen.budget.effects_allowed, false);
    assert.equal(seen.budget.spent.requests, 0, "the parent's known spend is not the continuation's");
    assert.equal(seen.budget.unknown_charges, 0);
    assert.equal(seen.budget.inherited_unknown_charges, 1);
    assert.deepEqual(seen.budget.inherited_unknown.map((c: any) => c.charge_id), [lost.charge_id]);
    const refused = await s.error("receipt.begin", { run_id: child.run_id, epoch: 1, tool: "fetch", idempotency_key: "k", args: {} });
    assert.equal(refused.data.kind, "budget_exhausted");
    assert.match(refused.message, new RegExp(`${lost.charge_id} on earlier run ${parent.run_id}`));
    assert.match(refused.message, /has 1 charge\(s\) of unknown amount \(1 in an earlier run of its chain\)/);
    const list = await s.result("run.list", {});
    assert.equal(list.runs.find((r: any) => r.run_id === child.run_id).open_items, 1);
    assert.equal(list.total.unknown_charges, 1, "the task's total counts the charge once");

    // a grandchild inherits it too; one with a ceiling counts it there instead
    await s.result("run.finish", { run_id: child.run_id, epoch: 1, outcome: "nothing allowed" });
    const grand = (await s.result("run.continue", { parent_run_id: child.run_id, owner: "exec-C", budget: { cost: 2, unknown_ceiling: { cost: 0.5 } } })).run;
    const g = await s.result("run.get", { run_id: grand.run_id });
    assert.deepEqual(g.open_items.map((o: any) => o.charge_id), [lost.charge_id]);
    assert.equal(g.budget.remaining.cost, 1.5, "counted at the continuation's ceiling");
    assert.equal(g.budget.effects_allowed, true);
    await s.result("run.finish", { run_id: grand.run_id, epoch: 1, outcome: "done" });

    await s.result("budget.reconcile", { run_id: parent.run_id, epoch: 1, charge_id: lost.charge_id, cost: 0.4, evidence: "invoice line 9" });
    await s.close();
    const fresh = serve();
    for (const id of [child.run_id, grand.run_id]) {
      const after = await fresh.result("run.get", { run_id: id });
      assert.deepEqual(after.open_items, [], `reconciled on the parent, it is cleared for ${id}`);
      assert.equal(after.budget.remaining.cost, 2);
      assert.deepEqual(after.budget.uncertain, []);
      assert.equal(after.budget.inherited_unknown_charges, 0);
    }
    assert.equal((await fresh.result("run.list", {})).total.unknown_charges, 0);
  });

  test("receipts have a kind: a model request counts as a request, not a tool call; a child run as neither; run.get counts them by kind", async () => {
    const s = serve();
    await s.result("task.start", { description: "receipt kinds" });
    const run = (await s.result("run.start", { owner: "exec-A", tools: ["fetch", "model", "worker"], budget: { requests: 2, tool_calls: 1 } })).run;
    const m = await s.result("receipt.begin", { run_id: run.run_id, epoch: 1, kind: "model_request", tool: "model", idempotency_key: "req-1", args: { prompt: "p" } });
    assert.equal(m.receipt.kind, "model_request");
    let b = (await s.result("budget.status", { run_id: run.run_id })).budget;
    assert.deepEqual([b.spent.requests, b.spent.tool_calls], [1, 0], "a model request counts as a request, not as a tool call");
    // a child_run receipt names a real child of the run (run.child); any other name is refused
    assert.equal((await s.error("receipt.begin", { run_id: run.run_id, epoch: 1, kind: "child_run", tool: "worker", idempotency_key: "child-0", args: {} })).data.reason, "not_a_child_run");
    const sub = (await s.result("run.child", { run_id: run.run_id, epoch: 1, owner: "sub", budget: { requests: 0, tool_calls: 0 } })).run;
    const c = await s.result("receipt.begin", { run_id: run.run_id, epoch: 1, kind: "child_run", tool: sub.run_id, idempotency_key: "child-1", args: {} });
    assert.equal(c.receipt.kind, "child_run");
    b = (await s.result("budget.status", { run_id: run.run_id })).budget;
    assert.deepEqual([b.spent.requests, b.spent.tool_calls], [1, 0], "a child run spends its own run's budget, not this one's");
    const t = await s.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "fetch-1", args: {} });
    assert.equal(t.receipt.kind, "tool_call", "tool_call is the default");
    b = (await s.result("budget.status", { run_id: run.run_id })).budget;
    assert.deepEqual([b.spent.requests, b.spent.tool_calls], [1, 1]);
    assert.deepEqual(b.exhausted_by, ["tool_calls"], "the one tool call allowed is the fetch, not the model request");
    const other = await s.error("receipt.begin", { run_id: run.run_id, epoch: 1, kind: "tool_call", tool: "model", idempotency_key: "req-1", args: { prompt: "p" } });
    assert.equal(other.data.kind, "conflict");
    assert.equal(other.data.reason, "receipt_kind_differs", "one key, one kind of effect");
    assert.equal(other.data.recorded_kind, "model_request");
    const bad = await s.error("receipt.begin", { run_id: run.run_id, epoch: 1, kind: "prayer", tool: "fetch", idempotency_key: "x", args: {} });
    assert.equal(bad.data.kind, "invalid_params");
    await s.close();
    const fresh = serve();
    const got = await fresh.result("run.get", { run_id: run.run_id });
    assert.deepEqual(got.receipts_by_kind, { tool_call: 1, model_request: 1, child_run: 1 });
    assert.deepEqual((await fresh.result("receipt.list", { run_id: run.run_id })).receipts.map((r: any) => r.kind), ["model_request", "child_run", "tool_call"]);
  });
});
