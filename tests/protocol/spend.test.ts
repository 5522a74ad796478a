/**
 * What a run's spending says is what was spent (issue 24), through the compiled binary over
 * stdio, on a local root and (LONGRUN_TEST_STORE=sqld) on a libSQL server: reconciling a charge
 * fills in only what it left unknown.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir } from "../helpers.ts";
import { testRoot } from "../sqld.ts";
import { Server, TARGETS } from "./server.ts";

describe("spending reads as it was recorded", () => {
  let dir = "";
  const servers: Server[] = [];
  beforeEach(async () => (dir = await testRoot()));
  afterEach(async () => {
    for (const s of servers.splice(0)) if (s.child.exitCode === null && s.child.signalCode === null) await s.close();
    removeDir(dir);
  });
  const serve = () => {
    const s = new Server(TARGETS[0]!, ["serve", "--root", dir]);
    servers.push(s);
    return s;
  };

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
});
