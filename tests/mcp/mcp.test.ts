/** `longrun mcp` over stdio, driven by the MCP SDK's own Client over a real child process of the binary. */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { afterEach, beforeEach, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { removeDir, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";
import { sqldMissing, startSqld } from "../support/sqld.ts";
import { type Mcp, startMcp } from "./helpers.ts";

describe("MCP server over stdio (SDK client, compiled binary)", () => {
  let root = "";
  let mcp: Mcp;
  beforeEach(async () => {
    root = tempDir();
    mcp = await startMcp(root);
  });
  afterEach(async () => {
    await mcp.close();
    removeDir(root);
  });

  test("it lists agent-side tools with described parameters, output schemas and honest annotations, and no host-side tool", async () => {
    const byName = mcp.tools;
    for (const n of ["task_start", "task_status", "task_checkpoint", "writes_require", "writes_request", "memory_search", "memory_save"]) assert.ok(byName.has(n), n);
    for (const n of ["writes_enable", "turn_begin", "turn_end", "adjust_receive"]) assert.equal(byName.has(n), false, n);
    assert.equal(byName.get("memory_search")!.annotations?.readOnlyHint, true);
    assert.equal(byName.get("task_checkpoint")!.annotations?.readOnlyHint, false);
    assert.equal(byName.get("task_checkpoint")!.annotations?.destructiveHint, false);
    assert.equal(byName.get("task_finish")!.annotations?.destructiveHint, true, "finishing a task cannot be undone");
    assert.deepEqual(byName.get("writes_require")!.inputSchema.required, ["action"]);
    for (const t of byName.values()) {
      assert.match(t.name, /^[a-zA-Z0-9_-]{1,64}$/);
      assert.equal(t.outputSchema?.type, "object", `${t.name} has an outputSchema`);
      assert.equal(t.annotations?.openWorldHint, false);
      assert.equal("root" in (t.inputSchema.properties ?? {}), false, `${t.name}: one root, no root argument`);
    }
  });

  test("results come back as structured content; refusals as isError with the error's kind in _meta", async () => {
    const started = await mcp.ok("task_start", { description: "mcp task" });
    assert.equal(started.task.status, "in_progress");
    const gate = await mcp.refused("writes_require", { action: "edit a" });
    assert.equal(gate.data.kind, "write_gate_violation");
    assert.equal(gate.data.reason, "read_only");
    assert.equal(gate.code, -32001);
    const bad = await mcp.protocolError("task_checkpoint", { summary: 5, next_step: "x" });
    assert.equal(bad.code, -32602);
  });

  test("an agent over MCP can ask for a lease but never grant one", async () => {
    await mcp.ok("task_start", { description: "t" });
    const asked = await mcp.ok("writes_request", { reason: "I need to edit src", scope: ["src/**"] });
    assert.equal(asked.granted, false);
    const enable = await mcp.protocolError("writes_enable", { reason: "self" });
    assert.equal(enable.code, -32602);
    assert.match(enable.message, /Unknown tool "writes_enable"/);
    await mcp.refused("writes_require", { action: "edit src/a.ts" });
    const st = await mcp.ok("task_status");
    assert.equal(st.task.lease_log.at(-1).event, "requested");
    assert.equal(st.task.lease_log.at(-1).by, "agent:mcp");
  });

  test("memory search is bounded and paginated", async () => {
    for (let i = 0; i < 5; i++) await mcp.ok("memory_save", { type: "note", title: `alpha ${i}`, content: "alpha" });
    const p1 = await mcp.ok("memory_search", { query: "alpha", limit: 2 });
    assert.equal(p1.hits.length, 2);
    const p2 = await mcp.ok("memory_search", { query: "alpha", limit: 2, cursor: p1.next_cursor });
    assert.equal(p2.hits.length, 2);
    assert.notDeepEqual(p1.hits, p2.hits);
    const tooMany = await mcp.refused("memory_search", { query: "alpha", limit: 1000 });
    assert.equal(tooMany.data.kind, "limit_exceeded");
    assert.match(tooMany.text, /"limit" is 1000, the most is 50/);
  });

  test("it serves only its own root: there is no root argument to name another", async () => {
    const other = tempDir();
    try {
      const r = await mcp.protocolError("task_status", { root: other });
      assert.equal(r.code, -32602);
      assert.match(r.message, /unknown argument "root"/);
    } finally {
      removeDir(other);
    }
  });
});

describe("MCP server for a project on a libSQL server (--store)", () => {
  test("the tools work on the server's project; a second server on the same project sees the task", { skip: sqldMissing() }, async () => {
    const sqld = await startSqld();
    const dir = tempDir();
    const clients: Client[] = [];
    const connect = async () => {
      const client = new Client({ name: "longrun-test", version: "1.0.0" });
      await client.connect(new StdioClientTransport({ command: BINARY, args: ["mcp", "--store", sqld.url, "--project", "mcp-test", "--state-dir", dir], cwd: dir, stderr: "pipe" }));
      clients.push(client);
      return client;
    };
    try {
      requireBinary();
      const a = await connect();
      const started = (await a.callTool({ name: "task_start", arguments: { description: "on the server" } })) as { structuredContent: any };
      assert.equal(started.structuredContent.task.status, "in_progress");
      const b = await connect();
      const seen = (await b.callTool({ name: "task_status", arguments: {} })) as { structuredContent: any };
      assert.equal(seen.structuredContent.task.task_id, started.structuredContent.task.task_id);
      assert.deepEqual(readdirSync(dir).filter((f) => f === "memory.db"), [], "nothing local: the project is on the server");
    } finally {
      for (const c of clients) await c.close();
      await sqld.stop();
      removeDir(dir);
    }
  });
});
