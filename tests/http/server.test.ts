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
import { BINARY, requireBinary, requireTarget, SOURCE_AND_BINARY, type Target, TARGETS } from "../support/server.ts";
import { readGivenTokens, tokenOrigins } from "../../src/http/token_files.ts";
import { raw } from "./raw.ts";
import { startHttpChild } from "./start.ts";

interface Running {
  child: ChildProcessWithoutNullStreams;
  url: string;
  port: number;
  tokenFile: string;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** `longrun http --root ROOT --port 0 …extra` run by `target` (the binary, or the source), its first line read. */
async function startHttp(target: string[] | Target, root: string, extra: string[] = [], env: Record<string, string> = {}): Promise<Running> {
  const argv = Array.isArray(target) ? target : target.argv;
  const h = await startHttpChild(argv, ["--root", root, "--port", "0", ...extra], env);
  return { child: h.child, url: h.info.url, port: h.port, tokenFile: h.info.token_file, exited: h.exited, stop: async () => void (await h.stop()) };
}

const bodyOf = (text: string): any => JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));


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
        assert.deepEqual(r.structuredContent, { task: null, pending_checkpoint: null, runs: [], approvals: [] });
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

describe("longrun http guards its sides and its origin (the source and the binary)", () => {
  // Kills: the bearer token compared as a prefix (src/http/tokens.ts sideChecker), e.g.
  // `tokens.host.startsWith(given)`, under which `Bearer h` speaks for a host whose token is "hhhh…".
  test("HTTP: only the whole token speaks for a side; a prefix or an extension of it gets 401 and changes nothing", async () => {
    const HOST = "h".repeat(32);
    const AGENT = "a".repeat(32);
    for (const target of SOURCE_AND_BINARY) {
      const root = tempDir();
      const srv = await startHttp(target, root, [], { LONGRUN_HOST_TOKEN: HOST, LONGRUN_AGENT_TOKEN: AGENT });
      try {
        const rpc = async (token: string, method: string, params: Record<string, unknown> = {}) => {
          const r = await fetch(`${srv.url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
          return { status: r.status, body: (await r.json()) as { result?: any; error?: any } };
        };
        for (const bad of ["h", HOST.slice(0, 16), HOST.slice(0, -1), HOST + "h", "a", AGENT.slice(0, -1), AGENT + "a"]) {
          const start = await rpc(bad, "task.start", { description: "started with a partial token" });
          assert.equal(start.status, 401, `${target.name}: Bearer ${bad} on /rpc`);
          assert.equal(start.body.error.code, -32008);
          assert.equal(start.body.error.data.kind, "unauthorized");
          const v1 = await fetch(`${srv.url}/v1/status`, { headers: { authorization: `Bearer ${bad}` } });
          assert.equal(v1.status, 401, `${target.name}: Bearer ${bad} on /v1/status`);
          await v1.body?.cancel();
        }
        assert.equal((await rpc(AGENT, "task.status")).body.result.task, null, `${target.name}: nothing was started`);
        // the whole tokens still work, each for its side
        assert.equal((await rpc(AGENT, "task.start", { description: "the real agent" })).status, 200);
        assert.equal((await rpc(AGENT, "writes.enable", { reason: "self" })).body.error.data.kind, "unauthorized");
        assert.equal((await rpc(HOST, "writes.enable", { reason: "host" })).body.result.lease.granted_by, "host:http");
      } finally {
        await srv.stop();
        removeDir(root);
      }
    }
  });

  // Kills: an Origin (or Host) matched with `startsWith` in src/http/app.ts, in the middleware or in
  // the hot POST /rpc route, under which `http://127.0.0.1:PORT.evil.com` passes as the served origin.
  test("HTTP: Host and Origin are compared whole; `127.0.0.1:PORT.evil.com` is foreign on the hot /rpc route and on every other route", async () => {
    for (const target of SOURCE_AND_BINARY) {
      const root = tempDir();
      const HOST = "h".repeat(32);
      const srv = await startHttp(target, root, [], { LONGRUN_HOST_TOKEN: HOST, LONGRUN_AGENT_TOKEN: "a".repeat(32) });
      try {
        const served = `127.0.0.1:${srv.port}`;
        const start = '{"jsonrpc":"2.0","id":1,"method":"task.start","params":{"description":"rebinding"}}';
        // sized body: the hot route; chunked body and GET: the middleware
        const sized = (host: string, extra = "") =>
          raw(srv.port, `POST /rpc HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${HOST}\r\nContent-Type: application/json\r\n${extra}Content-Length: ${start.length}\r\nConnection: close\r\n\r\n${start}`);
        const chunked = (host: string, extra = "") =>
          raw(srv.port, `POST /rpc HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${HOST}\r\nContent-Type: application/json\r\n${extra}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${start.length.toString(16)}\r\n${start}\r\n0\r\n\r\n`);
        const get = (host: string, extra = "") => raw(srv.port, `GET /v1/status HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${HOST}\r\n${extra}Connection: close\r\n\r\n`);

        for (const origin of [`http://${served}.evil.com`, `http://localhost:${srv.port}.evil.com`, `http://${served}@evil.com`, `http://${served}0`]) {
          for (const [route, ask] of [["POST /rpc (sized)", sized], ["POST /rpc (chunked)", chunked], ["GET /v1/status", get]] as const) {
            const r = await ask(served, `Origin: ${origin}\r\n`);
            assert.equal(r.status, 403, `${target.name}: ${route} with Origin ${origin}`);
            assert.equal(bodyOf(r.text).kind, "forbidden_origin");
          }
        }
        for (const host of [`${served}.evil.com`, `localhost:${srv.port}.evil.com`, `${served}0`]) {
          for (const [route, ask] of [["POST /rpc (sized)", sized], ["POST /rpc (chunked)", chunked], ["GET /v1/status", get]] as const) {
            const r = await ask(host);
            assert.equal(r.status, 403, `${target.name}: ${route} with Host ${host}`);
            assert.equal(bodyOf(r.text).kind, "forbidden_host");
          }
        }
        const status = await get(served, `Origin: http://${served}\r\n`);
        assert.equal(status.status, 200, "the served origin is fine");
        assert.equal(bodyOf(status.text).task, null, `${target.name}: no refused request started a task`);
        assert.equal((await sized(served, `Origin: http://${served}\r\n`)).status, 200, "the served origin is fine on the hot route too");
      } finally {
        await srv.stop();
        removeDir(root);
      }
    }
  });

  // Kills (found beside the named ones): tokens from the environment accepted when they are equal
  // (src/http/token_files.ts readGivenTokens without `host === agent`): the agent's token would then speak for
  // the host (the host is checked first), and the agent could grant itself a lease.
  test("HTTP: host and agent tokens given by environment must differ; the server refuses to start with one token for both", async () => {
    const same = "same-token-for-both-sides";
    const given = (env: Record<string, string>) => readGivenTokens(tokenOrigins(env));
    assert.throws(() => given({ LONGRUN_HOST_TOKEN: same, LONGRUN_AGENT_TOKEN: same }), /differ/);
    assert.deepEqual(given({ LONGRUN_HOST_TOKEN: same, LONGRUN_AGENT_TOKEN: same + "-2" }).pair, { host: same, agent: same + "-2" });
    for (const target of SOURCE_AND_BINARY) {
      requireTarget(target);
      const root = tempDir();
      const child = spawn(target.argv[0]!, [...target.argv.slice(1), "http", "--root", root, "--port", "0"], { cwd: REPO, env: { ...process.env, LONGRUN_HOST_TOKEN: same, LONGRUN_AGENT_TOKEN: same } });
      let out = "";
      let err = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
      const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
      try {
        const outcome = await until(() => (child.exitCode !== null ? "exited" : out.includes("{") ? "serving" : null), "longrun http to exit or serve", 30_000);
        assert.equal(outcome, "exited", `${target.name}: it must not serve with one token for both sides (stdout: ${out})`);
        assert.notEqual(await exited, 0);
        assert.match(err, /LONGRUN_HOST_TOKEN and LONGRUN_AGENT_TOKEN \(each or its _FILE\) must both be set, differ/);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
        await exited;
        removeDir(root);
      }
    }
  });
});
