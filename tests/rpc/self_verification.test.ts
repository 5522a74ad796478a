/**
 * The agent never verifies itself, by any route: once a task waits for verification, no agent-side
 * call (in-process agent side, HTTP with the agent token, MCP) gets it to completed, including the
 * detour through a checkpoint and task.recover; recovery over a readable state is refused unless
 * the host forces it.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { removeDir, tempDir } from "../support/helpers.ts";
import { RpcFixture } from "../ledger/rpc.ts";
import { BINARY, requireBinary } from "../support/server.ts";
import { startHttpChild } from "../http/start.ts";

/** One route into longrun: call a method, get `{ result }` or `{ kind }` of the error. */
type Call = (method: string, params?: Record<string, unknown>) => Promise<{ result?: any; kind?: string }>;

/** The detour a self-verifying agent tries, step by step; returns the task's final status. */
async function selfVerify(call: Call): Promise<{ statuses: string[]; refusals: (string | undefined)[] }> {
  const refusals: (string | undefined)[] = [];
  const step = async (m: string, p: Record<string, unknown> = {}) => {
    const r = await call(m, p);
    refusals.push(r.kind);
    return r;
  };
  await step("task.start", { description: "ship the parser" });
  await step("task.checkpoint", { summary: "half done", next_step: "finish it" });
  await step("task.resume");
  await step("task.transition", { to: "waiting_verification", reason: "done, please review" });
  await step("task.recover");
  await step("task.recover", { force: true });
  await step("task.transition", { to: "in_progress", reason: "back to work" });
  await step("task.finish", { summary: "I say it is done" });
  await step("task.transition", { to: "completed", reason: "accepting my own work" });
  const status = (await call("task.status")).result?.task?.status;
  return { statuses: [status], refusals };
}

function assertHeld(r: { statuses: string[]; refusals: (string | undefined)[] }, forced = "unauthorized"): void {
  assert.deepEqual(r.statuses, ["waiting_verification"]);
  // start, checkpoint, resume, transition: fine; recover: state readable; forced recover: not the agent's
  // (over MCP not even offered); leaving waiting_verification three ways: not the agent's
  assert.deepEqual(r.refusals, [undefined, undefined, undefined, undefined, "conflict", forced, "unauthorized", "unauthorized", "unauthorized"]);
}

describe("the agent never verifies itself", () => {
  test("in-process, agent side", async () => {
    const f = new RpcFixture();
    try {
      assertHeld(await selfVerify(async (m, p = {}) => {
        const a = await f.call(m, p, "agent");
        return a.error ? { kind: a.error.data.kind } : { result: a.result };
      }));
      // the host decides
      assert.equal((await f.ok("task.finish", { summary: "accepted" }, "host")).task.status, "completed");
    } finally {
      await f.close();
    }
  });

  describe("over real processes of the binary", () => {
    let root = "";
    beforeEach(() => {
      requireBinary();
      root = tempDir();
    });
    afterEach(() => removeDir(root));

    test("HTTP with the agent token", async () => {
      const http = await startHttpChild([BINARY], ["--root", root, "--port", "0"]);
      try {
        const info = http.info;
        const tokens = JSON.parse(readFileSync(info.token_file, "utf8")) as { agent_token: string; host_token: string };
        let id = 1;
        const rpc = async (token: string, method: string, params: Record<string, unknown> = {}) => {
          const res = await fetch(`${info.url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: id++, method, params }) });
          const body = (await res.json()) as { result?: any; error?: { data: { kind: string } } };
          return body.error ? { kind: body.error.data.kind } : { result: body.result };
        };
        assertHeld(await selfVerify((m, p) => rpc(tokens.agent_token, m, p)));
        const forced = await rpc(tokens.host_token, "task.recover", { force: true });
        assert.equal(forced.result.task.status, "in_progress", "the host may force recovery from the last checkpoint");
      } finally {
        await http.stop();
      }
    });

    test("MCP (SDK client over stdio)", async () => {
      const client = new Client({ name: "longrun-test", version: "1.0.0" });
      await client.connect(new StdioClientTransport({ command: BINARY, args: ["mcp", "--root", root, "--tools", "all"], stderr: "pipe" }));
      try {
        const names = new Set((await client.listTools()).tools.map((t) => t.name));
        assertHeld(await selfVerify(async (m, p = {}) => {
          const name = m.replace(/\./g, "_");
          if (!names.has(name)) return { kind: "not_offered" };
          // an argument the tool does not take (task_recover's force) is a JSON-RPC -32602: not offered
          const r = (await client.callTool({ name, arguments: p }).catch((e: { code?: number }) => ({ isError: true, notOffered: e.code === -32602 }))) as {
            isError?: boolean;
            notOffered?: boolean;
            structuredContent?: any;
            _meta?: any;
          };
          if (r.notOffered) return { kind: "not_offered" };
          return r.isError ? { kind: r._meta?.["longrun/error"]?.data?.kind ?? "error" } : { result: r.structuredContent };
        }), "not_offered");
      } finally {
        await client.close();
      }
    });
  });
});
