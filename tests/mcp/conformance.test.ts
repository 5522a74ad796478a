/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
 * package.json) run as a child process, `conformance server --url … --scenario …`, against a real
 * `longrun http` (the compiled binary) on 127.0.0.1, one scenario at a time; each must exit 0 with
 * at least one passed check and none failed.
 *
 * The scenarios that apply to longrun, and run here: server-initialize, ping, tools-list (the
 * default set and `?tools=all`), resources-list, prompts-list, dns-rebinding-protection.
 *
 * Left out (`conformance list --server` names them), because they do not apply:
 * - tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content, -with-logging,
 *   -error, -with-progress, -sampling, -elicitation, json-schema-2020-12,
 *   elicitation-sep1034-defaults, elicitation-sep1330-enums: each calls a fixture tool of the
 *   suite's reference "everything" server (test_simple_text, test_error_handling,
 *   json_schema_2020_12_tool, …); longrun offers only its own tools (tools-call-with-logging also
 *   needs logging). longrun's tool calls, their errors and isError results are tested in
 *   tools.test.ts, errors.test.ts and protocol.test.ts.
 * - resources-read-text, -read-binary, -templates-read, prompts-get-simple, -with-args,
 *   -embedded-resource, -with-image: fixture resources (test://static-text, …) and prompts
 *   (test_simple_prompt, …) of that server; longrun's resources and prompt are in resources.test.ts.
 * - logging-set-level, completion-complete, resources-subscribe, resources-unsubscribe: optional
 *   capabilities (logging, completions, resources.subscribe) that longrun does not declare, so
 *   the method is rightly answered -32601 (Method not found).
 * - server-sse-polling, server-sse-multiple-streams: need a session and SSE streams; longrun's
 *   /mcp is stateless and answers plain JSON (no Mcp-Session-Id), so the suite records only a
 *   warning and no check.
 *
 * The suite has no way to send a header (longrun's /mcp needs `Authorization: Bearer <agent
 * token>`): it talks to a small forwarding proxy in this test, on 127.0.0.1, that adds the agent
 * token and otherwise passes each request through as sent. The only other change it makes is to
 * translate its own address in Host and Origin to longrun's (what a client that connected
 * directly would have sent); any other Host or Origin reaches longrun untouched, so the DNS
 * rebinding scenario's foreign Host is refused by longrun itself (asserted: 403 forbidden_host).
 * longrun runs with its ordinary tokens (env LONGRUN_HOST_TOKEN / LONGRUN_AGENT_TOKEN), and a
 * request straight to it without a token is still refused (asserted).
 *
 * The suite has no stdio mode (server scenarios take only --url), so `longrun mcp` over stdio is
 * not run by it; that transport shares createMcpServer with /mcp and is tested in mcp.test.ts and
 * protocol.test.ts. Its CLI needs Node >= 22 (`fs.globSync`); it runs on the project's Bun
 * (node_modules/.bin/bun) under both test runners.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { REPO, removeDir, tempDir, until } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";

const BUN = join(REPO, "node_modules", ".bin", "bun");
const CONFORMANCE = join(REPO, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO";
  errorMessage?: string;
  details?: Record<string, any>;
}

interface Longrun {
  url: string;
  stop(): Promise<void>;
}

/** `longrun http --root ROOT --port 0` with tokens from the environment; its base URL. */
async function startLongrun(root: string, tokens: { host: string; agent: string }): Promise<Longrun> {
  requireBinary();
  const env = { ...process.env, LONGRUN_HOST_TOKEN: tokens.host, LONGRUN_AGENT_TOKEN: tokens.agent };
  const child: ChildProcessWithoutNullStreams = spawn(BINARY, ["http", "--root", root, "--port", "0"], { cwd: REPO, env });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise((r) => child.on("close", r));
  const stop = async () => {
    child.kill("SIGTERM");
    await exited;
  };
  try {
    const line = await until(() => out.split("\n").find((l) => l.startsWith("{")), "the http server's first line", 20_000);
    return { url: (JSON.parse(line) as { url: string }).url, stop };
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}; stderr: ${err}`);
  }
}

const HOP_BY_HOP = ["connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade"];

interface Proxy {
  url: string;
  close(): Promise<void>;
}

/**
 * A forwarding proxy on 127.0.0.1 to `target` that adds `Authorization: Bearer <token>`; its own
 * address in Host or Origin becomes the target's, anything else is passed on as sent.
 */
async function startProxy(target: string, token: string): Promise<Proxy> {
  const up = new URL(target);
  const server = http.createServer((req, res) => {
    const port = (server.address() as AddressInfo).port;
    const own = new Map([
      [`127.0.0.1:${port}`, `127.0.0.1:${up.port}`],
      [`localhost:${port}`, `localhost:${up.port}`],
    ]);
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.includes(name)) headers[name] = value;
    const host = req.headers.host ?? "";
    if (own.has(host)) headers.host = own.get(host);
    const origin = req.headers.origin;
    if (origin?.startsWith("http://") && own.has(origin.slice(7))) headers.origin = `http://${own.get(origin.slice(7))}`;
    headers.authorization = `Bearer ${token}`;
    const forward = http.request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers, agent: false }, (answer) => {
      const back: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.includes(name)) back[name] = value;
      res.writeHead(answer.statusCode ?? 502, back);
      answer.pipe(res);
    });
    forward.on("error", (e) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy: ${e.message}`);
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

interface Outcome {
  code: number | null;
  output: string;
  checks: Check[];
}

/** `conformance server --url URL --scenario NAME -o DIR` on Bun; its exit code, output and checks.json. */
async function runScenario(url: string, scenario: string): Promise<Outcome> {
  const outDir = tempDir("longrun-conformance-");
  try {
    const child = spawn(BUN, [CONFORMANCE, "server", "--url", url, "--scenario", scenario, "-o", outDir], { cwd: outDir, env: { ...process.env, NO_COLOR: "1" } });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    clearTimeout(timer);
    const dirs = readdirSync(outDir);
    assert.equal(dirs.length, 1, `${scenario}: one result directory expected in ${outDir}, got ${dirs.join(", ")}\n${output}`);
    const checks = JSON.parse(readFileSync(join(outDir, dirs[0]!, "checks.json"), "utf8")) as Check[];
    return { code, output, checks };
  } finally {
    removeDir(outDir);
  }
}

/** The scenario exited 0, with at least one passed check and none failed; its checks by id. */
function assertPassed(scenario: string, o: Outcome): Map<string, Check> {
  const failed = o.checks.filter((c) => c.status === "FAILURE");
  const summary = `${scenario}:\n${o.checks.map((c) => `  ${c.status} ${c.id}${c.errorMessage ? `: ${c.errorMessage}` : ""}`).join("\n")}\n--- output ---\n${o.output}`;
  assert.deepEqual(failed.map((c) => c.id), [], summary);
  assert.ok(o.checks.some((c) => c.status === "SUCCESS"), `no check passed (a scenario that checks nothing proves nothing): ${summary}`);
  assert.equal(o.code, 0, summary);
  return new Map(o.checks.map((c) => [c.id, c]));
}

describe("MCP conformance suite (@modelcontextprotocol/conformance) against longrun http's /mcp", () => {
  const root = tempDir();
  const tokens = { host: randomBytes(32).toString("hex"), agent: randomBytes(32).toString("hex") };
  let longrun: Longrun | undefined;
  let proxy: Proxy | undefined;

  before(async () => {
    if (!existsSync(CONFORMANCE)) throw new Error(`${CONFORMANCE} is missing: run npm ci (it is a pinned devDependency)`);
    longrun = await startLongrun(root, tokens);
    proxy = await startProxy(longrun.url, tokens.agent);
  });

  after(async () => {
    await proxy?.close();
    await longrun?.stop();
    removeDir(root);
  });

  test("longrun itself still refuses /mcp without the agent token (the proxy holds it, longrun's auth is unchanged)", async () => {
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const none = await fetch(`${longrun!.url}/mcp`, { method: "POST", headers, body: JSON.stringify(init) });
    assert.equal(none.status, 401);
    await none.body?.cancel();
    const host = await fetch(`${longrun!.url}/mcp`, { method: "POST", headers: { ...headers, authorization: `Bearer ${tokens.host}` }, body: JSON.stringify(init) });
    assert.equal(host.status, 403, "the host token is not for /mcp");
    await host.body?.cancel();
  });

  for (const scenario of ["server-initialize", "ping", "tools-list", "resources-list", "prompts-list"]) {
    test(`${scenario} passes`, async () => {
      const checks = assertPassed(scenario, await runScenario(`${proxy!.url}/mcp`, scenario));
      assert.equal(checks.get(scenario)?.status, "SUCCESS");
    });
  }

  test("tools-list passes with every tool offered (/mcp?tools=all)", async () => {
    const checks = assertPassed("tools-list", await runScenario(`${proxy!.url}/mcp?tools=all`, "tools-list"));
    const listed = checks.get("tools-list")!.details as { toolCount: number; tools: string[] };
    assert.ok(listed.tools.includes("run_start") && listed.tools.includes("task_transition"), `all tools listed: ${listed.tools.join(", ")}`);
  });

  test("dns-rebinding-protection passes: longrun refuses a foreign Host/Origin with 403 and accepts its own", async () => {
    const checks = assertPassed("dns-rebinding-protection", await runScenario(`${proxy!.url}/mcp`, "dns-rebinding-protection"));
    const rejected = checks.get("localhost-host-rebinding-rejected")!;
    assert.equal(rejected.status, "SUCCESS");
    assert.equal(rejected.details?.statusCode, 403);
    assert.equal(rejected.details?.body?.kind, "forbidden_host", "refused by longrun's Host rule, not for a missing token");
    const accepted = checks.get("localhost-host-valid-accepted")!;
    assert.equal(accepted.status, "SUCCESS");
    assert.equal(accepted.details?.statusCode, 200);
  });
});
