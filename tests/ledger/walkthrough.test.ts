/**
 * Seed 003, section 10, as the acceptance test: one synthetic research task through six stages,
 * driven over stdio against the compiled binary, with the serving process really killed
 * (SIGKILL) between stages 3 and 4. Every fact is checked from the records afterwards (a fresh
 * process and the database itself), not from what a step printed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Database } from "../../src/memory/db.ts";
import { removeDir, tempDir } from "../helpers.ts";
import { Server, TARGETS } from "../protocol/server.ts";

const QUESTION = "Compare the two theme funds with my portfolio. First give me a grounded draft, then make the key open questions explicit.";
const ADJUSTMENT = "Please include tracking error in the comparison too.";

describe("seed 003 walkthrough: six stages, one SIGKILL", () => {
  let root = "";
  const ids: Record<string, string> = {};
  before(() => (root = tempDir()));
  after(() => removeDir(root));

  test("the six stages, then the records", async () => {
    // ---- stages 1-3 in the first process -------------------------------------------------
    const first = new Server(TARGETS[0]!, ["serve", "--root", root]);
    await first.result("task.start", { description: QUESTION });
    const run = (await first.result("run.start", {
      owner: "main@process-1",
      tools: ["read_file", "calc", "fetch"],
      sources: ["fund-filings"],
      budget: { requests: 50, tool_calls: 40, cost: 5, unknown_ceiling: { cost: 0.25 } },
      constraints: ["Do not use personal holdings", "Compare on the filing date only"],
    })).run;
    ids.run = run.run_id;

    // Stage 1: a deliverable finding first. Costs and dates confirmed; a draft the user can read.
    const costs = await first.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "read_file", idempotency_key: "costs-and-dates", args: { files: ["A.pdf", "B.pdf"] } });
    const costsCtx = await first.result("context.put", { label: "fee tables and filing dates", content: "fund A TER 0.45%, filed 2026-06-30\nfund B TER 0.60%, filed 2026-06-30\n", source: "fund-filings", run_id: run.run_id, epoch: 1 });
    await first.result("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: costs.receipt.receipt_id, outcome: "completed", result_ref: costsCtx.ref });
    await first.result("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, input_tokens: 5200, output_tokens: 900, cost: 0.12 });
    const draft = (await first.result("artifact.put", {
      name: "fund-comparison",
      kind: "draft",
      content: "Draft: A is cheaper (0.45% vs 0.60%). Overlap is limited to B's disclosed top-10 holdings.",
      run_id: run.run_id,
      epoch: 1,
      note: "conditional: overlap coverage limited",
    })).artifact;
    await first.result("artifact.mark", { name: "fund-comparison", version: draft.version, mark: "preview" });
    await first.result("artifact.mark", { name: "fund-comparison", version: draft.version, mark: "saved" });

    // Stage 2: a child does the files and the computation; its results come back as references.
    const overlap = await first.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: "overlap-top10", args: { method: "weight-min", universe: "B-top10" } });
    const holdings = "isin,weight_a,weight_b\n" + Array.from({ length: 400 }, (_, i) => `XS${String(i).padStart(6, "0")},${(i % 7) / 10},${(i % 5) / 10}`).join("\n");
    const childCtx = await first.result("context.put", { label: "child: overlap computation inputs and result", content: holdings, source: "fund-filings", run_id: run.run_id, epoch: 1 });
    await first.result("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: overlap.receipt.receipt_id, outcome: "completed", result_ref: childCtx.ref });
    ids.overlapReceipt = overlap.receipt.receipt_id;
    ids.childCtx = childCtx.ref;
    const keyPoint = await first.result("context.read", { ref: childCtx.ref, offset: 0, length: 200 });
    assert.equal(keyPoint.coverage.complete, false, "Main re-read only the key part");

    // Stage 3: the user adds a requirement; the current request yields; the next one carries it.
    const adj = (await first.result("adjust.receive", { text: ADJUSTMENT, run_id: run.run_id })).adjustment;
    ids.adjustment = adj.adjustment_id;
    await first.result("run.yield", { run_id: run.run_id, epoch: 1, reason: "adopt the user's adjustment", request_id: "req-3", adjustment_id: adj.adjustment_id });
    await first.result("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 1, request_id: "req-4" });
    // req-4 sends a request for tracking-error data; the process dies before its result is settled.
    const inFlight = await first.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "tracking-error-series", args: { funds: ["A", "B"], window: "3y" } });
    ids.inFlight = inFlight.receipt.receipt_id;
    await first.result("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, unknown: true, note: "req-4 sent, usage never reported" });

    // ---- the service dies -------------------------------------------------------------------
    process.kill(first.child.pid!, "SIGKILL");
    assert.equal((await first.exited).signal, "SIGKILL");

    // ---- stages 4-6 in a new process ----------------------------------------------------
    const second = new Server(TARGETS[0]!, ["serve", "--root", root]);
    try {
      // Stage 4: same-run recovery. The finished computation is re-read, not re-run; the
      // unsettled request is unknown; the draft is still readable.
      const observed = await second.result("run.get", { run_id: run.run_id });
      assert.equal(observed.run.epoch, 1, "observing after the crash changes nothing");
      const claimed = await second.result("run.claim", { run_id: run.run_id, owner: "main@process-2" });
      assert.equal(claimed.run.run_id, run.run_id);
      assert.equal(claimed.run.epoch, 2);
      assert.deepEqual(claimed.newly_unknown.map((r: { receipt_id: string }) => r.receipt_id), [ids.inFlight]);
      const replay = await second.result("receipt.begin", { run_id: run.run_id, epoch: 2, tool: "calc", idempotency_key: "overlap-top10", args: { universe: "B-top10", method: "weight-min" } });
      assert.equal(replay.replayed, true);
      assert.equal(replay.receipt.result_ref, ids.childCtx);
      const rerun = await second.call("receipt.begin", { run_id: run.run_id, epoch: 2, tool: "fetch", idempotency_key: "tracking-error-series", args: { funds: ["A", "B"], window: "3y" } });
      assert.equal((rerun.error as any).data.reason, "receipt_unknown", "the unknown request is not re-sent");
      assert.match((await second.result("artifact.get", { name: "fund-comparison", version: 1 })).artifact.content, /^Draft:/);

      // Stage 5: the window's boundary. Progress kept, gaps explicit, spend preserved; the user
      // explicitly continues in a new run linked to this one.
      await second.result("artifact.put", { name: "fund-comparison", kind: "increment", content: "New: B discloses only its top 10; full overlap cannot be computed yet.", run_id: run.run_id, epoch: 2 });
      await second.result("run.finish", { run_id: run.run_id, epoch: 2, outcome: "draft and partial overlap delivered; context window exhausted", gaps: ["tracking error (request outcome unknown)", "full holdings overlap"] });
      const cont = await second.result("run.continue", { parent_run_id: run.run_id, owner: "main@process-2", budget: { requests: 20, cost: 2 } });
      ids.continuation = cont.run.run_id;
      assert.deepEqual(cont.open_items.map((r: { receipt_id: string }) => r.receipt_id), [ids.inFlight]);
      const c2 = cont.run.run_id;

      // Stage 6: the full updated report supersedes the draft; the adjustment is satisfied; the
      // remaining gap is recorded, not claimed closed.
      const te = await second.result("receipt.begin", { run_id: c2, epoch: 1, tool: "fetch", idempotency_key: "tracking-error-series-v2", args: { funds: ["A", "B"], window: "3y", source: "filings" } });
      const teCtx = await second.result("context.put", { label: "tracking error 3y", content: "A 1.8%, B 2.6%", source: "fund-filings", run_id: c2, epoch: 1 });
      await second.result("receipt.settle", { run_id: c2, epoch: 1, receipt_id: te.receipt.receipt_id, outcome: "completed", result_ref: teCtx.ref });
      // The parent's unknown effect belongs to the parent: the continuation cannot settle it as its own.
      const foreign = await second.error("receipt.settle", { run_id: c2, epoch: 1, receipt_id: ids.inFlight, outcome: "failed", evidence: "guess" });
      assert.equal(foreign.data.kind, "not_found");
      const full = (await second.result("artifact.put", {
        name: "fund-comparison",
        kind: "full",
        content: "Report: A is cheaper; tracking error A 1.8% vs B 2.6%; overlap limited to B's top 10 (full overlap not answerable from current disclosures).",
        run_id: c2,
        epoch: 1,
      })).artifact;
      await second.result("adjust.satisfy", { adjustment_id: ids.adjustment, artifact: "fund-comparison", version: full.version });
      await second.result("run.finish", { run_id: c2, epoch: 1, outcome: "full report delivered", gaps: ["full holdings overlap: B discloses only its top 10"] });
      ids.fullVersion = String(full.version);
    } finally {
      await second.close();
    }

    // ---- the records, read back fresh --------------------------------------------------------
    const reader = new Server(TARGETS[0]!, ["serve", "--root", root]);
    try {
      const parent = await reader.result("run.get", { run_id: ids.run });
      assert.equal(parent.question, QUESTION, "the original question, verbatim");
      assert.deepEqual(parent.constraints, ["Do not use personal holdings", "Compare on the filing date only"]);
      assert.equal(parent.run.status, "finished");
      assert.deepEqual(parent.run.gaps, ["tracking error (request outcome unknown)", "full holdings overlap"]);
      assert.equal(parent.run.owner, "main@process-2");
      assert.equal(parent.unknown_receipts[0].receipt_id, ids.inFlight);
      assert.equal(parent.budget.unknown_charges, 1, "the lost usage is counted unknown, not zero");
      assert.equal(parent.budget.spent.cost, 0.12);
      const kinds = parent.events.map((e: { kind: string }) => e.kind);
      for (const k of ["started", "yielded", "claimed", "finished", "continued_by"]) assert.ok(kinds.includes(k), k);
      assert.equal(kinds.includes("cancelled"), false, "the yield was never recorded as a cancel");

      const child = await reader.result("run.get", { run_id: ids.continuation });
      assert.equal(child.run.parent_run_id, ids.run);
      assert.equal(child.question, QUESTION);
      assert.deepEqual(child.run.authorization.tools, ["read_file", "calc", "fetch"]);
      assert.deepEqual(child.open_items.map((r: { receipt_id: string }) => r.receipt_id), [ids.inFlight], "carried as an open item, never as a result");
      assert.equal(child.budget.unknown_charges, 0, "its own budget ledger");
      assert.deepEqual(child.run.gaps, ["full holdings overlap: B discloses only its top 10"]);

      const versions = (await reader.result("artifact.list", { name: "fund-comparison" })).artifacts;
      assert.deepEqual(versions.map((v: { kind: string }) => v.kind), ["draft", "increment", "full"]);
      assert.deepEqual(versions[2].supersedes, [1, 2]);
      assert.equal(versions[0].superseded_by, 3);
      assert.deepEqual(versions[0].marks.map((m: { mark: string }) => m.mark), ["preview", "saved"]);
      assert.match((await reader.result("artifact.get", { name: "fund-comparison", version: 1 })).artifact.content, /^Draft:/, "the draft stays readable");

      const [a] = (await reader.result("adjust.list")).adjustments;
      assert.equal(a.text, ADJUSTMENT, "the user's words, verbatim");
      assert.equal(a.handed.request_id, "req-4");
      assert.deepEqual([a.satisfied.artifact, a.satisfied.version], ["fund-comparison", Number(ids.fullVersion)]);

      const ctx = await reader.result("context.read", { ref: ids.childCtx, offset: 200, length: 200_000 });
      assert.equal(ctx.coverage.complete, true);
    } finally {
      await reader.close();
    }

    const db = await Database.open("file://" + join(root, "memory.db"));
    try {
      assert.equal((await db.execute("PRAGMA integrity_check")).rows[0]![0], "ok");
      const overlapRuns = await db.execute({ sql: "SELECT COUNT(*) AS n FROM receipts WHERE idempotency_key = 'overlap-top10'" });
      assert.equal(Number(overlapRuns.rows[0]!.n), 1, "the completed computation was never begun twice");
      const statuses = await db.execute("SELECT idempotency_key, status FROM receipts ORDER BY seq");
      assert.deepEqual(statuses.rows.map((r) => [r.idempotency_key, r.status]), [
        ["costs-and-dates", "completed"],
        ["overlap-top10", "completed"],
        ["tracking-error-series", "unknown"],
        ["tracking-error-series-v2", "completed"],
      ]);
    } finally {
      await db.close();
    }
  });
});
