/**
 * A claimed run fences its old executor out of the ledger's other writes too: handing off an
 * adjustment and reconciling an unknown charge (in process, on a real root).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { RpcFixture } from "./rpc.ts";

describe("the run's epoch fences adjust.handoff and budget.reconcile", () => {
  // Kills: `adjust.handoff` not fenced (src/ledger/adjustments.ts handoff without
  // `await fence(tx, run.seq, epoch, at)`): an executor whose run was claimed could still record
  // which request carried the user's adjustment.
  test("adjust.handoff with a stale epoch is refused with stale_epoch and records nothing; the current epoch may hand it off", async () => {
    const f = new RpcFixture();
    try {
      await f.ok("task.start", { description: "fund comparison" });
      const run = (await f.ok("run.start", { owner: "exec-A", tools: ["model"] })).run;
      const adj = (await f.ok("adjust.receive", { text: "Also compare the tracking error.", run_id: run.run_id }, "host")).adjustment;
      const request = (await f.ok("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "model", idempotency_key: "request-1", args: { prompt: "with the adjustment" } })).receipt;
      const claimed = (await f.ok("run.claim", { run_id: run.run_id, owner: "exec-B" })).run;
      assert.equal(claimed.epoch, 2);

      const e = await f.fail("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 1, request_id: request.receipt_id });
      assert.equal(e.data.kind, "stale_epoch");
      assert.equal(e.data.current_epoch, 2);
      const after = (await f.ok("adjust.list")).adjustments[0];
      assert.equal(after.handed, null, "nothing handed");
      assert.deepEqual(after.history.map((h: { kind: string }) => h.kind), ["received"]);
      assert.equal((await f.ok("run.get", { run_id: run.run_id })).run.updated_at, claimed.updated_at, "the run was not touched");

      const handed = (await f.ok("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 2, request_id: request.receipt_id })).adjustment;
      assert.equal(handed.handed.request_id, request.receipt_id);
    } finally {
      await f.close();
    }
  });

  // Kills: `budget.reconcile` not fenced (src/ledger/budget.ts
  // reconcileCharge without `await fence(tx, seq, epoch, at)`): an executor that lost the run could
  // still declare what an unknown charge cost and so reopen the run's budget for new effects.
  test("budget.reconcile with a stale epoch is refused with stale_epoch; the charge stays unknown and new effects stay refused", async () => {
    const f = new RpcFixture();
    try {
      await f.ok("task.start", { description: "fund comparison" });
      const run = (await f.ok("run.start", { owner: "exec-A", tools: ["fetch"], budget: { cost: 5 } })).run;
      const lost = await f.ok("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, unknown: true, note: "usage never reported" });
      assert.equal(lost.budget.effects_allowed, false);
      await f.ok("run.claim", { run_id: run.run_id, owner: "exec-B" });

      const e = await f.fail("budget.reconcile", { run_id: run.run_id, epoch: 1, charge_id: lost.charge_id, cost: 0.7, evidence: "invoice line 14" });
      assert.equal(e.data.kind, "stale_epoch");
      assert.equal(e.data.current_epoch, 2);
      const still = (await f.ok("budget.status", { run_id: run.run_id })).budget;
      assert.deepEqual(still.unknown_charge_ids, [lost.charge_id], "the charge is still unknown");
      assert.equal(still.effects_allowed, false);
      assert.equal((await f.fail("receipt.begin", { run_id: run.run_id, epoch: 2, tool: "fetch", idempotency_key: "k", args: {} })).data.kind, "budget_exhausted");

      const known = (await f.ok("budget.reconcile", { run_id: run.run_id, epoch: 2, charge_id: lost.charge_id, cost: 0.7, evidence: "invoice line 14" })).budget;
      assert.deepEqual(known.unknown_charge_ids, []);
      assert.equal(known.effects_allowed, true);
    } finally {
      await f.close();
    }
  });
});
