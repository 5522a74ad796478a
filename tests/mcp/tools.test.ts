/**
 * Every tool of every set, called for real through the MCP SDK client against the compiled
 * binary: each success's structured content validates against the tool's outputSchema (Ajv here,
 * and the SDK client's own check), and the text block carries the same JSON. The host's side (a
 * grant, a turn, the user's adjustment) comes from a `longrun serve` process on the same root.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { Server, TARGETS } from "../support/server.ts";
import { corruptTask } from "../support/state.ts";
import { type Mcp, startMcp } from "./helpers.ts";

const DEFAULT_SET = ["task_status", "task_start", "task_resume", "writes_require", "writes_request", "task_checkpoint", "task_finish", "memory_search", "memory_get", "memory_save"];

describe("MCP tools, each called for real (SDK client, compiled binary)", () => {
  let root = "";
  let mcp: Mcp | null = null;
  let host: Server | null = null;
  const called = new Set<string>();
  beforeEach(() => {
    root = tempDir();
    called.clear();
  });
  afterEach(async () => {
    await mcp?.close();
    await host?.close();
    mcp = null;
    host = null;
    removeDir(root);
  });
  const ok = async (name: string, args: Record<string, unknown> = {}) => {
    const out = await mcp!.ok(name, args);
    called.add(name);
    return out;
  };
  const hostSide = () => (host ??= new Server(TARGETS[0]!, ["serve", "--root", root]));

  test("the default set is the coding agent's ten tools, and each returns what its outputSchema says", async () => {
    mcp = await startMcp(root);
    assert.deepEqual([...mcp.tools.keys()], DEFAULT_SET);
    assert.equal((await ok("task_status")).task, null);
    const started = await ok("task_start", { description: "Fix the flaky login test" });
    assert.equal(started.task.status, "in_progress");
    assert.equal(started.task.access_mode, "read_only");
    assert.equal((await ok("task_status")).task.task_id, started.task.task_id);
    const asked = await ok("writes_request", { reason: "fix the login wait", scope: ["src/**"] });
    assert.deepEqual([asked.requested, asked.granted], [true, false]);
    await hostSide().result("writes.enable", { reason: "go ahead", scope: ["src/**"] });
    const gate = await ok("writes_require", { action: "edit src/login.ts" });
    assert.equal(gate.ok, true);
    const saved = await ok("memory_save", { type: "decision", title: "Login waits for the token refresh", content: "The test raced the refresh", keywords: ["login"] });
    const found = await ok("memory_search", { query: "token refresh", limit: 5 });
    assert.ok(found.hits.some((h: { id: string }) => h.id === saved.id), JSON.stringify(found));
    assert.equal((await ok("memory_get", { id: saved.id })).record.content, "The test raced the refresh");
    const progress = await ok("task_checkpoint", { summary: "found the race", next_step: "fix it", kind: "progress" });
    assert.equal(progress.task.status, "in_progress", "a progress checkpoint keeps the task running");
    const paused = await ok("task_checkpoint", { summary: "fixed the wait", next_step: "run the tests" });
    assert.equal(paused.task.status, "paused");
    assert.match(paused.text, /run the tests/);
    const resumed = await ok("task_resume");
    assert.equal(resumed.task.status, "in_progress");
    assert.equal(resumed.task.turn_index, 2);
    const finished = await ok("task_finish", { summary: "fixed" });
    assert.equal(finished.task.status, "completed");
    assert.deepEqual([...called].sort(), [...DEFAULT_SET].sort(), "every tool of the set was called with success");
  });

  test("the research set adds the long-run tools, and each returns what its outputSchema says", async () => {
    mcp = await startMcp(root, ["--tools", "research"]);
    for (const name of DEFAULT_SET) assert.ok(mcp.tools.has(name), `research includes ${name}`);
    const first = (await ok("task_start", { description: "Survey retrieval papers" })).task.task_id;
    const run = (await ok("run_start", { owner: "w1", tools: ["fetch", "model"], sources: ["https://example.org/a"], budget: { requests: 100, input_tokens: 100000, cost: 5 }, constraints: ["open access only"] })).run;
    assert.equal(run.epoch, 1);
    assert.equal(run.status, "requested", "over MCP a run is the agent's request");
    await hostSide().result("run.grant", { run_id: run.run_id, reason: "go ahead" });
    assert.equal((await ok("run_get", { run_id: run.run_id })).question, "Survey retrieval papers");
    assert.equal((await ok("run_list")).runs.length, 1);
    await ok("run_checkpoint", { run_id: run.run_id, epoch: 1, settled: ["3 sources read"], open: ["compare"] });
    const begun = (await ok("receipt_begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "fetch:a", args: { url: "https://example.org/a" } })).receipt;
    await ok("receipt_settle", { run_id: run.run_id, epoch: 1, receipt_id: begun.receipt_id, outcome: "completed", result_ref: "C_0001" });
    assert.equal((await ok("receipt_list", { run_id: run.run_id, status: "completed" })).receipts.length, 1);
    const charge = await ok("budget_charge", { run_id: run.run_id, epoch: 1, requests: 1, cost: 0.1, unknown: ["input_tokens"] });
    assert.equal(charge.budget.effects_allowed, false, "an unknown amount with no ceiling stops new effects");
    assert.equal((await ok("budget_reconcile", { run_id: run.run_id, epoch: 1, charge_id: charge.charge_id, input_tokens: 900, evidence: "provider usage page" })).budget.effects_allowed, true);
    await ok("budget_status", { run_id: run.run_id });
    assert.equal((await ok("run_park", { run_id: run.run_id, epoch: 1, waiting_for: "the mirror to come back" })).run.status, "parked");
    await ok("run_wake", { run_id: run.run_id, epoch: 1, reason: "mirror is back" });
    await ok("run_park", { run_id: run.run_id, epoch: 1, waiting_for: "the user's key", for_user: true });
    assert.equal((await mcp.refused("run_wake", { run_id: run.run_id, epoch: 1, reason: "I woke it" })).data.reason, "parked_for_user");
    await hostSide().result("run.wake", { run_id: run.run_id, reason: "key given", answer: { text: "use key B", data: { key: "B" } } });
    assert.equal((await ok("run_get", { run_id: run.run_id })).run.answer.text, "use key B");
    const claimed = (await ok("run_claim", { run_id: run.run_id, owner: "w2" })).run;
    assert.equal(claimed.epoch, 2);
    await hostSide().result("adjust.receive", { text: "also cover 2025", run_id: run.run_id });
    const adjustment = (await ok("adjust_list")).adjustments[0];
    assert.equal(adjustment.text, "also cover 2025");
    const request = (await ok("receipt_begin", { run_id: run.run_id, epoch: 2, tool: "model", idempotency_key: "round-2", args: {} })).receipt;
    await ok("adjust_handoff", { adjustment_id: adjustment.adjustment_id, run_id: run.run_id, epoch: 2, request_id: request.receipt_id });
    await ok("run_yield", { run_id: run.run_id, epoch: 2, reason: "adopt the adjustment", request_id: request.receipt_id, adjustment_id: adjustment.adjustment_id });
    const art = (await ok("artifact_put", { name: "report", kind: "full", content: "# Findings", run_id: run.run_id, epoch: 2, attachments: [{ name: "data.csv", content: "a,b" }], gaps: ["2025 data"] })).artifact;
    assert.equal(art.version, 1);
    const [gap] = (await ok("gap_list", { status: "open" })).gaps;
    assert.deepEqual([gap.text, art.gaps.open[0].gap_id], ["2025 data", gap.gap_id]);
    assert.equal((await ok("artifact_get", { name: "report" })).artifact.content, "# Findings");
    assert.equal((await ok("artifact_get", { name: "report", version: 1, attachment: "data.csv" })).content, "a,b");
    assert.equal((await ok("artifact_list")).artifacts.length, 1);
    await ok("artifact_mark", { name: "report", version: 1, mark: "saved" });
    await ok("adjust_satisfy", { adjustment_id: adjustment.adjustment_id, artifact: "report", version: 1 });
    const ctx = await ok("context_put", { label: "page a", content: "hello world", source: "https://example.org/a", run_id: run.run_id, epoch: 2 });
    const read = await ok("context_read", { ref: ctx.ref, offset: 0, length: 5, run_id: run.run_id });
    assert.equal(read.text, "hello");
    assert.equal((await ok("run_heartbeat", { run_id: run.run_id, epoch: 2 })).stop, null, "the owner's beat: go on");
    const child = (await ok("run_child", { run_id: run.run_id, epoch: 2, owner: "sub-1", budget: { requests: 5, input_tokens: 1000, cost: 0.5 }, reason: "one sub-agent" })).run;
    assert.equal(child.child_of, run.run_id);
    await ok("run_finish", { run_id: child.run_id, epoch: 1, outcome: "its part done" });
    const asked = (await ok("approval_request", { action: "email.send", args_digest: "sha256:ab12", reason: "send the summary", run_id: run.run_id })).approval;
    assert.equal((await ok("approval_list", { status: "pending" })).approvals.length, 1);
    await hostSide().result("approval.answer", { approval_id: asked.approval_id, decision: "reject", note: "not yet" });
    assert.equal((await ok("approval_get", { approval_id: asked.approval_id })).approval.status, "rejected");
    const events = await ok("events_read", { kinds: ["run.parked", "run.woken"] });
    assert.deepEqual(events.events.map((e: { kind: string }) => e.kind), ["run.parked", "run.woken", "run.parked", "run.woken"]);
    await ok("run_finish", { run_id: run.run_id, epoch: 2, outcome: "report saved", gaps: ["no 2025 data"] });
    const next = (await ok("run_continue", { parent_run_id: run.run_id, owner: "w3", budget: {} })).run;
    assert.equal(next.status, "requested", "continuing is the user's choice: a request until the host grants it");
    assert.equal((await ok("run_cancel", { run_id: next.run_id, epoch: 1, reason: "the user stopped it" })).run.status, "cancelled");
    const note = await ok("memory_save", { type: "note", title: "retrieval note", content: "BM25 first" });
    const fixed = await ok("memory_update", { id: note.id, content: "dense retrieval first" });
    assert.equal(fixed.supersedes, note.id);
    await ok("task_checkpoint", { summary: "surveyed", next_step: "write up", kind: "progress" });
    const listed = (await ok("task_checkpoints")).checkpoints;
    assert.equal(listed.length, 1);
    assert.equal((await ok("checkpoint_get", { checkpoint_id: listed[0].checkpoint_id })).checkpoint.summary, "surveyed");
    await ok("task_start", { description: "A second question" });
    const ref = (await ok("context_put", { label: "notes", content: "shared notes" })).ref;
    assert.deepEqual((await ok("context_share", { ref, task_id: first })).shared_with, [first]);
    const research = [...mcp.tools.keys()].filter((n) => !DEFAULT_SET.includes(n));
    assert.deepEqual(research.filter((n) => !called.has(n)), [], "every research tool was called with success");
  });

  test("the all set adds the rarer task tools, and each returns what its outputSchema says", async () => {
    mcp = await startMcp(root, ["--tools", "all"]);
    const a = (await ok("task_start", { description: "first" })).task.task_id;
    await ok("task_start", { description: "second" });
    const listed = (await ok("task_list")).tasks;
    assert.equal(listed.length, 2);
    assert.equal((await ok("task_switch", { task_id: a, reason: "back to the first" })).task.task_id, a);
    assert.equal((await ok("task_transition", { to: "blocked", reason: "waiting for a review" })).task.status, "blocked");
    await ok("task_transition", { to: "in_progress", reason: "review done" });
    assert.equal((await ok("memory_save_many", { items: [{ type: "note", title: "CI", content: "CI runs on push" }] })).count, 1);
    await ok("task_checkpoint", { summary: "half", next_step: "rest" });
    await corruptTask(root, "{ not json");
    const corrupt = await mcp.refused("task_status");
    assert.equal(corrupt.data.kind, "state_corrupt");
    assert.match(corrupt.text, /task_recover/);
    const recovered = await ok("task_recover");
    assert.equal(recovered.task.task_id, a);
    for (const name of ["task_list", "task_switch", "task_transition", "task_recover", "memory_save_many"]) assert.ok(called.has(name), name);
  });
});
