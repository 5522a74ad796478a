/** `longrun mcp` over stdio, driven by the MCP SDK's own Client over a real child process of the binary. */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { removeDir, tempDir } from "../helpers.ts";
import { BINARY, requireBinary } from "../protocol/server.ts";

describe("MCP server over stdio (SDK client, compiled binary)", () => {
  let root = "";
  let client: Client;
  beforeEach(async () => {
    requireBinary();
    root = tempDir();
    client = new Client({ name: "longrun-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: BINARY, args: ["mcp", "--root", root], stderr: "pipe" }));
  });
  afterEach(async () => {
    await client.close();
    removeDir(root);
  });

  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: any;
    content: { type: string; text: string }[];
  };

  test("it lists agent-side tools with input schemas and honest annotations, and no host-side tool", async () => {
    const tools = (await client.listTools()).tools;
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const n of ["task_start", "task_status", "task_checkpoint", "writes_require", "writes_request", "memory_search", "memory_save"]) assert.ok(byName.has(n), n);
    for (const n of ["writes_enable", "turn_begin", "turn_end"]) assert.equal(byName.has(n), false, n);
    assert.equal(byName.get("memory_search")!.annotations?.readOnlyHint, true);
    assert.equal(byName.get("task_checkpoint")!.annotations?.readOnlyHint, false);
    assert.deepEqual(byName.get("writes_require")!.inputSchema.required, ["action"]);
    for (const t of tools) assert.match(t.name, /^[a-zA-Z0-9_-]{1,64}$/);
  });

  test("results come back as structured content; refusals as isError with the error's kind", async () => {
    const started = await call("task_start", { description: "mcp task" });
    assert.equal(started.isError, undefined);
    assert.equal(started.structuredContent.task.status, "in_progress");
    assert.deepEqual(JSON.parse(started.content[0]!.text).task.task_id, started.structuredContent.task.task_id);
    const gate = await call("writes_require", { action: "edit a" });
    assert.equal(gate.isError, true);
    assert.equal(gate.structuredContent.error.data.kind, "write_gate_violation");
    assert.equal(gate.structuredContent.error.data.reason, "read_only");
    const bad = await call("task_transition", { to: "nowhere", reason: "x" });
    assert.equal(bad.isError, true);
    assert.equal(bad.structuredContent.error.code, -32602);
  });

  test("an agent over MCP can ask for a lease but never grant one", async () => {
    await call("task_start", { description: "t" });
    const asked = await call("writes_request", { reason: "I need to edit src", scope: ["src/**"] });
    assert.equal(asked.structuredContent.granted, false);
    const enable = await call("writes_enable", { reason: "self" });
    assert.equal(enable.isError, true);
    assert.match(enable.content[0]!.text, /Unknown tool/);
    const gate = await call("writes_require", { action: "edit src/a.ts" });
    assert.equal(gate.isError, true);
    const st = await call("task_status");
    assert.equal(st.structuredContent.task.lease_log.at(-1).event, "requested");
  });

  test("memory search is bounded and paginated", async () => {
    for (let i = 0; i < 5; i++) await call("memory_save", { type: "note", title: `alpha ${i}`, content: "alpha" });
    const p1 = await call("memory_search", { query: "alpha", limit: 2 });
    assert.equal(p1.structuredContent.hits.length, 2);
    const p2 = await call("memory_search", { query: "alpha", limit: 2, cursor: p1.structuredContent.next_cursor });
    assert.equal(p2.structuredContent.hits.length, 2);
    assert.notDeepEqual(p1.structuredContent.hits, p2.structuredContent.hits);
    const tooMany = await call("memory_search", { query: "alpha", limit: 1000 });
    assert.equal(tooMany.isError, true);
    assert.equal(tooMany.structuredContent.error.data.kind, "limit_exceeded");
  });

  test("it serves only its own root", async () => {
    const other = tempDir();
    try {
      const r = await call("task_status", { root: other });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.error.data.field, "root");
    } finally {
      removeDir(other);
    }
  });
});
