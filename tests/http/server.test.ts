/**
 * The HTTP API for real: `longrun http` as a child process on 127.0.0.1 (the compiled binary and
 * `deno run`), spoken to over real sockets, including raw HTTP/1.1 for Host and chunked bodies.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LIMITS } from "../../src/core/limits.ts";
import { REPO, removeDir, run, tempDir, until } from "../support/helpers.ts";
import { BINARY, requireBinary, TARGETS } from "../protocol/server.ts";
import { raw } from "./raw.ts";
import { startHttpChild } from "./start.ts";

interface Running {
  child: ChildProcessWithoutNullStreams;
  url: string;
  port: number;
  tokenFile: string;
  exited: Promise<number | null>;
}

async function startHttp(argv: string[], root: string, extra: string[] = [], env: Record<string, string> = {}): Promise<Running> {
  const h = await startHttpChild(argv, ["--root", root, "--port", "0", ...extra], env);
  return { child: h.child, url: h.info.url, port: h.port, tokenFile: h.info.token_file, exited: h.exited };
}


for (const target of TARGETS) {
  describe(`longrun http on 127.0.0.1: ${target.name}`, () => {
    let root = "";
    let srv: Running;
    let tokens: { host_token: string; agent_token: string };
    beforeEach(async () => {
      root = tempDir();
      srv = await startHttp(target.argv, root);
      tokens = JSON.parse(readFileSync(srv.tokenFile, "utf8"));
    });
    afterEach(async () => {
      if (srv.child.exitCode === null && srv.child.signalCode === null) process.kill(srv.child.pid!, "SIGTERM");
      await srv.exited;
      removeDir(root);
    });

    const rpc = async (method: string, params: Record<string, unknown>, token: string) => {
      const r = await fetch(`${srv.url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
      return { status: r.status, body: (await r.json()) as { result?: any; error?: any } };
    };

    test("it binds loopback, writes its tokens to a 0600 file under .longrun/, and answers /health", async () => {
      assert.match(srv.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(srv.tokenFile, join(root, ".longrun", "http.json"));
      assert.equal(statSync(srv.tokenFile).mode & 0o777, 0o600);
      assert.notEqual(tokens.host_token, tokens.agent_token);
      const h = await fetch(`${srv.url}/health`);
      assert.equal(h.status, 200);
    });

    test("host and agent tokens speak for their sides; a missing token changes nothing", async () => {
      assert.equal((await rpc("task.start", { description: "over http" }, "nope-nope-nope-nope")).status, 401);
      assert.equal((await rpc("task.status", {}, tokens.agent_token)).body.result.task, null);
      await rpc("task.start", { description: "over http" }, tokens.agent_token);
      assert.equal((await rpc("writes.enable", { reason: "me" }, tokens.agent_token)).body.error.data.kind, "unauthorized");
      assert.equal((await rpc("writes.enable", { reason: "host" }, tokens.host_token)).body.result.lease.granted_by, "host:http");
      assert.equal((await rpc("writes.require", { action: "edit a" }, tokens.agent_token)).body.result.ok, true);
    });

    test("a foreign Host header is refused (DNS rebinding) and a request with no token gets nothing", async () => {
      const body = '{"jsonrpc":"2.0","id":1,"method":"task.status"}';
      const evil = await raw(srv.port, `POST /rpc HTTP/1.1\r\nHost: attacker.example\r\nAuthorization: Bearer ${tokens.host_token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      assert.equal(evil.status, 403);
      const good = await raw(srv.port, `POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nAuthorization: Bearer ${tokens.host_token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      assert.equal(good.status, 200);
    });

    test("a chunked body over the limit gets 413 before any work", async () => {
      const chunk = "x".repeat(64 * 1024);
      let req = `POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nAuthorization: Bearer ${tokens.host_token}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`;
      const n = Math.ceil(LIMITS.body_bytes / chunk.length) + 1;
      for (let i = 0; i < n; i++) req += `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
      req += "0\r\n\r\n";
      const r = await raw(srv.port, req);
      assert.equal(r.status, 413);
      assert.equal((await rpc("task.status", {}, tokens.agent_token)).body.result.task, null);
    });

    test("MCP over Streamable HTTP at /mcp with the agent token: agent tools only", async () => {
      const client = new Client({ name: "test", version: "1" });
      const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tokens.agent_token}` } } });
      await client.connect(transport);
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        assert.ok(names.includes("writes_require"));
        assert.ok(names.includes("writes_request"));
        assert.equal(names.includes("writes_enable"), false);
        const r = await client.callTool({ name: "task_status", arguments: {} });
        assert.deepEqual(r.structuredContent, { task: null, pending_checkpoint: null, runs: [] });
      } finally {
        await client.close();
      }
    });

    test("SIGTERM stops it with exit 0", async () => {
      process.kill(srv.child.pid!, "SIGTERM");
      assert.equal(await srv.exited, 0);
    });
  });
}

describe("longrun http start-up rules", () => {
  test("a non-loopback address needs --expose", async () => {
    requireBinary();
    const root = tempDir();
    try {
      const r = await run([BINARY, "http", "--root", root, "--host", "0.0.0.0", "--port", "0"]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /--expose/);
    } finally {
      removeDir(root);
    }
  });

  test("on all interfaces it answers only to the names it was given (and loopback)", async () => {
    requireBinary();
    const root = tempDir();
    try {
      const refused = await run([BINARY, "http", "--root", root, "--host", "0.0.0.0", "--port", "0", "--expose"]);
      assert.equal(refused.code, 2, "no --allowed-host: no way to know which Host headers are ours");
      assert.match(refused.stderr, /--allowed-host/);
    } finally {
      removeDir(root);
    }
    const root2 = tempDir();
    const srv = await startHttp([BINARY], root2, ["--host", "0.0.0.0", "--expose", "--allowed-host", "longrun.internal"]);
    try {
      const { agent_token } = JSON.parse(readFileSync(srv.tokenFile, "utf8"));
      const ask = (host: string) =>
        raw(srv.port, `GET /v1/status HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${agent_token}\r\nConnection: close\r\n\r\n`);
      assert.equal((await ask(`longrun.internal:${srv.port}`)).status, 200);
      assert.equal((await ask(`127.0.0.1:${srv.port}`)).status, 200);
      assert.equal((await ask(`attacker.example:${srv.port}`)).status, 403);
    } finally {
      process.kill(srv.child.pid!, "SIGTERM");
      await srv.exited;
      removeDir(root2);
    }
  });

  test("tokens given by environment are used and not written to the file", async () => {
    const root = tempDir();
    const env = { LONGRUN_HOST_TOKEN: "host-token-from-env-123", LONGRUN_AGENT_TOKEN: "agent-token-from-env-456" };
    const srv = await startHttp([BINARY], root, [], env);
    try {
      const file = JSON.parse(readFileSync(srv.tokenFile, "utf8"));
      assert.equal(file.tokens_from_env, true);
      assert.equal(file.host_token, undefined);
      const r = await fetch(`${srv.url}/v1/status`, { headers: { authorization: `Bearer ${env.LONGRUN_AGENT_TOKEN}` } });
      assert.equal(r.status, 200);
    } finally {
      process.kill(srv.child.pid!, "SIGTERM");
      await srv.exited;
      removeDir(root);
    }
  });
});
