/** The HTTP app in-process, through Hono's app.request: no socket, the same middleware and routes. */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { createHttpApp } from "../../src/http/app.ts";
import { StatusPage } from "../../src/http/page/routes.ts";
import { LiveTokens, type Tokens } from "../../src/http/tokens.ts";
import { Dispatcher } from "../../src/rpc/dispatcher.ts";
import { allMethods } from "../../src/rpc/methods/index.ts";
import { RootRegistry } from "../../src/root/registry.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

const HOST = "127.0.0.1:9999";
const tokens = { host: "h".repeat(32), agent: "a".repeat(32) };

describe("HTTP API in-process (Hono app.request)", () => {
  let dir = "";
  let outside = "";
  let roots: RootRegistry;
  let app: ReturnType<typeof createHttpApp>;
  beforeEach(() => {
    dir = tempDir();
    outside = tempDir();
    roots = new RootRegistry({ defaultRoot: dir, allow: [dir] });
    app = createHttpApp({ dispatcher: new Dispatcher({ methods: allMethods(), roots }), tokens, hosts: [HOST, "localhost:9999"], defaultLeaseTtlSeconds: 600, bodyLimitBytes: 4096 });
  });
  afterEach(async () => {
    await roots.closeAll();
    removeDir(dir);
    removeDir(outside);
  });

  const rpc = (method: string, params: Record<string, unknown> = {}, token: string | null = tokens.host, headers: Record<string, string> = {}) =>
    app.request("/rpc", {
      method: "POST",
      headers: { host: HOST, "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
  const status = async () => ((await (await rpc("task.status")).json()) as { result: { task: Record<string, unknown> | null } }).result.task;

  test("GET /health answers without a token", async () => {
    const r = await app.request("/health", { headers: { host: HOST } });
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { ok: boolean }).ok, true);
  });

  test("no token or a wrong token: 401, a JSON-RPC error on /rpc, and nothing happens", async () => {
    for (const token of [null, "wrong-token-wrong-token-wrong"]) {
      const r = await rpc("task.start", { description: "should not exist" }, token);
      assert.equal(r.status, 401);
      assert.equal(r.headers.get("www-authenticate"), "Bearer");
      const body = (await r.json()) as { error: { code: number; data: { kind: string } } };
      assert.equal(body.error.code, -32008);
      assert.equal(body.error.data.kind, "unauthorized");
    }
    assert.equal(await status(), null);
    const v1 = await app.request("/v1/status", { headers: { host: HOST } });
    assert.equal(v1.status, 401);
    assert.equal(v1.headers.get("content-type"), "application/problem+json");
  });

  test("the agent token cannot grant a lease; the host token can, with a default time to live and its name recorded", async () => {
    await rpc("task.start", { description: "http task" }, tokens.agent);
    const denied = (await (await rpc("writes.enable", { reason: "self-approval" }, tokens.agent)).json()) as { error: { code: number } };
    assert.equal(denied.error.code, -32008);
    assert.equal((await status())?.access_mode, "read_only");
    const granted = (await (await rpc("writes.enable", { reason: "host says yes" })).json()) as { result: { lease: Record<string, unknown> } };
    assert.equal(granted.result.lease.granted_by, "host:http");
    assert.ok(typeof granted.result.lease.expires_at === "string", "HTTP grants get the documented default TTL");
    const ok = (await (await rpc("writes.require", { action: "edit x" }, tokens.agent)).json()) as { result: { ok: boolean } };
    assert.equal(ok.result.ok, true);
    const requested = (await (await rpc("writes.request", { reason: "please" }, tokens.agent)).json()) as { result: { granted: boolean } };
    assert.equal(requested.result.granted, false);
  });

  test("a foreign Host is refused before routing, even with a valid token", async () => {
    const before = (await status())?.version ?? 0;
    const r = await app.request("/rpc", {
      method: "POST",
      headers: { host: "evil.example:9999", authorization: `Bearer ${tokens.host}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "turn.begin" }),
    });
    assert.equal(r.status, 403);
    assert.equal(((await r.json()) as { kind: string }).kind, "forbidden_host");
    assert.equal((await status())?.version ?? 0, before);
  });

  test("a foreign Origin is refused; the served origin is fine; no CORS headers are offered", async () => {
    const evil = await rpc("task.status", {}, tokens.host, { origin: "http://evil.example" });
    assert.equal(evil.status, 403);
    assert.equal(evil.headers.get("access-control-allow-origin"), null);
    const same = await rpc("task.status", {}, tokens.host, { origin: `http://${HOST}` });
    assert.equal(same.status, 200);
    assert.equal(same.headers.get("access-control-allow-origin"), null);
  });

  test("a body over the limit gets 413 before any work, by Content-Length or chunked", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.start", params: { description: "x".repeat(5000) } });
    const sized = await app.request("/rpc", { method: "POST", headers: { host: HOST, authorization: `Bearer ${tokens.host}`, "content-length": String(big.length) }, body: big });
    assert.equal(sized.status, 413);
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode("x".repeat(1000)));
        c.close();
      },
    });
    const chunked = await app.request("/rpc", { method: "POST", headers: { host: HOST, authorization: `Bearer ${tokens.host}`, "transfer-encoding": "chunked" }, body: stream, duplex: "half" } as RequestInit);
    assert.equal(chunked.status, 413);
    assert.equal(((await chunked.json()) as { kind: string }).kind, "limit_exceeded");
  });

  test("a root outside the allow-list is refused", async () => {
    const r = (await (await rpc("task.status", { root: outside })).json()) as { error: { code: number; data: { field: string } } };
    assert.equal(r.error.code, -32602);
    assert.equal(r.error.data.field, "root");
    const v1 = await app.request(`/v1/status?root=${encodeURIComponent(outside)}`, { headers: { host: HOST, authorization: `Bearer ${tokens.agent}` } });
    assert.equal(v1.status, 422);
    assert.equal(v1.headers.get("content-type"), "application/problem+json");
  });

  test("a sibling with the root's name as a prefix, and a symlink out of the root, are refused", async () => {
    const { mkdirSync, symlinkSync } = await import("node:fs");
    const sibling = `${dir}-evil`;
    mkdirSync(sibling);
    const link = `${dir}/escape`;
    symlinkSync(outside, link);
    try {
      for (const root of [sibling, link, `${dir}/../${outside.split("/").pop()}`]) {
        const r = (await (await rpc("task.status", { root })).json()) as { error?: { code: number; data: { field: string } } };
        assert.equal(r.error?.code, -32602, root);
        assert.equal(r.error?.data.field, "root");
      }
    } finally {
      removeDir(sibling);
    }
  });

  test("GET /v1/status shows the task and its grants", async () => {
    await rpc("task.start", { description: "status over http" }, tokens.agent);
    await rpc("writes.enable", { reason: "host says yes" });
    const r = await app.request("/v1/status", { headers: { host: HOST, authorization: `Bearer ${tokens.agent}` } });
    assert.equal(r.status, 200);
    const body = (await r.json()) as { task: { lease_log: { event: string; by?: string }[] } };
    assert.ok(body.task.lease_log.some((e) => e.event === "granted" && e.by === "host:http"));
  });

  test("a notification gets 204 and no body; an unknown route a problem+json 404", async () => {
    const n = await app.request("/rpc", { method: "POST", headers: { host: HOST, authorization: `Bearer ${tokens.host}` }, body: '{"jsonrpc":"2.0","method":"task.status"}' });
    assert.equal(n.status, 204);
    const nf = await app.request("/nope", { headers: { host: HOST, authorization: `Bearer ${tokens.host}` } });
    assert.equal(nf.status, 404);
    assert.equal(nf.headers.get("content-type"), "application/problem+json");
  });

  test("MCP at /mcp takes the agent token only", async () => {
    const r = await app.request("/mcp", { method: "POST", headers: { host: HOST, authorization: `Bearer ${tokens.host}`, "content-type": "application/json" }, body: "{}" });
    assert.equal(r.status, 403);
  });
});

describe("HTTP API in-process: the metrics token, a rotation, the login-link route", () => {
  let dir = "";
  let roots: RootRegistry;
  beforeEach(() => {
    dir = tempDir();
    roots = new RootRegistry({ defaultRoot: dir, allow: [dir] });
  });
  afterEach(async () => {
    await roots.closeAll();
    removeDir(dir);
  });
  const three = { host: "h".repeat(32), agent: "a".repeat(32), metrics: "m".repeat(32) };
  const make = (t: Tokens | LiveTokens) => {
    const dispatcher = new Dispatcher({ methods: allMethods(), roots });
    const page = new StatusPage({ dispatcher, defaultRoot: dir, cookieName: "longrun_page_9999" });
    return { page, app: createHttpApp({ dispatcher, tokens: t, hosts: [HOST], page }) };
  };
  const req = (app: ReturnType<typeof createHttpApp>, method: string, path: string, token: string | null, body?: string) =>
    app.request(path, { method, headers: { host: HOST, "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body });

  test("the metrics token reads /metrics and is refused everywhere else, as no token at all", async () => {
    const { app, page } = make(three);
    try {
      assert.equal((await req(app, "GET", "/metrics", three.metrics)).status, 200);
      assert.equal((await req(app, "GET", "/metrics", three.host)).status, 200);
      assert.equal((await req(app, "GET", "/metrics", three.agent)).status, 403);
      const rpcBody = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.status", params: {} });
      for (const [method, path, body] of [["POST", "/rpc", rpcBody], ["GET", "/v1/status"], ["POST", "/mcp", rpcBody], ["GET", "/page/state"], ["POST", "/page/link"], ["POST", "/v1/login-link"]] as const) {
        assert.equal((await req(app, method, path, three.metrics, body)).status, 401, `${method} ${path}`);
      }
    } finally {
      page.close();
    }
  });

  test("POST /v1/login-link: the host token gets a one-time link to this Host; the agent token is refused", async () => {
    const { app, page } = make(three);
    try {
      assert.equal((await req(app, "POST", "/v1/login-link", three.agent)).status, 403);
      assert.equal((await req(app, "POST", "/v1/login-link", null)).status, 401);
      const r = await req(app, "POST", "/v1/login-link", three.host);
      assert.equal(r.status, 200);
      const link = new URL(((await r.json()) as { url: string }).url);
      assert.equal(link.host, HOST);
      const code = link.searchParams.get("login")!;
      assert.equal(page.sessions.redeem(code)?.side, "host");
      assert.equal(page.sessions.redeem(code), null, "once");
    } finally {
      page.close();
    }
  });

  test("tokens swapped while serving: the old ones are refused from the next request on", async () => {
    const live = new LiveTokens(three);
    const { app, page } = make(live);
    try {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.status", params: {} });
      assert.equal((await req(app, "POST", "/rpc", three.agent, body)).status, 200);
      live.set({ host: "H".repeat(32), agent: "A".repeat(32), metrics: null });
      for (const old of [three.host, three.agent]) assert.equal((await req(app, "POST", "/rpc", old, body)).status, 401, "the fast path too");
      assert.equal((await req(app, "GET", "/metrics", three.metrics)).status, 401);
      assert.equal((await req(app, "POST", "/rpc", "A".repeat(32), body)).status, 200);
    } finally {
      page.close();
    }
  });
});
