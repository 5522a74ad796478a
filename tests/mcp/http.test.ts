/**
 * MCP over Streamable HTTP at `/mcp` of a real `longrun http` (the binary): the tool set chosen
 * by `?tools=`, an unknown one refused with 400 naming what exists, and a `root` argument only
 * when the server answers for several roots (`--allow-root`).
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { selectTools } from "../../src/mcp/tool_sets.ts";
import { REPO, removeDir, tempDir, until } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";

async function withHttp(root: string, extra: string[], fn: (url: string, agentToken: string) => Promise<void>): Promise<void> {
  requireBinary();
  const child: ChildProcessWithoutNullStreams = spawn(BINARY, ["http", "--root", root, "--port", "0", ...extra], { cwd: REPO });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  const exited = new Promise((r) => child.on("close", r));
  try {
    const line = await until(() => out.split("\n").find((l) => l.startsWith("{")), "the http server's first line", 20_000);
    const info = JSON.parse(line) as { url: string; token_file: string };
    const tokens = JSON.parse(readFileSync(info.token_file, "utf8")) as { agent_token: string };
    await fn(info.url, tokens.agent_token);
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "longrun-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

describe("MCP at /mcp of longrun http (compiled binary)", () => {
  test("?tools= picks the set (default without it); an unknown name is a 400 naming the sets; one root: no root argument", async () => {
    const root = tempDir();
    try {
      await withHttp(root, [], async (url, token) => {
        const cases: [string, string][] = [["", "default"], ["?tools=research", "research"], ["?tools=default,task_transition", "default,task_transition"]];
        for (const [query, set] of cases) {
          const client = await connect(`${url}/mcp${query}`, token);
          try {
            const tools = (await client.listTools()).tools;
            assert.deepEqual(tools.map((t) => t.name), selectTools(set).map((t) => t.name), query);
            for (const t of tools) assert.equal("root" in (t.inputSchema.properties ?? {}), false, `${t.name}: one root`);
          } finally {
            await client.close();
          }
        }
        const bad = await fetch(`${url}/mcp?tools=writes_enable`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        });
        assert.equal(bad.status, 400);
        const problem = (await bad.json()) as { kind: string; detail: string };
        assert.equal(problem.kind, "invalid_params");
        assert.match(problem.detail, /unknown tool set or tool "writes_enable" in \?tools=: sets are default, research, all/);
      });
    } finally {
      removeDir(root);
    }
  });

  test("a server for several roots gives every tool a root argument, and a call lands in the root it names", async () => {
    const root = tempDir();
    const other = tempDir();
    try {
      await withHttp(root, ["--allow-root", other], async (url, token) => {
        const client = await connect(`${url}/mcp`, token);
        try {
          const tools = (await client.listTools()).tools;
          for (const t of tools) assert.match(String((t.inputSchema.properties as Record<string, { description?: string }>).root?.description), /e\.g\./, t.name);
          const started = (await client.callTool({ name: "task_start", arguments: { description: "in the other root", root: other } })) as { structuredContent: any };
          assert.equal(started.structuredContent.task.description, "in the other root");
          const here = (await client.callTool({ name: "task_status", arguments: {} })) as { structuredContent: any };
          assert.equal(here.structuredContent.task, null, "the default root is untouched");
          const there = (await client.callTool({ name: "task_status", arguments: { root: other } })) as { structuredContent: any };
          assert.equal(there.structuredContent.task.task_id, started.structuredContent.task.task_id);
        } finally {
          await client.close();
        }
      });
    } finally {
      removeDir(root);
      removeDir(other);
    }
  });
});
