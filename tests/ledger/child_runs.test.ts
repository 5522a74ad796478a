/**
 * Child runs (local, and on sqld under LONGRUN_TEST_STORE=sqld): a running run starts a child with
 * a slice of its budget and a subset of its grant; the slice is reserved in the parent while the
 * child is open, its spend rolls up, what it left returns when it ends; a child can never widen the
 * parent's grant or hold more than the parent has left; cancelling the parent cancels its children,
 * and a parent with open children cannot finish. One open run per task still holds for top-level runs.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { LIMITS } from "../../src/core/limits.ts";
import { RpcFixture } from "./rpc.ts";

describe("child runs", () => {
  let fx: RpcFixture;
  beforeEach(() => (fx = new RpcFixture()));
  afterEach(() => fx.close());

  async function parentRun(budget: Record<string, unknown> = { requests: 10, cost: 5 }) {
    await fx.ok("task.start", { description: "survey the funds" });
    return (await fx.ok("run.start", { owner: "lead", tools: ["web_search", "fetch"], sources: ["*"], send: ["openai"], budget })).run;
  }

  test("a slice is reserved in the parent while the child is open, its spend rolls up, and the rest returns when it ends", async () => {
    const parent = await parentRun();
    const { run: child } = await fx.ok("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub-1", budget: { requests: 4, cost: 2 }, tools: ["fetch"], reason: "read the 2024 reports" });
    assert.deepEqual([child.status, child.child_of, child.epoch, child.authorization.tools, child.authorization.send], ["running", parent.run_id, 1, ["fetch"], ["openai"]]);
    assert.equal(child.grant.decided_by, `run:${parent.run_id}`);
    let b = (await fx.ok("budget.status", { run_id: parent.run_id })).budget;
    assert.deepEqual([b.spent.requests, b.reserved.requests, b.remaining.requests, b.remaining.cost], [0, 4, 6, 3]);
    // the child spends inside its slice; the parent sees the spend and the rest still held
    await fx.ok("budget.charge", { run_id: child.run_id, epoch: 1, requests: 3, cost: 1.5 });
    b = (await fx.ok("budget.status", { run_id: parent.run_id })).budget;
    assert.deepEqual([b.spent.requests, b.reserved.requests, b.remaining.requests], [3, 1, 6]);
    // a second slice cannot take what the first holds
    const greedy = await fx.fail("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub-2", budget: { requests: 7, cost: 1 } });
    assert.deepEqual([greedy.data.kind, greedy.data.field, greedy.data.limit], ["limit_exceeded", "budget.requests", 6]);
    // ended: the unspent part returns to the parent
    await fx.ok("run.finish", { run_id: child.run_id, epoch: 1, outcome: "read two reports" });
    b = (await fx.ok("budget.status", { run_id: parent.run_id })).budget;
    assert.deepEqual([b.spent.requests, b.reserved.requests, b.remaining.requests, b.spent.cost], [3, 0, 7, 1.5]);
    // run.get shows the child with its spend and receipts; the task's total counts the spend once
    const seen = await fx.ok("run.get", { run_id: parent.run_id });
    assert.deepEqual(seen.children.map((c: { run_id: string; status: string; spent: { requests: number } }) => [c.run_id, c.status, c.spent.requests]), [[child.run_id, "finished", 3]]);
    assert.equal((await fx.ok("run.list")).total.spent.requests, 3);
  });

  test("a child never widens the parent's grant and needs a slice of every limited dimension", async () => {
    const parent = await parentRun();
    const wider = await fx.fail("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub", budget: { requests: 1, cost: 1 }, tools: ["fetch", "shell"] });
    assert.deepEqual([wider.data.kind, wider.data.field, wider.data.wider], ["unauthorized", "tools", ["shell"]]);
    const unsliced = await fx.fail("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub", budget: { requests: 1 } });
    assert.deepEqual([unsliced.data.kind, unsliced.data.field], ["invalid_params", "budget.cost"]);
    assert.match(unsliced.message, /limits cost/);
    const ceiling = await fx.fail("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub", budget: { requests: 1, cost: 1, unknown_ceiling: { cost: 0 } } });
    assert.equal(ceiling.data.field, "budget.unknown_ceiling");
    // a stale epoch starts nothing; nothing was created by the refusals
    assert.equal((await fx.fail("run.child", { run_id: parent.run_id, epoch: 2, owner: "sub", budget: { requests: 1, cost: 1 } })).data.kind, "stale_epoch");
    assert.deepEqual((await fx.ok("run.get", { run_id: parent.run_id })).children, []);
  });

  test("the child's time ends with the parent's, and an exhausted parent starts no child", async () => {
    await fx.ok("task.start", { description: "timed" });
    const deadline = new Date(Date.now() + 3_600_000).toISOString();
    const parent = (await fx.ok("run.start", { owner: "lead", tools: ["fetch"], budget: { requests: 2, deadline } })).run;
    const child = (await fx.ok("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub", budget: { requests: 1, wall_seconds: 86_400 } })).run;
    assert.equal(child.budget_limits.deadline, deadline, "a child's time never outlasts its parent's");
    assert.equal(child.budget_limits.wall_seconds, undefined);
    await fx.ok("budget.charge", { run_id: parent.run_id, epoch: 1, requests: 1 });
    const none = await fx.fail("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub-2", budget: { requests: 1 } });
    assert.equal(none.data.kind, "budget_exhausted", "one request spent, one held by the open child: nothing left to slice");
  });

  test("an unknown charge in a child leaves the parent uncertain until it is reconciled", async () => {
    const parent = await parentRun();
    const child = (await fx.ok("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub", budget: { requests: 2, cost: 1 } })).run;
    const { charge_id } = await fx.ok("budget.charge", { run_id: child.run_id, epoch: 1, requests: 1, unknown: true });
    let b = (await fx.ok("budget.status", { run_id: parent.run_id })).budget;
    assert.deepEqual([b.uncertain, b.uncertain_children, b.effects_allowed], [["cost"], 1, false]);
    await fx.ok("budget.reconcile", { run_id: child.run_id, epoch: 1, charge_id, cost: 0.25, evidence: "invoice 17" });
    b = (await fx.ok("budget.status", { run_id: parent.run_id })).budget;
    assert.deepEqual([b.uncertain, b.effects_allowed, b.spent.cost], [[], true, 0.25]);
  });

  test("cancelling the parent cancels its open children; a parent with open children cannot finish", async () => {
    const parent = await parentRun();
    const a = (await fx.ok("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub-a", budget: { requests: 1, cost: 1 } })).run;
    const grand = (await fx.ok("run.child", { run_id: a.run_id, epoch: 1, owner: "sub-a-1", budget: { requests: 1, cost: 1 } })).run;
    const refused = await fx.fail("run.finish", { run_id: parent.run_id, epoch: 1, outcome: "done" });
    assert.deepEqual([refused.data.reason, refused.data.children], ["children_open", [a.run_id]]);
    assert.equal((await fx.ok("run.get", { run_id: parent.run_id })).run.status, "running");
    // a child is not a second top-level run: the one-open-run rule still holds
    assert.equal((await fx.fail("run.start", { owner: "other" })).data.reason, "run_active");
    await fx.ok("run.cancel", { run_id: parent.run_id, reason: "the user stopped it" }, "host");
    for (const r of [a, grand]) {
      const seen = await fx.ok("run.get", { run_id: r.run_id });
      assert.equal(seen.run.status, "cancelled");
      assert.match(seen.events.at(-1).detail.reason, new RegExp(`parent run ${parent.run_id} was cancelled`));
    }
    // the child's owner learns it at its next beat
    assert.equal((await fx.ok("run.heartbeat", { run_id: a.run_id, epoch: 1 })).stop, "cancelled");
    const kinds = (await fx.ok("events.read", { run_id: parent.run_id })).events.map((e: { kind: string }) => e.kind);
    assert.ok(kinds.includes("run.child_started"), kinds.join(","));
  });

  test("children nest at most LIMITS.child_depth levels", async () => {
    let run = await parentRun({});
    for (let level = 1; level <= LIMITS.child_depth; level++) {
      run = (await fx.ok("run.child", { run_id: run.run_id, epoch: 1, owner: `level-${level}`, budget: {} })).run;
    }
    const deeper = await fx.fail("run.child", { run_id: run.run_id, epoch: 1, owner: "too deep", budget: {} });
    assert.deepEqual([deeper.data.kind, deeper.data.limit, deeper.data.actual], ["limit_exceeded", LIMITS.child_depth, LIMITS.child_depth + 1]);
  });

  test("the host's task.finish with cancel_runs cancels the parent and its children, and the task ends", async () => {
    const parent = await parentRun();
    const child = (await fx.ok("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub", budget: { requests: 1, cost: 1 } })).run;
    assert.equal((await fx.fail("task.finish", { summary: "done" }, "host")).data.reason, "open_runs", "a child is an open run of the task");
    const out = await fx.ok("task.finish", { summary: "done", cancel_runs: true }, "host");
    assert.deepEqual([...out.cancelled_runs].sort(), [parent.run_id, child.run_id].sort());
    assert.equal((await fx.ok("run.get", { run_id: child.run_id })).run.status, "cancelled");
  });

  test("many finished children never push the parent off run.list, and the task's total counts the spend once", async () => {
    const parent = await parentRun({ requests: 1000 });
    await fx.ok("budget.charge", { run_id: parent.run_id, epoch: 1, requests: 7 });
    for (let i = 0; i < 3; i++) {
      const c = (await fx.ok("run.child", { run_id: parent.run_id, epoch: 1, owner: `sub-${i}`, budget: { requests: 10 } })).run;
      await fx.ok("budget.charge", { run_id: c.run_id, epoch: 1, requests: 1, ...(i === 0 ? { unknown: ["cost"] } : {}) });
      await fx.ok("run.finish", { run_id: c.run_id, epoch: 1, outcome: "done" });
    }
    const list = await fx.ok("run.list");
    assert.equal(list.runs[0].run_id, parent.run_id, "top-level runs come first");
    assert.deepEqual([list.total.spent.requests, list.total.unknown_charges], [10, 1], "a child's unknown charge is counted in the total");
  });

  test("a finished or parked parent starts no child", async () => {
    const parent = await parentRun();
    await fx.ok("run.park", { run_id: parent.run_id, epoch: 1, waiting_for: "the user" });
    const parked = await fx.fail("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub", budget: { requests: 1, cost: 1 } });
    assert.deepEqual([parked.data.kind, parked.data.status], ["conflict", "parked"]);
  });
  test("a continuation of the parent carries its children's unknown effects and charges: the key stays refused and the budget uncertain until reconciled", async () => {
    const parent = await parentRun();
    const child = (await fx.ok("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub", budget: { requests: 2, cost: 1 }, tools: ["fetch"] })).run;
    const begun = (await fx.ok("receipt.begin", { run_id: child.run_id, epoch: 1, tool: "fetch", idempotency_key: "report-2024", args: { url: "https://example.org/2024.pdf" } })).receipt;
    const { charge_id } = await fx.ok("budget.charge", { run_id: child.run_id, epoch: 1, requests: 1, unknown: true });
    // the child's worker died mid-fetch: its new owner finds the effect unknown
    assert.equal((await fx.ok("run.claim", { run_id: child.run_id, owner: "sub-2" })).newly_unknown.length, 1);
    await fx.ok("run.finish", { run_id: child.run_id, epoch: 2, outcome: "the worker lost the answer" });
    await fx.ok("run.finish", { run_id: parent.run_id, epoch: 1, outcome: "window exhausted" });
    const cont = await fx.ok("run.continue", { parent_run_id: parent.run_id, owner: "lead-2", budget: { requests: 5, cost: 5 } });
    const items = cont.open_items.map((i: { receipt_id?: string; charge_id?: string; run_id: string }) => [i.receipt_id ?? i.charge_id, i.run_id]);
    assert.deepEqual(items, [[begun.receipt_id, child.run_id], [charge_id, child.run_id]]);
    let b = (await fx.ok("budget.status", { run_id: cont.run.run_id })).budget;
    assert.deepEqual([b.uncertain, b.effects_allowed, b.inherited_unknown.map((c: { charge_id: string }) => c.charge_id)], [["cost"], false, [charge_id]]);
    // the cost is reconciled on the child that recorded it; the effect from the continuation that carries it
    await fx.ok("budget.reconcile", { run_id: child.run_id, epoch: 2, charge_id, cost: 0.1, evidence: "invoice 18" });
    b = (await fx.ok("budget.status", { run_id: cont.run.run_id })).budget;
    assert.deepEqual([b.uncertain, b.effects_allowed], [[], true]);
    const again = await fx.fail("receipt.begin", { run_id: cont.run.run_id, epoch: 1, tool: "fetch", idempotency_key: "report-2024", args: { url: "https://example.org/2024.pdf" } });
    assert.deepEqual([again.data.reason, again.data.receipt_id], ["receipt_unknown", begun.receipt_id], "the child's unknown effect is not begun again");
    await fx.ok("receipt.settle", { run_id: cont.run.run_id, epoch: 1, receipt_id: begun.receipt_id, outcome: "completed", evidence: "the file is in the archive", result_ref: "A_0001" });
    assert.equal((await fx.ok("receipt.begin", { run_id: cont.run.run_id, epoch: 1, tool: "fetch", idempotency_key: "report-2024", args: { url: "https://example.org/2024.pdf" } })).replayed, false);
  });
  test("a grandchild's spend rolls up through its parent, and run.get counts each child's own receipts", async () => {
    const parent = await parentRun({ requests: 20, cost: 10 });
    const a = (await fx.ok("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub-a", budget: { requests: 6, cost: 4 } })).run;
    const b = (await fx.ok("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub-b", budget: { requests: 2, cost: 1 } })).run;
    const grand = (await fx.ok("run.child", { run_id: a.run_id, epoch: 1, owner: "sub-a-1", budget: { requests: 3, cost: 2 } })).run;
    await fx.ok("budget.charge", { run_id: grand.run_id, epoch: 1, requests: 2, cost: 1.5 });
    await fx.ok("budget.charge", { run_id: a.run_id, epoch: 1, requests: 1 });
    for (const [run, key] of [[a, "a-1"], [a, "a-2"], [b, "b-1"]] as const) await fx.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: key, args: {} });
    // open: a holds its whole slice (6 requests: 3 spent by it and its child, 3 held), b its 2
    let budget = (await fx.ok("budget.status", { run_id: parent.run_id })).budget;
    assert.deepEqual([budget.spent.requests, budget.reserved.requests, budget.remaining.requests, budget.spent.cost], [3, 5, 12, 1.5]);
    const seen = (await fx.ok("run.get", { run_id: parent.run_id })).children;
    assert.deepEqual(
      seen.map((c: { run_id: string; spent: { requests: number }; receipt_counts: { begun: number } }) => [c.run_id, c.spent.requests, c.receipt_counts.begun]),
      [[a.run_id, 3, 2], [b.run_id, 0, 1]],
    );
    // the grandchild ends: what it did not spend returns to a, which still holds its slice
    await fx.ok("run.finish", { run_id: grand.run_id, epoch: 1, outcome: "done" });
    budget = (await fx.ok("budget.status", { run_id: parent.run_id })).budget;
    assert.deepEqual([budget.spent.requests, budget.reserved.requests], [3, 5]);
    assert.deepEqual((await fx.ok("budget.status", { run_id: a.run_id })).budget.reserved.requests, 0);
  });
  test("an effect left unknown anywhere in the work is begun again by none of it: not the parent, a sibling, nor a continuation's child", async () => {
    const parent = await parentRun();
    const slice = { budget: { requests: 1, cost: 1 }, tools: ["fetch"] };
    const c1 = (await fx.ok("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub-1", ...slice })).run;
    const c2 = (await fx.ok("run.child", { run_id: parent.run_id, epoch: 1, owner: "sub-2", ...slice })).run;
    const mail = { tool: "fetch", idempotency_key: "mail-1", args: { to: "bank" } };
    const lost = (await fx.ok("receipt.begin", { run_id: c1.run_id, epoch: 1, ...mail })).receipt;
    await fx.ok("run.claim", { run_id: c1.run_id, owner: "sub-1b" });
    await fx.ok("run.finish", { run_id: c1.run_id, epoch: 2, outcome: "lost the answer" });
    for (const run of [parent, c2]) {
      const e = await fx.fail("receipt.begin", { run_id: run.run_id, epoch: 1, ...mail });
      assert.deepEqual([e.data.reason, e.data.receipt_id], ["receipt_unknown", lost.receipt_id], `${run.run_id} does not resend it`);
    }
    await fx.ok("run.finish", { run_id: c2.run_id, epoch: 1, outcome: "done" });
    await fx.ok("run.finish", { run_id: parent.run_id, epoch: 1, outcome: "window exhausted" });
    const cont = (await fx.ok("run.continue", { parent_run_id: parent.run_id, owner: "lead-2", budget: { requests: 5, cost: 5 } })).run;
    const child = (await fx.ok("run.child", { run_id: cont.run_id, epoch: 1, owner: "sub-3", ...slice })).run;
    const e = await fx.fail("receipt.begin", { run_id: child.run_id, epoch: 1, ...mail });
    assert.equal(e.data.reason, "receipt_unknown", "a continuation's child does not resend it either");
    // reconciled with evidence, the key is free for the work again
    await fx.ok("receipt.settle", { run_id: cont.run_id, epoch: 1, receipt_id: lost.receipt_id, outcome: "completed", evidence: "the bank has the mail", result_ref: "m1" });
    assert.equal((await fx.ok("receipt.begin", { run_id: child.run_id, epoch: 1, ...mail })).replayed, false);
  });
});
