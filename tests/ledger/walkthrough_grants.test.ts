/**
 * Seed 003's walkthrough (section 10) as the host and the agent really split it (issue 23): the
 * agent speaks with the agent token over HTTP, the host with the host token, against the compiled
 * binary (`longrun http`), and the serving process is SIGKILLed between stages 3 and 4. The host
 * starts the task with its terms; the agent *asks* for the run and for its continuation; only the
 * host's grant (narrowed where it can show it) lets an effect begin; a run parked for the user is
 * woken by the host with the user's answer; the continuation after the budget ran out is a request
 * the host grants. Every fact is checked afterwards from the records (a fresh stdio process and
 * the database), including that no receipt of a run was begun before its grant.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { openTestDb } from "../support/state.ts";
import { removeDir, tempDir } from "../support/helpers.ts";
import { type HttpChild, startHttpChild } from "../http/start.ts";
import { Server, TARGETS } from "../support/server.ts";

const QUESTION = "Compare the two theme funds with my portfolio. First give me a grounded draft, then make the key open questions explicit.";
const ADJUSTMENT = "Please include tracking error in the comparison too.";
const CONSTRAINTS = ["Do not use personal holdings", "Compare on the filing date only"];
const OUTCOME = "A grounded comparison of funds A and B, with the open questions explicit";
const BOUNDS = { tools: ["read_file", "calc", "fetch", "model"], sources: ["fund-filings"], send: ["model-provider"], budget: { cost: 5, unknown_ceiling: { cost: 0.25 } } };

type Answer = { result?: any; error?: { code: number; message: string; data: Record<string, any> } };

/** One `longrun http` process and its two tokens: the agent's and the host's. */
class Sides {
  private constructor(
    readonly srv: HttpChild,
    readonly tokens: { host_token: string; agent_token: string },
  ) {}

  static async start(root: string): Promise<Sides> {
    const srv = await startHttpChild(TARGETS[0]!.argv, ["--root", root, "--port", "0"]);
    return new Sides(srv, JSON.parse(readFileSync(srv.info.token_file, "utf8")));
  }

  async call(side: "host" | "agent", method: string, params: Record<string, unknown> = {}): Promise<Answer> {
    const token = side === "host" ? this.tokens.host_token : this.tokens.agent_token;
    const r = await fetch(`${this.srv.info.url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
    return (await r.json()) as Answer;
  }

  async ok(side: "host" | "agent", method: string, params: Record<string, unknown> = {}): Promise<any> {
    const a = await this.call(side, method, params);
    if (a.error) throw new Error(`${method} (${side}) failed: ${JSON.stringify(a.error)}`);
    return a.result;
  }

  async refused(side: "host" | "agent", method: string, params: Record<string, unknown> = {}): Promise<NonNullable<Answer["error"]>> {
    const a = await this.call(side, method, params);
    if (!a.error) throw new Error(`${method} (${side}) unexpectedly succeeded: ${JSON.stringify(a.result)}`);
    return a.error;
  }

  /** What the agent does: every call of the research itself goes with the agent token. */
  agent = (method: string, params: Record<string, unknown> = {}) => this.ok("agent", method, params);
  host = (method: string, params: Record<string, unknown> = {}) => this.ok("host", method, params);

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (this.srv.child.exitCode === null && this.srv.child.signalCode === null) process.kill(this.srv.child.pid!, signal);
    await this.srv.exited;
  }
}

describe("seed 003 walkthrough with host grants: the agent asks, the host grants, one SIGKILL (binary, HTTP)", () => {
  let root = "";
  const ids: Record<string, string> = {};
  let first: Sides | null = null;
  let second: Sides | null = null;
  before(() => (root = tempDir()));
  after(async () => {
    await first?.stop();
    await second?.stop();
    removeDir(root);
  });

  test("the six stages with the host's grants, then the records", async () => {
    // ---- the host starts the task with the user's terms; stages 1-3 in the first process -----
    first = await Sides.start(root);
    const s1 = first;
    assert.equal((await s1.refused("agent", "task.start", { description: QUESTION, constraints: CONSTRAINTS })).data.kind, "unauthorized", "a task's terms are the host's");
    const started = await s1.host("task.start", { description: QUESTION, constraints: CONSTRAINTS, desired_outcome: OUTCOME, bounds: BOUNDS });
    assert.equal(started.terms.set_by, "host:http");

    // The agent asks for the run. Beyond the task's terms it is refused outright; within them it is a request.
    const beyond = await s1.refused("agent", "run.start", { owner: "main@process-1", tools: ["read_file", "calc", "fetch", "model", "browser"], sources: ["fund-filings"], budget: { cost: 5 } });
    assert.equal(beyond.data.reason, "wider_than_task_terms");
    const asked = (await s1.agent("run.start", {
      owner: "main@process-1",
      tools: ["read_file", "calc", "fetch", "model"],
      sources: ["fund-filings"],
      send: ["model-provider"],
      budget: { requests: 50, tool_calls: 40, cost: 5, unknown_ceiling: { cost: 0.25 } },
      reason: "compare the funds as the user asked",
    })).run;
    ids.run = asked.run_id;
    assert.equal(asked.status, "requested");
    assert.equal(asked.grant.requested_by, "agent:http");
    // no effect begins before the grant, and the agent cannot grant itself
    assert.equal((await s1.call("agent", "receipt.begin", { run_id: asked.run_id, epoch: 1, tool: "read_file", idempotency_key: "too-early", args: {} })).error!.data.reason, "run_not_granted");
    assert.equal((await s1.refused("agent", "run.grant", { run_id: asked.run_id, reason: "I approve myself" })).data.kind, "unauthorized");
    // The host grants it narrowed: three requests, not fifty (the window the walkthrough runs out of).
    const granted = (await s1.host("run.grant", {
      run_id: asked.run_id,
      budget: { requests: 3, tool_calls: 40, cost: 5, unknown_ceiling: { cost: 0.25 } },
      reason: "the user allows three model requests for the draft",
    })).run;
    assert.equal(granted.status, "running");
    assert.equal(granted.budget_limits.requests, 3);
    assert.equal(granted.grant.decided_by, "host:http");
    const run = granted;

    // Stage 1: a deliverable finding first. Costs and dates confirmed; a draft the user can read.
    const costs = await s1.agent("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "read_file", source: "fund-filings", idempotency_key: "costs-and-dates", args: { files: ["A.pdf", "B.pdf"] } });
    const costsCtx = await s1.agent("context.put", { label: "fee tables and filing dates", content: "fund A TER 0.45%, filed 2026-06-30\nfund B TER 0.60%, filed 2026-06-30\n", source: "fund-filings", run_id: run.run_id, epoch: 1 });
    await s1.agent("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: costs.receipt.receipt_id, outcome: "completed", result_ref: costsCtx.ref });
    await s1.agent("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, input_tokens: 5200, output_tokens: 900, cost: 0.12 });
    const draft = (await s1.agent("artifact.put", { name: "fund-comparison", kind: "draft", content: "Draft: A is cheaper (0.45% vs 0.60%). Overlap is limited to B's disclosed top-10 holdings.", run_id: run.run_id, epoch: 1 })).artifact;
    await s1.agent("artifact.mark", { name: "fund-comparison", version: draft.version, mark: "preview" });
    // a source the host did not grant is refused at receipt.begin
    assert.equal((await s1.call("agent", "receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", source: "the-web", idempotency_key: "web", args: {} })).error!.data.field, "sources");

    // Stage 2: the computation; its result comes back as a reference.
    const overlap = await s1.agent("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "calc", idempotency_key: "overlap-top10", args: { method: "weight-min", universe: "B-top10" } });
    const holdings = "isin,weight_a,weight_b\n" + Array.from({ length: 400 }, (_, i) => `XS${String(i).padStart(6, "0")},${(i % 7) / 10},${(i % 5) / 10}`).join("\n");
    const childCtx = await s1.agent("context.put", { label: "overlap computation inputs and result", content: holdings, source: "fund-filings", run_id: run.run_id, epoch: 1 });
    await s1.agent("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: overlap.receipt.receipt_id, outcome: "completed", result_ref: childCtx.ref });
    ids.childCtx = childCtx.ref;

    // The run needs the user: which window for tracking error? Parked for the user, only the host wakes it, with the answer.
    await s1.agent("run.park", { run_id: run.run_id, epoch: 1, waiting_for: "which window the user wants for tracking error", for_user: true });
    assert.equal((await s1.refused("agent", "run.wake", { run_id: run.run_id, epoch: 1, reason: "I'll pick 3y" })).data.reason, "parked_for_user");
    await s1.host("run.wake", { run_id: run.run_id, reason: "the user answered", answer: { text: "Three years, please", data: { window: "3y" } } });
    const answer = (await s1.agent("run.get", { run_id: run.run_id })).run.answer;
    assert.deepEqual([answer.text, answer.data, answer.by], ["Three years, please", { window: "3y" }, "host:http"]);

    // Stage 3: the user adds a requirement; the current request yields; the next one carries it.
    // the user's words come through the host
    const adj = (await s1.host("adjust.receive", { text: ADJUSTMENT, run_id: run.run_id })).adjustment;
    ids.adjustment = adj.adjustment_id;
    await s1.agent("run.yield", { run_id: run.run_id, epoch: 1, reason: "adopt the user's adjustment", request_id: "req-3", adjustment_id: adj.adjustment_id });
    // req-4 is a model request: it sends data to the provider, which the grant names
    assert.equal((await s1.call("agent", "receipt.begin", { run_id: run.run_id, epoch: 1, tool: "model", send_to: "another-provider", idempotency_key: "req-4", args: {} })).error!.data.field, "send");
    const req4 = await s1.agent("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "model", send_to: "model-provider", idempotency_key: "req-4", args: { prompt: "draft + tracking error" } });
    ids.req4 = req4.receipt.receipt_id;
    await s1.agent("adjust.handoff", { adjustment_id: adj.adjustment_id, run_id: run.run_id, epoch: 1, request_id: req4.receipt.receipt_id });
    const inFlight = await s1.agent("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", source: "fund-filings", idempotency_key: "tracking-error-series", args: { funds: ["A", "B"], window: "3y" } });
    ids.inFlight = inFlight.receipt.receipt_id;
    await s1.agent("budget.charge", { run_id: run.run_id, epoch: 1, requests: 1, unknown: ["input_tokens", "output_tokens", "cost"], note: "req-4 sent, usage never reported" });

    // ---- the service dies -------------------------------------------------------------------
    await s1.stop("SIGKILL");
    assert.equal(s1.srv.child.signalCode, "SIGKILL");

    // ---- stages 4-6 in a new process ----------------------------------------------------
    second = await Sides.start(root);
    const s2 = second;
    // Stage 4: same-run recovery. A missing process is no licence to start another research.
    assert.equal((await s2.refused("agent", "run.start", { owner: "main@process-2", tools: ["fetch"], budget: { cost: 1 } })).data.reason, "run_active");
    const claimed = await s2.agent("run.claim", { run_id: run.run_id, owner: "main@process-2" });
    assert.equal(claimed.run.epoch, 2);
    assert.equal(claimed.run.budget_limits.requests, 3, "the host's grant survives the crash, narrowed as granted");
    assert.deepEqual(claimed.newly_unknown.map((r: { receipt_id: string }) => r.receipt_id).sort(), [ids.req4, ids.inFlight].sort());
    const replay = await s2.agent("receipt.begin", { run_id: run.run_id, epoch: 2, tool: "calc", idempotency_key: "overlap-top10", args: { universe: "B-top10", method: "weight-min" } });
    assert.equal(replay.replayed, true);
    assert.equal((await s2.call("agent", "receipt.begin", { run_id: run.run_id, epoch: 2, tool: "fetch", source: "fund-filings", idempotency_key: "tracking-error-series", args: { funds: ["A", "B"], window: "3y" } })).error!.data.reason, "receipt_unknown");

    // Stage 5: the window's boundary: the third request uses up what the host granted.
    await s2.agent("artifact.put", { name: "fund-comparison", kind: "increment", content: "New: B discloses only its top 10; full overlap cannot be computed yet.", run_id: run.run_id, epoch: 2 });
    const spent = await s2.agent("budget.charge", { run_id: run.run_id, epoch: 2, requests: 1, cost: 0.1 });
    assert.equal(spent.budget.effects_allowed, false);
    assert.equal((await s2.refused("agent", "receipt.begin", { run_id: run.run_id, epoch: 2, tool: "read_file", idempotency_key: "one-more", args: {} })).data.kind, "budget_exhausted");
    await s2.agent("run.finish", { run_id: run.run_id, epoch: 2, outcome: "draft and partial overlap delivered; the granted requests are used up", gaps: ["tracking error (request outcome unknown)", "full holdings overlap"] });
    // "More to investigate" is not a new authorization: the continuation is a request, and never wider.
    assert.equal((await s2.refused("agent", "run.continue", { parent_run_id: run.run_id, owner: "main@process-2", budget: { requests: 2, cost: 2 }, tools: ["fetch", "browser"] })).data.kind, "unauthorized");
    // the parent's lost usage leaves its cost unknown for the chain too: the continuation counts it at a ceiling
    const cont = await s2.agent("run.continue", { parent_run_id: run.run_id, owner: "main@process-2", budget: { requests: 2, cost: 2, unknown_ceiling: { cost: 0.25 } }, tools: ["fetch", "model"], reason: "the user chose to continue: tracking error" });
    const c2 = cont.run.run_id;
    ids.continuation = c2;
    assert.equal(cont.run.status, "requested");
    assert.equal(cont.run.grant.requested_by, "agent:http");
    assert.deepEqual(cont.open_items.filter((r: { receipt_id?: string }) => r.receipt_id).map((r: { receipt_id: string }) => r.receipt_id).sort(), [ids.req4, ids.inFlight].sort());
    assert.equal(cont.open_items.filter((r: { charge_id?: string; run_id: string }) => r.charge_id && r.run_id === run.run_id).length, 1, "the parent's unknown charge is an open item too");
    assert.equal((await s2.call("agent", "receipt.begin", { run_id: c2, epoch: 1, tool: "fetch", source: "fund-filings", idempotency_key: "tracking-error-series-2", args: {} })).error!.data.reason, "run_not_granted");
    // The host grants the continuation narrowed: a lower cost limit than asked, never more.
    assert.equal((await s2.refused("host", "run.grant", { run_id: c2, budget: { requests: 5, cost: 2 }, reason: "x" })).data.reason, "wider_than_request");
    const contGranted = (await s2.host("run.grant", { run_id: c2, budget: { requests: 2, cost: 1, unknown_ceiling: { cost: 0.25 } }, reason: "the user continues, at most one more unit of cost" })).run;
    assert.equal(contGranted.status, "running");
    assert.deepEqual([contGranted.budget_limits.requests, contGranted.budget_limits.cost], [2, 1]);

    // Stage 6: the unknowns are reconciled with evidence, the full report supersedes the draft.
    assert.equal((await s2.refused("agent", "receipt.begin", { run_id: c2, epoch: 1, tool: "fetch", source: "fund-filings", idempotency_key: "tracking-error-series", args: { funds: ["A", "B"], window: "3y" } })).data.reason, "receipt_unknown");
    await s2.agent("receipt.settle", { run_id: c2, epoch: 1, receipt_id: ids.inFlight, outcome: "failed", error: "no response", evidence: "provider request log: no request for tracking-error-series was received" });
    await s2.agent("receipt.settle", { run_id: c2, epoch: 1, receipt_id: ids.req4, outcome: "completed", result_ref: "provider-log:req-4", evidence: "provider log: req-4 answered, 3,100 tokens" });
    const te = await s2.agent("receipt.begin", { run_id: c2, epoch: 1, tool: "fetch", source: "fund-filings", idempotency_key: "tracking-error-series", args: { funds: ["A", "B"], window: "3y" } });
    assert.equal(te.replayed, false);
    const teCtx = await s2.agent("context.put", { label: "tracking error 3y", content: "A 1.8%, B 2.6%", source: "fund-filings", run_id: c2, epoch: 1 });
    await s2.agent("receipt.settle", { run_id: c2, epoch: 1, receipt_id: te.receipt.receipt_id, outcome: "completed", result_ref: teCtx.ref });
    assert.equal((await s2.call("agent", "receipt.begin", { run_id: c2, epoch: 1, tool: "calc", idempotency_key: "calc", args: {} })).error!.data.field, "tools", "the continuation narrowed its tools");
    await s2.agent("budget.charge", { run_id: c2, epoch: 1, requests: 1, cost: 0.2 });
    const full = (await s2.agent("artifact.put", {
      name: "fund-comparison",
      kind: "full",
      content: "Report: A is cheaper; tracking error A 1.8% vs B 2.6% (3 years, as the user answered); overlap limited to B's top 10.",
      run_id: c2,
      epoch: 1,
    })).artifact;
    assert.equal((await s2.refused("agent", "adjust.satisfy", { adjustment_id: ids.adjustment, artifact: "fund-comparison", version: 1 })).data.reason, "version_before_adjustment");
    await s2.agent("adjust.satisfy", { adjustment_id: ids.adjustment, artifact: "fund-comparison", version: full.version });
    await s2.agent("run.finish", { run_id: c2, epoch: 1, outcome: "full report delivered", gaps: ["full holdings overlap: B discloses only its top 10"] });
    await s2.stop();

    // ---- the records, read back fresh --------------------------------------------------------
    const reader = new Server(TARGETS[0]!, ["serve", "--root", root]);
    try {
      const parent = await reader.result("run.get", { run_id: ids.run });
      assert.equal(parent.question, QUESTION, "the original question, verbatim");
      assert.deepEqual(parent.constraints, CONSTRAINTS, "the task's constraints, as the host set them");
      assert.equal(parent.desired_outcome, OUTCOME);
      assert.deepEqual(parent.bounds, BOUNDS);
      assert.equal(parent.run.grant.requested_by, "agent:http");
      assert.equal(parent.run.grant.decided_by, "host:http");
      assert.equal(parent.run.grant.request.budget.requests, 50, "what the agent asked for is kept beside what the host granted");
      assert.equal(parent.run.budget_limits.requests, 3);
      assert.equal(parent.run.answer.text, "Three years, please");
      const kinds = parent.events.map((e: { kind: string }) => e.kind);
      assert.deepEqual(kinds.slice(0, 2), ["requested", "granted"]);
      for (const k of ["parked", "woken", "yielded", "claimed", "finished", "continued_by"]) assert.ok(kinds.includes(k), k);
      assert.deepEqual(parent.unknown_receipts, [], "both unknowns were reconciled from the continuation");

      const child = await reader.result("run.get", { run_id: ids.continuation });
      assert.equal(child.run.parent_run_id, ids.run);
      assert.equal(child.question, QUESTION);
      assert.deepEqual(child.constraints, CONSTRAINTS, "the continuation inherits the task's terms");
      assert.deepEqual(child.run.authorization.tools, ["fetch", "model"], "narrowed");
      assert.deepEqual([child.run.grant.requested_by, child.run.grant.decided_by], ["agent:http", "host:http"]);
      assert.deepEqual(child.run.grant.request.budget, { requests: 2, cost: 2, unknown_ceiling: { cost: 0.25 } });
      assert.deepEqual(child.run.budget_limits, { requests: 2, cost: 1, unknown_ceiling: { cost: 0.25 } });
      assert.deepEqual(child.events.map((e: { kind: string }) => e.kind).slice(0, 2), ["continued", "granted"]);

      const versions = (await reader.result("artifact.list", { name: "fund-comparison" })).artifacts;
      assert.deepEqual(versions.map((v: { kind: string }) => v.kind), ["draft", "increment", "full"]);
      const [a] = (await reader.result("adjust.list")).adjustments;
      assert.equal(a.text, ADJUSTMENT);
      assert.deepEqual(a.history.map((e: { kind: string }) => e.kind), ["received", "handed", "satisfied"]);
    } finally {
      await reader.close();
    }

    // No effect of either run was begun before the host granted it.
    const db = await openTestDb(root);
    try {
      assert.equal((await db.execute("PRAGMA integrity_check")).rows[0]![0], "ok");
      const rows = await db.execute(`SELECT r.idempotency_key, r.begun_at, json_extract(u.grant_record, '$.decided_at') AS granted_at
                                     FROM receipts r JOIN runs u ON u.seq = r.run_seq ORDER BY r.seq`);
      assert.equal(rows.rows.length, 5);
      for (const r of rows.rows) assert.ok(String(r.begun_at) >= String(r.granted_at), `${r.idempotency_key} begun ${r.begun_at}, granted ${r.granted_at}`);
      const statuses = await db.execute("SELECT idempotency_key, status FROM receipts ORDER BY seq");
      assert.deepEqual(statuses.rows.map((r) => [r.idempotency_key, r.status]), [
        ["costs-and-dates", "completed"],
        ["overlap-top10", "completed"],
        ["req-4", "completed"],
        ["tracking-error-series", "failed"],
        ["tracking-error-series", "completed"],
      ]);
    } finally {
      await db.close();
    }
  });
});
