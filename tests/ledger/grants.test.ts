/**
 * The host grants research runs (issue 23), through the compiled binary over HTTP: the agent token
 * may only ask for a run or a continuation; the host token grants it (as asked or narrowed),
 * refuses it, and wakes a run parked for the user with its answer. One test per way the agent used
 * to authorize itself.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { type HttpChild, startHttpChild } from "../http/start.ts";
import { TARGETS } from "../support/server.ts";

describe("research runs are the host's to grant (binary, HTTP)", () => {
  let root = "";
  let srv: HttpChild;
  let tokens: { host_token: string; agent_token: string };
  beforeEach(async () => {
    root = tempDir();
    srv = await startHttpChild(TARGETS[0]!.argv, ["--root", root, "--port", "0"]);
    tokens = JSON.parse(readFileSync(srv.info.token_file, "utf8"));
  });
  afterEach(async () => {
    if (srv.child.exitCode === null && srv.child.signalCode === null) process.kill(srv.child.pid!, "SIGTERM");
    await srv.exited;
    removeDir(root);
  });

  const call = async (token: string, method: string, params: Record<string, unknown>) => {
    const r = await fetch(`${srv.info.url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
    return (await r.json()) as { result?: any; error?: { code: number; message: string; data: Record<string, any> } };
  };
  const ok = async (side: "host" | "agent", method: string, params: Record<string, unknown> = {}) => {
    const a = await call(side === "host" ? tokens.host_token : tokens.agent_token, method, params);
    if (a.error) throw new Error(`${method} (${side}) failed: ${JSON.stringify(a.error)}`);
    return a.result;
  };
  const refused = async (side: "host" | "agent", method: string, params: Record<string, unknown> = {}) => {
    const a = await call(side === "host" ? tokens.host_token : tokens.agent_token, method, params);
    if (!a.error) throw new Error(`${method} (${side}) unexpectedly succeeded: ${JSON.stringify(a.result)}`);
    return a.error;
  };
  const begin = (runId: string, key: string, tool = "fetch", extra: Record<string, unknown> = {}) =>
    call(tokens.agent_token, "receipt.begin", { run_id: runId, epoch: 1, tool, idempotency_key: key, args: { key }, ...extra });

  test("an agent's run.start with any tools, any source and no limits is a request: it begins nothing until the host grants it, narrowed never wider", async () => {
    await ok("agent", "task.start", { description: "Compare the two theme funds" });
    const asked = (await ok("agent", "run.start", { owner: "w1", tools: ["anything", "email", "shell"], sources: ["*"], budget: {}, reason: "compare the funds" })).run;
    assert.equal(asked.status, "requested");
    assert.equal(asked.grant.state, "requested");
    assert.equal(asked.grant.requested_by, "agent:http");
    const before = (await begin(asked.run_id, "k1", "shell")).error!;
    assert.equal(before.data.kind, "unauthorized");
    assert.equal(before.data.reason, "run_not_granted");
    assert.match(before.message, /run\.grant/);
    assert.equal((await refused("agent", "run.grant", { run_id: asked.run_id, reason: "I approve myself" })).data.kind, "unauthorized", "the agent cannot grant");
    assert.equal((await refused("agent", "run.claim", { run_id: asked.run_id, owner: "w2" })).data.reason, "run_status", "a request is not claimed into a run");
    const wider = await refused("host", "run.grant", { run_id: asked.run_id, tools: ["anything", "calendar"], reason: "x" });
    assert.equal(wider.data.reason, "wider_than_request");
    assert.deepEqual(wider.data.wider[0].wider, ["calendar"]);
    const granted = (await ok("host", "run.grant", { run_id: asked.run_id, tools: ["anything"], sources: ["filings"], budget: { tool_calls: 1 }, reason: "read the filings only" })).run;
    assert.equal(granted.status, "running");
    assert.deepEqual(granted.authorization, { tools: ["anything"], sources: ["filings"], send: [], scope: [] });
    assert.equal(granted.budget_limits.tool_calls, 1);
    assert.equal(granted.grant.decided_by, "host:http");
    assert.equal(granted.grant.reason, "read the filings only");
    assert.ok(granted.grant.decided_at);
    assert.equal((await begin(asked.run_id, "k2", "shell")).error!.data.field, "tools", "what the host left out stays out");
    assert.equal((await begin(asked.run_id, "k3", "anything", { source: "the-web" })).error!.data.field, "sources");
    assert.equal((await begin(asked.run_id, "k4", "anything", { source: "filings" })).result.replayed, false);
    assert.equal((await refused("host", "run.grant", { run_id: asked.run_id, reason: "again" })).data.reason, "run_status", "granted once");
    const listed = (await ok("agent", "run.list")).runs[0];
    assert.equal(listed.grant.decided_by, "host:http");
    const events = (await ok("agent", "run.get", { run_id: asked.run_id })).events.map((e: { kind: string }) => e.kind);
    assert.deepEqual(events.slice(0, 2), ["requested", "granted"]);

    await ok("agent", "run.finish", { run_id: asked.run_id, epoch: 1, outcome: "stop" });
    const second = (await ok("agent", "run.start", { owner: "w1", tools: ["email"] })).run;
    const no = (await ok("host", "run.refuse", { run_id: second.run_id, reason: "no email" })).run;
    assert.equal(no.status, "refused");
    assert.equal(no.grant.decided_by, "host:http");
    assert.equal(no.grant.reason, "no email");
    assert.equal((await begin(second.run_id, "k5", "email")).error!.data.reason, "run_status");
  });

  test("a host's run.start is granted at once (seed 002's one-task flow and host clients keep working)", async () => {
    await ok("host", "task.start", { description: "host flow" });
    const run = (await ok("host", "run.start", { owner: "w", tools: ["fetch"] })).run;
    assert.equal(run.status, "running");
    assert.equal(run.grant.decided_by, "host:http");
    assert.equal((await begin(run.run_id, "k")).result.replayed, false);
  });

  test("after budget exhaustion, a run.continue with no limits is a request; only the host's grant makes it runnable, never wider than granted", async () => {
    await ok("agent", "task.start", { description: "budgeted" });
    const run = (await ok("host", "run.start", { owner: "w", tools: ["fetch", "model"], budget: { tool_calls: 1 } })).run;
    await begin(run.run_id, "a");
    assert.equal((await begin(run.run_id, "b")).error!.data.kind, "budget_exhausted");
    await ok("agent", "run.finish", { run_id: run.run_id, epoch: 1, outcome: "out of budget", gaps: ["b"] });
    assert.equal((await refused("agent", "run.continue", { parent_run_id: run.run_id, owner: "w", budget: {}, tools: ["shell"] })).data.kind, "unauthorized", "never wider than the parent");
    const cont = (await ok("agent", "run.continue", { parent_run_id: run.run_id, owner: "w", budget: {} })).run;
    assert.equal(cont.status, "requested");
    assert.equal((await begin(cont.run_id, "b")).error!.data.reason, "run_not_granted");
    const granted = (await ok("host", "run.grant", { run_id: cont.run_id, budget: { tool_calls: 2 }, reason: "two more calls" })).run;
    assert.equal(granted.budget_limits.tool_calls, 2);
    assert.equal((await begin(cont.run_id, "b")).result.replayed, false);
    assert.equal((await begin(cont.run_id, "c", "shell")).error!.data.field, "tools");
  });

  test("after a cancel (and a failure), an agent's run.continue is a request the host may refuse", async () => {
    await ok("agent", "task.start", { description: "cancelled" });
    const run = (await ok("host", "run.start", { owner: "w", tools: ["fetch"] })).run;
    await ok("host", "run.cancel", { run_id: run.run_id, reason: "the user stopped it" });
    const cont = (await ok("agent", "run.continue", { parent_run_id: run.run_id, owner: "w", budget: {} })).run;
    assert.equal(cont.status, "requested");
    assert.equal((await begin(cont.run_id, "x")).error!.data.reason, "run_not_granted");
    assert.equal((await ok("host", "run.refuse", { run_id: cont.run_id, reason: "the user stopped it for good" })).run.status, "refused");
    assert.equal((await refused("agent", "run.continue", { parent_run_id: cont.run_id, owner: "w", budget: {} })).data.reason, "run_status", "a refusal is nothing to continue");
    const failed = (await ok("host", "run.start", { owner: "w", tools: ["fetch"] })).run;
    await ok("agent", "run.finish", { run_id: failed.run_id, epoch: 1, outcome: "crashed", status: "failed" });
    assert.equal((await ok("agent", "run.continue", { parent_run_id: failed.run_id, owner: "w", budget: {} })).run.status, "requested");
  });

  test("a run parked for the user is woken by the host only, and the host's answer (text and data) reaches the run", async () => {
    await ok("agent", "task.start", { description: "needs the user" });
    const run = (await ok("host", "run.start", { owner: "w", tools: ["fetch"] })).run;
    await ok("agent", "run.park", { run_id: run.run_id, epoch: 1, waiting_for: "which fund is the baseline", for_user: true });
    const self = await refused("agent", "run.wake", { run_id: run.run_id, epoch: 1, reason: "I decided" });
    assert.equal(self.data.kind, "unauthorized");
    assert.equal(self.data.reason, "parked_for_user");
    assert.equal((await refused("agent", "run.wake", { run_id: run.run_id, epoch: 1, answer: { text: "fund A" } })).data.field, "answer", "the answer is the host's");
    assert.equal((await ok("agent", "run.get", { run_id: run.run_id })).run.status, "parked");
    const woken = (await ok("host", "run.wake", { run_id: run.run_id, reason: "the user answered", answer: { text: "Fund A is the baseline", data: { baseline: "A" } } })).run;
    assert.equal(woken.status, "running");
    const got = (await ok("agent", "run.get", { run_id: run.run_id })).run;
    assert.deepEqual([got.answer.text, got.answer.data, got.answer.by], ["Fund A is the baseline", { baseline: "A" }, "host:http"]);
    assert.equal((await ok("agent", "run.claim", { run_id: run.run_id, owner: "w2" })).run.answer.text, "Fund A is the baseline", "the next claim gets it too");
    await ok("agent", "run.park", { run_id: run.run_id, epoch: 2, waiting_for: "the mirror" });
    assert.equal((await ok("agent", "run.wake", { run_id: run.run_id, epoch: 2, reason: "mirror back" })).run.status, "running", "a park not for the user is the agent's to end");
  });

  test("sending data to a provider is a right of its own, checked at receipt.begin", async () => {
    await ok("agent", "task.start", { description: "send rights" });
    const asked = (await ok("agent", "run.start", { owner: "w", tools: ["model"], send: ["provider-a", "provider-b"] })).run;
    const granted = (await ok("host", "run.grant", { run_id: asked.run_id, send: ["provider-a"], reason: "only A sees the data" })).run;
    assert.deepEqual(granted.authorization.send, ["provider-a"]);
    const no = (await begin(asked.run_id, "m1", "model", { send_to: "provider-b" })).error!;
    assert.equal(no.data.kind, "unauthorized");
    assert.equal(no.data.field, "send");
    assert.equal((await begin(asked.run_id, "m2", "model", { send_to: "provider-a" })).result.replayed, false);
    assert.equal((await refused("host", "run.grant", { run_id: asked.run_id, reason: "x" })).data.reason, "run_status");
  });

  test("a standing allowance in the root's settings grants a fitting run.start as the host's, capped by its budget; nothing wider, never a continuation", async () => {
    mkdirSync(join(root, ".longrun"), { recursive: true });
    writeFileSync(join(root, ".longrun", "settings.json"), JSON.stringify({ run_allowances: [{ name: "filings research", tools: ["fetch"], sources: ["filings"], budget: { tool_calls: 5, cost: 1 } }] }));
    await ok("agent", "task.start", { description: "standing" });
    const shown = (await ok("host", "task.status")).run_allowances;
    assert.deepEqual(shown, { allowances: [{ name: "filings research", tools: ["fetch"], sources: ["filings"], budget: { tool_calls: 5, cost: 1 } }], error: null }, "the host sees what it allowed");
    assert.equal((await ok("agent", "task.status")).run_allowances, undefined, "the agent meets them only as grants on its runs");
    const fits = (await ok("agent", "run.start", { owner: "w", tools: ["fetch"], sources: ["filings"], budget: { cost: 3 } })).run;
    assert.equal(fits.status, "running");
    assert.equal(fits.grant.decided_by, "host:settings");
    assert.equal(fits.grant.standing, "filings research");
    assert.deepEqual([fits.budget_limits.tool_calls, fits.budget_limits.cost], [5, 1], "the allowance's limits cap the request's");
    await ok("agent", "run.finish", { run_id: fits.run_id, epoch: 1, outcome: "done" });
    assert.equal((await ok("agent", "run.continue", { parent_run_id: fits.run_id, owner: "w", budget: {} })).run.status, "requested", "continuing is the user's explicit choice");
    await ok("host", "run.refuse", { run_id: (await ok("agent", "run.list")).runs[0].run_id, reason: "no" });
    assert.equal((await ok("agent", "run.start", { owner: "w", tools: ["fetch", "shell"], sources: ["filings"] })).run.status, "requested", "outside the allowance");
    writeFileSync(join(root, ".longrun", "settings.json"), "{not json");
    const broken = (await ok("host", "task.status")).run_allowances;
    assert.deepEqual(broken.allowances, []);
    assert.match(broken.error, /no standing allowance is in force/);
    writeFileSync(join(root, ".longrun", "settings.json"), "{}");
    assert.deepEqual((await ok("host", "task.status")).run_allowances, { allowances: [], error: null }, "removing the entry revokes it, visibly");
  });
  test("the user task carries its own terms: host-set constraints and desired outcome verbatim, bounds its runs and continuations never exceed", async () => {
    const terms = { constraints: ["No paid sources, 광고 제외"], desired_outcome: "A one-page comparison of funds A and B", bounds: { tools: ["fetch"], sources: ["filings"], budget: { cost: 2 } } };
    const self = await refused("agent", "task.start", { description: "Compare the funds", ...terms });
    assert.equal(self.data.kind, "unauthorized", "a task's terms are the host's");
    const started = await ok("host", "task.start", { description: "Compare the funds", ...terms });
    assert.deepEqual(started.terms.constraints, terms.constraints);
    assert.equal(started.terms.set_by, "host:http");
    const tooWide = await refused("agent", "run.start", { owner: "w", tools: ["fetch", "shell"], sources: ["filings"], budget: { cost: 1 } });
    assert.equal(tooWide.data.reason, "wider_than_task_terms");
    assert.equal(tooWide.data.wider[0].field, "tools");
    assert.equal((await refused("agent", "run.start", { owner: "w", tools: ["fetch"], budget: {} })).data.wider[0].field, "budget.cost", "no limit is wider than the task's");
    assert.equal((await refused("host", "run.start", { owner: "w", tools: ["fetch"], budget: { cost: 3 } })).data.reason, "wider_than_task_terms", "the host's own runs keep the task's terms too");
    const run = (await ok("agent", "run.start", { owner: "w", tools: ["fetch"], sources: ["filings"], budget: { cost: 1 } })).run;
    const got = await ok("agent", "run.get", { run_id: run.run_id });
    assert.deepEqual([got.constraints, got.desired_outcome, got.bounds], [terms.constraints, terms.desired_outcome, terms.bounds], "the run inherits them verbatim");
    await ok("host", "run.grant", { run_id: run.run_id, reason: "ok" });
    await ok("agent", "run.finish", { run_id: run.run_id, epoch: 1, outcome: "half" });
    assert.equal((await refused("agent", "run.continue", { parent_run_id: run.run_id, owner: "w", budget: { cost: 5 } })).data.reason, "wider_than_task_terms");
    assert.equal((await ok("agent", "run.continue", { parent_run_id: run.run_id, owner: "w", budget: { cost: 2 } })).run.status, "requested");
    await ok("agent", "task.start", { description: "A short new question" });
    const other = (await ok("agent", "run.start", { owner: "w", tools: ["shell"] })).run;
    const fresh = await ok("agent", "run.get", { run_id: other.run_id });
    assert.deepEqual([fresh.constraints, fresh.desired_outcome, fresh.bounds], [[], null, null], "a new question inherits no terms");
  });
  test("a pending request is an open run: the task does not end under it, and the host's cancel_runs ends it with the task", async () => {
    await ok("agent", "task.start", { description: "ends with a request open" });
    const asked = (await ok("agent", "run.start", { owner: "w", tools: ["fetch"] })).run;
    assert.equal((await refused("agent", "run.start", { owner: "w2" })).data.reason, "run_active", "one open run per task, a request included");
    assert.equal((await refused("host", "task.finish", { summary: "done" })).data.reason, "open_runs");
    const done = await ok("host", "task.finish", { summary: "done", cancel_runs: true });
    assert.deepEqual(done.cancelled_runs, [asked.run_id]);
    assert.equal((await ok("agent", "run.get", { run_id: asked.run_id })).run.status, "cancelled");
  });
});
