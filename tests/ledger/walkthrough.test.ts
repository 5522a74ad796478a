/**
 * Seed 003, section 10, as the acceptance test: one synthetic research task through six stages,
 * driven over stdio against the compiled binary, with the serving process really killed
 * (SIGKILL) between stages 3 and 4. Every fact is checked from the records afterwards (a fresh
 * process and the database itself), not from what a step printed. Along the way, the questions
 * a user of seed 003 asks next: a duplicate run after the crash, a new short question beside the
 * running research, an unknown effect met again in the continuation, usage past the limit, and a
 * report version older than the adjustment offered as its answer. Every call here is the host's
 * (stdio), so its runs are granted as they start; walkthrough_grants.test.ts is the same walkthrough
 * split as issue 23 asks: the agent (HTTP agent token) requests the run and its continuation, the
 * host (host token) grants them, narrowed.
 */
import assert from "node:assert/strict";
import { localStateDir, openTestDb } from "../support/state.ts";
import { testRoot } from "../support/sqld.ts";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Database } from "../../src/db/database.ts";
import { removeDir, tempDir } from "../support/helpers.ts";
import { Server, TARGETS } from "../support/server.ts";

const QUESTION = "Compare the two theme funds with my portfolio. First give me a grounded draft, then make the key open questions explicit.";
const ADJUSTMENT = "Please include tracking error in the comparison too.";

describe("seed 003 walkthrough: six stages, one SIGKILL", () => {
  let root = "";
  const ids: Record<string, string> = {};
  before(async () => (root = await testRoot()));
  after(() => removeDir(root));

  test("the six stages, then the records", async () => {
    // ---- stages 1-3 in the first process -------------------------------------------------
    const first = new Server(TARGETS[0]!, ["serve", "--root", root]);
    await first.result("task.start", { description: QUESTION });
    const run = (await first.result("run.start", {
      owner: "main@process-1",
      tools: ["read_file", "calc", "fetch", "model"],
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
    // req-4 is a model request, recorded as a receipt: the handoff names it, so it is evidence
    const req4 = await first.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "model", idempotency_key: "req-4", args: { prompt: "draft + tracking error" } });
    ids.req4 = req4.receipt.receipt_id;
    await first.result("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 1, request_id: req4.receipt.receipt_id });
    // req-4 sends a request for tracking-error data; the process dies before its result is settled.
    const inFlight = await first.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "tracking-error-series", args: { funds: ["A", "B"], window: "3y" } });
    ids.inFlight = inFlight.receipt.receipt_id;
    await first.result("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, unknown: ["input_tokens", "output_tokens", "cost"], note: "req-4 sent, usage never reported" });

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
      // A missing process is no licence to start another research: the new process must claim.
      const duplicate = await second.error("run.start", { owner: "main@process-2", tools: ["fetch"] });
      assert.equal(duplicate.data.reason, "run_active");
      assert.equal(duplicate.data.run_id, run.run_id);
      assert.match(duplicate.message, /run\.claim/);
      const claimed = await second.result("run.claim", { run_id: run.run_id, owner: "main@process-2" });
      assert.equal(claimed.run.run_id, run.run_id);
      assert.equal(claimed.run.epoch, 2);
      assert.deepEqual(claimed.newly_unknown.map((r: { receipt_id: string }) => r.receipt_id).sort(), [ids.req4, ids.inFlight].sort());
      const replay = await second.result("receipt.begin", { run_id: run.run_id, epoch: 2, tool: "calc", idempotency_key: "overlap-top10", args: { universe: "B-top10", method: "weight-min" } });
      assert.equal(replay.replayed, true);
      assert.equal(replay.receipt.result_ref, ids.childCtx);
      const rerun = await second.call("receipt.begin", { run_id: run.run_id, epoch: 2, tool: "fetch", idempotency_key: "tracking-error-series", args: { funds: ["A", "B"], window: "3y" } });
      assert.equal((rerun.error as any).data.reason, "receipt_unknown", "the unknown request is not re-sent");
      assert.match((await second.result("artifact.get", { name: "fund-comparison", version: 1 })).artifact.content, /^Draft:/);

      // A short, independent question while the research runs: a new task, current, inheriting
      // nothing; the research run goes on in the background and is still there afterwards.
      const research = (await second.result("task.status")).task.task_id;
      const quick = await second.result("task.start", { description: "What does TER stand for?" });
      assert.equal(quick.previous_task, research);
      assert.equal(quick.task.access_mode, "read_only");
      assert.equal((await second.result("run.list")).runs.length, 0, "the new question has no runs");
      const background = await second.result("receipt.begin", { run_id: run.run_id, epoch: 2, tool: "read_file", idempotency_key: "fee-footnotes", args: { file: "A.pdf", page: 12 } });
      await second.result("receipt.settle", { run_id: run.run_id, epoch: 2, receipt_id: background.receipt.receipt_id, outcome: "completed", result_ref: costsCtx.ref });
      await second.result("task.finish", { summary: "TER is the total expense ratio" });
      const listed = (await second.result("task.list")).tasks;
      assert.deepEqual(listed.map((t: { task_id: string; status: string }) => [t.task_id, t.status]).sort(), [[research, "in_progress"], [quick.task.task_id, "completed"]].sort());
      await second.result("task.switch", { task_id: research });
      assert.equal((await second.result("task.status")).runs[0].run_id, run.run_id, "a reopened view finds the research run");

      // Stage 5: the window's boundary. Progress kept, gaps explicit, spend preserved; the user
      // explicitly continues in a new run linked to this one.
      await second.result("artifact.put", { name: "fund-comparison", kind: "increment", content: "New: B discloses only its top 10; full overlap cannot be computed yet.", run_id: run.run_id, epoch: 2 });
      await second.result("run.finish", { run_id: run.run_id, epoch: 2, outcome: "draft and partial overlap delivered; context window exhausted", gaps: ["tracking error (request outcome unknown)", "full holdings overlap"] });
      // the continuation may narrow the parent's permissions, never widen them
      const wider = await second.error("run.continue", { parent_run_id: run.run_id, owner: "main@process-2", budget: { requests: 2 }, tools: ["fetch", "browser"] });
      assert.equal(wider.data.kind, "unauthorized");
      // the parent's lost usage leaves its cost unknown for the chain too: the continuation counts it at a ceiling
      const cont = await second.result("run.continue", { parent_run_id: run.run_id, owner: "main@process-2", budget: { requests: 2, cost: 2, unknown_ceiling: { cost: 0.25 } }, tools: ["fetch", "model"] });
      ids.continuation = cont.run.run_id;
      assert.deepEqual(cont.open_items.filter((r: { receipt_id?: string }) => r.receipt_id).map((r: { receipt_id: string }) => r.receipt_id).sort(), [ids.req4, ids.inFlight].sort());
      assert.deepEqual(cont.open_items.filter((r: { charge_id?: string }) => r.charge_id).map((c: { run_id: string; unknown: string[] }) => [c.run_id, c.unknown]), [[run.run_id, ["input_tokens", "output_tokens", "cost"]]], "the parent's unknown charge is an open item too");
      const c2 = cont.run.run_id;

      // Stage 6: the full updated report supersedes the draft; the adjustment is satisfied; the
      // remaining gap is recorded, not claimed closed.
      // the parent's unknown request is met again: never re-sent until reconciled with evidence
      const again = await second.error("receipt.begin", { run_id: c2, epoch: 1, tool: "fetch", idempotency_key: "tracking-error-series", args: { funds: ["A", "B"], window: "3y" } });
      assert.equal(again.data.reason, "receipt_unknown");
      assert.equal(again.data.receipt_id, ids.inFlight);
      await second.result("receipt.settle", { run_id: c2, epoch: 1, receipt_id: ids.inFlight, outcome: "failed", error: "no response", evidence: "provider request log: no request for tracking-error-series was received" });
      await second.result("receipt.settle", { run_id: c2, epoch: 1, receipt_id: ids.req4, outcome: "completed", result_ref: "provider-log:req-4", evidence: "provider log: req-4 answered, 3,100 tokens" });
      const te = await second.result("receipt.begin", { run_id: c2, epoch: 1, tool: "fetch", idempotency_key: "tracking-error-series", args: { funds: ["A", "B"], window: "3y" } });
      assert.equal(te.replayed, false);
      const teCtx = await second.result("context.put", { label: "tracking error 3y", content: "A 1.8%, B 2.6%", source: "fund-filings", run_id: c2, epoch: 1 });
      await second.result("receipt.settle", { run_id: c2, epoch: 1, receipt_id: te.receipt.receipt_id, outcome: "completed", result_ref: teCtx.ref });
      // A receipt the continuation does not carry is not its to settle.
      const foreign = await second.error("receipt.settle", { run_id: c2, epoch: 1, receipt_id: costs.receipt.receipt_id, outcome: "failed", evidence: "guess" });
      assert.equal(foreign.data.kind, "not_found");
      // The request that finishes the report reaches the limit; what it really cost is still recorded.
      await second.result("budget.charge", { run_id: c2, epoch: 1, requests: 1, cost: 0.2 });
      const past = await second.result("budget.charge", { run_id: c2, epoch: 1, requests: 1, cost: 0.3, note: "in-flight request finished after the limit" });
      assert.equal(past.budget.spent.requests, 2);
      assert.equal(past.budget.effects_allowed, false);
      assert.equal((await second.error("receipt.begin", { run_id: c2, epoch: 1, tool: "fetch", idempotency_key: "one-more", args: {} })).data.kind, "budget_exhausted");
      const full = (await second.result("artifact.put", {
        name: "fund-comparison",
        kind: "full",
        content: "Report: A is cheaper; tracking error A 1.8% vs B 2.6%; overlap limited to B's top 10 (full overlap not answerable from current disclosures).",
        run_id: c2,
        epoch: 1,
      })).artifact;
      // the draft was written before the adjustment: it cannot be what answers it
      assert.equal((await second.error("adjust.satisfy", { adjustment_id: ids.adjustment, artifact: "fund-comparison", version: 1 })).data.reason, "version_before_adjustment");
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
      assert.deepEqual(parent.unknown_receipts, [], "both unknowns were reconciled from the continuation");
      assert.equal(parent.budget.unknown_charges, 1, "the lost usage is counted unknown, not zero");
      assert.equal(parent.budget.spent.cost, 0.12);
      const kinds = parent.events.map((e: { kind: string }) => e.kind);
      for (const k of ["started", "yielded", "claimed", "finished", "continued_by"]) assert.ok(kinds.includes(k), k);
      assert.equal(kinds.includes("cancelled"), false, "the yield was never recorded as a cancel");

      const child = await reader.result("run.get", { run_id: ids.continuation });
      assert.equal(child.run.parent_run_id, ids.run);
      assert.equal(child.question, QUESTION);
      assert.deepEqual(child.run.authorization.tools, ["fetch", "model"], "narrowed");
      assert.deepEqual(child.open_items.filter((r: { receipt_id?: string }) => r.receipt_id), [], "open effects end when reconciled");
      assert.equal(child.open_items.filter((r: { charge_id?: string }) => r.charge_id).length, 1, "the parent's unknown charge stays open until budget.reconcile");
      assert.equal(child.budget.inherited_unknown_charges, 1);
      assert.equal(child.budget.spent.requests, 2, "usage past the limit is there");
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
      assert.equal(a.handed.request_id, ids.req4);
      assert.deepEqual(a.history.map((e: { kind: string }) => e.kind), ["received", "handed", "satisfied"]);
      assert.deepEqual([a.satisfied.artifact, a.satisfied.version], ["fund-comparison", Number(ids.fullVersion)]);

      const ctx = await reader.result("context.read", { ref: ids.childCtx, offset: 200, length: 200_000 });
      assert.equal(ctx.coverage.complete, true, "with the first 200 bytes read in stage 2 by the same task");
      const byRun = await reader.result("context.read", { ref: ids.childCtx, offset: 0, length: 10, run_id: ids.continuation });
      assert.equal(byRun.coverage.complete, false, "coverage is per reader: the continuation has read only 10 bytes of it");
    } finally {
      await reader.close();
    }

    const db = await openTestDb(root);
    try {
      assert.equal((await db.execute("PRAGMA integrity_check")).rows[0]![0], "ok");
      const overlapRuns = await db.execute({ sql: "SELECT COUNT(*) AS n FROM receipts WHERE idempotency_key = 'overlap-top10'" });
      assert.equal(Number(overlapRuns.rows[0]!.n), 1, "the completed computation was never begun twice");
      const statuses = await db.execute("SELECT idempotency_key, status FROM receipts ORDER BY seq");
      assert.deepEqual(statuses.rows.map((r) => [r.idempotency_key, r.status]), [
        ["costs-and-dates", "completed"],
        ["overlap-top10", "completed"],
        ["req-4", "completed"],
        ["tracking-error-series", "failed"],
        ["fee-footnotes", "completed"],
        ["tracking-error-series", "completed"],
      ]);
    } finally {
      await db.close();
    }
  });
});
