/**
 * Over MCP a research run is asked for, never granted (issue 23): the SDK client against the
 * compiled binary with every tool (`--tools all`), and `longrun serve` on the same root as the
 * host. No tool grants or refuses a run, answers a run parked for the user or sets a task's terms;
 * `run_start` and `run_continue` (also after the budget ran out) are requests that begin no effect
 * until the host grants them.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { REPO, removeDir, tempDir } from "../support/helpers.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { requireTarget, Server, SOURCE_AND_BINARY, TARGETS } from "../support/server.ts";
import { type Mcp, startMcp } from "./helpers.ts";

describe("MCP asks for research runs, the host grants them (SDK client, compiled binary)", () => {
  let root = "";
  let mcp: Mcp | null = null;
  let host: Server | null = null;
  beforeEach(async () => {
    root = tempDir();
    mcp = await startMcp(root, ["--tools", "all"]);
    host = new Server(TARGETS[0]!, ["serve", "--root", root]);
  });
  afterEach(async () => {
    await mcp?.close();
    await host?.close();
    mcp = null;
    host = null;
    removeDir(root);
  });

  test("no tool is the host's: none grants, refuses, answers a parked run or sets a task's terms", async () => {
    for (const n of ["run_grant", "run_refuse", "writes_enable", "turn_begin", "turn_end", "adjust_receive"]) assert.equal(mcp!.tools.has(n), false, n);
    assert.equal((await mcp!.protocolError("run_grant", { run_id: "R_0001", reason: "I approve myself" })).code, -32602);
    const wake = mcp!.tools.get("run_wake")!.inputSchema.properties as Record<string, unknown>;
    assert.equal("answer" in wake, false, "run_wake takes no answer: the answer is the user's");
    const start = mcp!.tools.get("task_start")!.inputSchema.properties as Record<string, unknown>;
    for (const k of ["constraints", "desired_outcome", "bounds"]) assert.equal(k in start, false, k);
  });

  test("run_start and run_continue are requests; effects begin only after the host's grant; a run parked for the user waits for the host's answer", async () => {
    await host!.result("task.start", { description: "Compare the funds", bounds: { tools: ["fetch", "model"], budget: { tool_calls: 10 } } });
    const beyond = await mcp!.refused("run_start", { owner: "claude", tools: ["fetch", "shell"], budget: { tool_calls: 5 } });
    assert.equal(beyond.data.reason, "wider_than_task_terms");
    const asked = (await mcp!.ok("run_start", { owner: "claude", tools: ["fetch", "model"], budget: { tool_calls: 5 } })).run;
    assert.equal(asked.status, "requested");
    assert.equal((await mcp!.refused("receipt_begin", { run_id: asked.run_id, epoch: 1, tool: "fetch", idempotency_key: "a", args: {} })).data.reason, "run_not_granted");
    const granted = (await host!.result("run.grant", { run_id: asked.run_id, tools: ["fetch"], budget: { tool_calls: 1 }, reason: "one fetch" })).run;
    assert.deepEqual([granted.grant.requested_by, granted.grant.decided_by], ["agent:mcp", "host:stdio"]);
    assert.equal((await mcp!.refused("receipt_begin", { run_id: asked.run_id, epoch: 1, tool: "model", idempotency_key: "m", args: {} })).data.field, "tools", "narrowed by the host");
    assert.equal((await mcp!.ok("receipt_begin", { run_id: asked.run_id, epoch: 1, tool: "fetch", idempotency_key: "a", args: {} })).replayed, false);

    await mcp!.ok("run_park", { run_id: asked.run_id, epoch: 1, waiting_for: "which fund is the baseline", for_user: true });
    assert.equal((await mcp!.refused("run_wake", { run_id: asked.run_id, epoch: 1, reason: "I decided" })).data.reason, "parked_for_user");
    await host!.result("run.wake", { run_id: asked.run_id, reason: "the user answered", answer: { text: "Fund A", data: { baseline: "A" } } });
    assert.equal((await mcp!.ok("run_get", { run_id: asked.run_id })).run.answer.text, "Fund A");

    assert.equal((await mcp!.refused("receipt_begin", { run_id: asked.run_id, epoch: 1, tool: "fetch", idempotency_key: "b", args: {} })).data.kind, "budget_exhausted");
    await mcp!.ok("run_finish", { run_id: asked.run_id, epoch: 1, outcome: "out of budget", gaps: ["b"] });
    const cont = (await mcp!.ok("run_continue", { parent_run_id: asked.run_id, owner: "claude", budget: { tool_calls: 3 } })).run;
    assert.equal(cont.status, "requested", "continuing past a stop is the user's choice");
    assert.equal((await mcp!.refused("receipt_begin", { run_id: cont.run_id, epoch: 1, tool: "fetch", idempotency_key: "b", args: {} })).data.reason, "run_not_granted");
    await host!.result("run.grant", { run_id: cont.run_id, budget: { tool_calls: 2 }, reason: "two more" });
    assert.equal((await mcp!.ok("receipt_begin", { run_id: cont.run_id, epoch: 1, tool: "fetch", idempotency_key: "b", args: {} })).replayed, false);
  });
});

describe("longrun mcp is the agent side (SDK client; the source and the binary)", () => {
  // Kills: `longrun mcp` running as the host side (src/cli/mcp.ts caller `{ side: "host", … }`).
  // The tool list is filtered by side either way; what the caller's side decides is shown here.
  test("MCP over stdio speaks for the agent: host-only decisions are refused and requests are recorded as the agent's", async () => {
    for (const target of SOURCE_AND_BINARY) {
      requireTarget(target);
      const root = tempDir();
      const client = new Client({ name: "survivors", version: "1.0.0" });
      await client.connect(new StdioClientTransport({ command: target.argv[0]!, args: [...target.argv.slice(1), "mcp", "--root", root, "--tools", "all"], cwd: REPO, env: { ...process.env } as Record<string, string>, stderr: "pipe" }));
      try {
        // a refusal is a tool result with its kind in _meta; invalid arguments are a JSON-RPC -32602
        const call = async (name: string, args: Record<string, unknown> = {}) =>
          (await client.callTool({ name, arguments: args }).catch((e: { code?: number }) => ({ isError: true, protocolError: e.code }))) as {
            isError?: boolean;
            protocolError?: number;
            structuredContent?: any;
            _meta?: any;
          };
        const kind = (r: { isError?: boolean; _meta?: any }) => (r.isError ? r._meta?.["longrun/error"]?.data?.kind : undefined);
        const names = new Set((await client.listTools()).tools.map((t) => t.name));
        for (const n of ["writes_enable", "turn_begin", "turn_end", "adjust_receive"]) assert.equal(names.has(n), false, `${target.name}: ${n} is not offered`);

        await call("task_start", { description: "an agent over MCP" });
        const requested = await call("writes_request", { reason: "please" });
        assert.equal(requested.structuredContent.granted, false);
        assert.equal(requested.structuredContent.task.lease_log.at(-1).by, "agent:mcp", `${target.name}: the request is the agent's`);

        const runR = (await call("run_start", { owner: "mcp-exec", tools: ["fetch"] })).structuredContent.run;
        const cancel = await call("run_cancel", { run_id: runR.run_id, reason: "no epoch" });
        assert.equal(cancel.isError, true, `${target.name}: an agent cancels a run only with its epoch`);
        assert.equal(cancel.protocolError, -32602);
        assert.equal((await call("task_finish", { summary: "end it all", cancel_runs: true })).protocolError, -32602, `${target.name}: cancel_runs is the host's (not offered over MCP)`);
        assert.equal(runR.status, "requested", `${target.name}: an agent's run is a request the host grants`);
        assert.equal((await call("run_get", { run_id: runR.run_id })).structuredContent.run.status, "requested");

        await call("task_transition", { to: "waiting_verification", reason: "done, please review" });
        assert.equal(kind(await call("task_transition", { to: "completed", reason: "self-accepted" })), "unauthorized", `${target.name}: leaving waiting_verification`);
        assert.equal(kind(await call("task_finish", { summary: "self-accepted" })), "unauthorized", `${target.name}: finishing a task under verification`);
        assert.equal((await call("task_recover", { force: true })).protocolError, -32602, `${target.name}: a forced recovery (not offered over MCP)`);
        assert.equal((await call("task_status")).structuredContent.task.status, "waiting_verification");
      } finally {
        await client.close();
        removeDir(root);
      }
    }
  });
});
