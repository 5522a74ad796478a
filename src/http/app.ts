/**
 * The HTTP API, a Hono app: `POST /rpc` (the same dispatcher and schemas as stdio), `GET /health`,
 * `GET /v1/status`, and MCP over Streamable HTTP at `/mcp`. Before any routing it refuses a
 * `Host` that is not the served host and a foreign `Origin` (DNS rebinding); bodies over the limit
 * get 413 before any work; every route but /health needs a bearer token, which decides the side.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { LIMITS } from "../core/limits.ts";
import { createMcpServer } from "../mcp/server.ts";
import { Dispatcher, errorResponse } from "../rpc/dispatcher.ts";
import { httpStatusOf, toErrorObject } from "../rpc/errors.ts";
import type { Caller, Side } from "../rpc/method.ts";
import { VERSION } from "../version.ts";
import { sideChecker, type Tokens } from "./tokens.ts";

export interface HttpAppOptions {
  dispatcher: Dispatcher;
  tokens: Tokens;
  /** `Host` header values this server answers to, e.g. `127.0.0.1:8080`, `localhost:8080`. */
  hosts: string[];
  /** Lease time to live applied to grants made over HTTP without one (hosts may not see turn boundaries). */
  defaultLeaseTtlSeconds?: number;
  bodyLimitBytes?: number;
}

type Env = { Variables: { side: Side } };

function problem(c: Context, status: number, kind: string, title: string, detail: string, extra: Record<string, unknown> = {}) {
  return c.body(JSON.stringify({ type: `https://longrun.dev/errors/${kind}`, title, status, detail, kind, ...extra }), status as 400, {
    "content-type": "application/problem+json",
  });
}

export function createHttpApp(options: HttpAppOptions): Hono<Env> {
  const app = new Hono<Env>();
  const hosts = new Set(options.hosts.map((h) => h.toLowerCase()));
  const origins = new Set(options.hosts.map((h) => `http://${h.toLowerCase()}`));
  const limit = options.bodyLimitBytes ?? LIMITS.body_bytes;
  const sideOf = sideChecker(options.tokens);
  const caller = (side: Side, via = "http"): Caller => ({
    side,
    via,
    defaultLeaseTtlSeconds: side === "host" ? options.defaultLeaseTtlSeconds : undefined,
  });

  // DNS-rebinding defence, before routing.
  app.use("*", async (c, next) => {
    const host = (c.req.header("host") ?? "").toLowerCase();
    if (!hosts.has(host)) {
      return problem(c, 403, "forbidden_host", "Host not served", `This server answers to ${[...hosts].join(", ")}, not ${JSON.stringify(host)}`);
    }
    const origin = c.req.header("origin");
    if (origin !== undefined && !origins.has(origin.toLowerCase())) {
      return problem(c, 403, "forbidden_origin", "Cross-origin request refused", `Origin ${JSON.stringify(origin)} may not call this API; no CORS is offered`);
    }
    await next();
  });

  app.use(
    "*",
    bodyLimit({
      maxSize: limit,
      onError: (c) => problem(c, 413, "limit_exceeded", "Body too large", `The request body is over ${limit} bytes; send less or split it`, { field: "body", limit, unit: "bytes" }),
    }),
  );

  app.get("/health", (c) => c.json({ ok: true, name: "longrun", version: VERSION }));

  app.use("*", async (c, next) => {
    const side = sideOf(c.req.header("authorization"));
    if (!side) {
      const detail = "A valid bearer token is required: Authorization: Bearer <host or agent token> (see .longrun/http.json)";
      if (c.req.path === "/rpc") {
        const body = errorResponse(null, { code: -32008, message: `Unauthorized: ${detail}`, data: { kind: "unauthorized" } });
        return c.json(body, 401, { "www-authenticate": "Bearer" });
      }
      c.header("www-authenticate", "Bearer");
      return problem(c, 401, "unauthorized", "Unauthorized", detail);
    }
    c.set("side", side);
    await next();
  });

  const rpc = async (text: string, side: Side): Promise<Response> => {
    const answer = await options.dispatcher.handleText(text, caller(side));
    if (answer === null) return new Response(null, { status: 204 });
    return new Response(answer, { status: 200, headers: { "content-type": "application/json" } });
  };
  app.post("/rpc", async (c) => rpc(await c.req.text(), c.get("side")));

  app.get("/v1/status", async (c) => {
    const root = c.req.query("root");
    const answer = (await options.dispatcher.handleMessage(
      { jsonrpc: "2.0", id: 1, method: "task.status", params: root ? { root } : {} },
      caller(c.get("side")),
    )) as { result?: unknown; error?: { code: number; message: string; data?: Record<string, unknown> } };
    if (answer.error) {
      const kind = String(answer.error.data?.kind ?? "internal");
      return problem(c, httpStatusOf(kind), kind, kind.replace(/_/g, " "), answer.error.message, answer.error.data ?? {});
    }
    return c.json(answer.result as Record<string, unknown>);
  });

  app.all("/mcp", async (c) => {
    if (c.get("side") !== "agent") {
      return problem(c, 403, "unauthorized", "MCP is the agent side", "Use the agent token for /mcp; the host token is for /rpc");
    }
    const server = createMcpServer({ dispatcher: options.dispatcher, caller: caller("agent", "mcp-http") });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      void server.close();
    }
  });

  const problem500 = (e: unknown) =>
    new Response(JSON.stringify({ type: "https://longrun.dev/errors/internal", title: "Internal error", status: 500, detail: toErrorObject(e).message, kind: "internal" }), {
      status: 500,
      headers: { "content-type": "application/problem+json" },
    });
  app.onError((e) => problem500(e));

  // The one hot route without the middleware chain: a POST /rpc that passes every check above
  // (served Host, no foreign Origin, a declared length within the limit, a valid token) is answered
  // here; anything else goes through the app, which makes the refusal.
  const viaApp = app.fetch;
  app.fetch = (req, ...rest) => {
    if (req.method !== "POST") return viaApp(req, ...rest);
    const url = req.url;
    const pathAt = url.indexOf("/", url.indexOf("//") + 2);
    if (pathAt < 0 || url.length - pathAt !== 4 || !url.endsWith("/rpc")) return viaApp(req, ...rest);
    const h = req.headers;
    const origin = h.get("origin");
    const length = h.get("content-length");
    if (!hosts.has((h.get("host") ?? "").toLowerCase()) || (origin !== null && !origins.has(origin.toLowerCase()))) return viaApp(req, ...rest);
    if (length === null || h.has("transfer-encoding") || !/^\d{1,10}$/.test(length) || Number(length) > limit) return viaApp(req, ...rest);
    const side = sideOf(h.get("authorization") ?? undefined);
    if (!side) return viaApp(req, ...rest);
    return req.text().then((text) => rpc(text, side)).catch((e) => problem500(e));
  };

  app.notFound((c) => problem(c, 404, "not_found", "No such route", `${c.req.method} ${c.req.path} does not exist; routes: POST /rpc, GET /health, GET /v1/status, /mcp`));
  return app;
}
