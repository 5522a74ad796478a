/**
 * The HTTP API, a Hono app: `POST /rpc` (the same dispatcher and schemas as stdio), `GET /v1/status`,
 * MCP over Streamable HTTP at `/mcp`, `GET /metrics` (host or metrics token), `POST /v1/login-link`
 * (host token: a one-time login link for the status page), the status page at `GET /` and
 * `/page/…` (src/http/page/, when given), and the probes `GET /health` (liveness) and `GET /ready`
 * (the default root answers a read). Before any other routing it refuses a `Host` that is not the
 * served host and a foreign `Origin` (DNS rebinding); bodies over the limit get 413 before any
 * work; every route but the probes needs a bearer token, which decides the side (the page also
 * takes its own session). The probes answer `{"ok": …}` and nothing else, to anyone: a Kubernetes
 * probe sends the pod's IP as `Host` and no token.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { isGateReason } from "../core/errors.ts";
import { LIMITS } from "../core/limits.ts";
import { createMcpServer } from "../mcp/server.ts";
import { selectTools, ToolSetError } from "../mcp/tool_sets.ts";
import type { Dispatcher } from "../rpc/dispatcher.ts";
import { type ErrorObject, httpStatusOf, isServerFault, toErrorObject } from "../rpc/errors.ts";
import type { Caller, Side } from "../rpc/method.ts";
import { createGuard, type Env, problem, type Trace } from "./guard.ts";
import { type Logger, logPath, oneLine, rootHash } from "./log.ts";
import { Metrics } from "./metrics.ts";
import type { StatusPage } from "./page/routes.ts";
import { readiness } from "./ready.ts";
import { PAGE_LIMITS } from "./page/sessions.ts";
import { EventStreams } from "./page/stream.ts";
import type { LiveTokens, Tokens } from "./tokens.ts";

export interface HttpAppOptions {
  dispatcher: Dispatcher;
  /** Fixed, or swapped while serving (a rotation: src/cli/http.ts). */
  tokens: Tokens | LiveTokens;
  /** `Host` header values this server answers to, compared whole, e.g. `127.0.0.1:8080`, `localhost:8080`, `longrun`. */
  hosts: string[];
  /** Lease time to live applied to grants made over HTTP without one (hosts may not see turn boundaries). */
  defaultLeaseTtlSeconds?: number;
  bodyLimitBytes?: number;
  /** Request and error lines (none when absent). */
  log?: Logger;
  /** Counters and histograms for `/metrics` (a new set when absent). */
  metrics?: Metrics;
  /** Readiness for `/ready` (default: the dispatcher's default root opens and answers a trivial read). */
  ready?: () => Promise<boolean>;
  /** The status page at `GET /` (none when absent). */
  page?: StatusPage;
  /** The server answers for several roots (`--allow-root`): MCP tools at `/mcp` then take a `root` argument. */
  mcpSeveralRoots?: boolean;
  /** The live streams of `GET /v1/events` (the caller ends them before the server stops; a new set when absent). */
  eventStreams?: EventStreams;
}

/** Route names for metrics labels; any other path is `other`. */
const ROUTES = new Set(["/rpc", "/health", "/ready", "/metrics", "/v1/status", "/mcp", "/v1/login-link", "/v1/events"]);
const NO_STORE = { "cache-control": "no-store" };
const JSON_TYPE = { "content-type": "application/json" };

/** The path of a request URL, without the query (Bun gives a bare path when the Host header is empty). */
function pathOf(url: string): string {
  const at = url.startsWith("/") ? 0 : url.indexOf("/", url.indexOf("//") + 2);
  if (at < 0) return "/";
  const q = url.indexOf("?", at);
  return q < 0 ? url.slice(at) : url.slice(at, q);
}

export function createHttpApp(options: HttpAppOptions): Hono<Env> {
  const app = new Hono<Env>();
  const limit = options.bodyLimitBytes ?? LIMITS.body_bytes;
  const log = options.log;
  const metrics = options.metrics ?? new Metrics();
  const guard = createGuard({ hosts: options.hosts, limit, tokens: options.tokens, metrics });
  const roots = options.dispatcher.roots;
  const ready =
    options.ready ??
    readiness(roots, {
      onChange: (ok, why) => (ok ? log?.event("info", "ready", {}) : log?.event("error", "not_ready", { kind: why?.kind, message: why ? oneLine(why.message) : undefined })),
    });
  const known = new Set(["system.describe", ...options.dispatcher.methods().map((m) => m.name)]);

  /** The dispatcher tells each call's outcome: into the request's trace, the metrics, and (server faults) the error log. */
  const note = (trace: Trace, method: string | null, error: ErrorObject | null, ms: number, root: string | undefined) => {
    const name = method === null ? "(none)" : known.has(method) ? method : "(unknown)";
    const outcome = error === null ? "ok" : String(error.data?.kind ?? "internal");
    metrics.rpc(name, outcome, ms / 1000);
    if (name === "writes.require") {
      const reason = error === null ? "lease" : outcome === "write_gate_violation" && isGateReason(String(error.data?.reason)) ? String(error.data!.reason) : outcome;
      metrics.gate("write", error === null ? "allowed" : "refused", reason);
    }
    if (++trace.calls === 1) trace.rpc = name;
    if (error !== null) trace.outcome ??= outcome;
    if (root !== undefined) {
      const h = rootHash(root);
      trace.root = trace.root === undefined || trace.root === h ? h : null;
    }
    // the server's trouble, not the caller's (core/errors.ts ERRORS' serverFault): also an error line
    if (error !== null && isServerFault(outcome)) {
      log?.event("error", "rpc_error", { rpc: name, kind: outcome, root: root === undefined ? undefined : rootHash(root), message: oneLine(error.message) });
    }
  };
  const caller = (side: Side, via: string, trace: Trace | undefined): Caller => ({
    side,
    via,
    defaultLeaseTtlSeconds: side === "host" ? options.defaultLeaseTtlSeconds : undefined,
    observe: trace ? (method, error, ms, root) => note(trace, method, error, ms, root) : undefined,
  });

  /** The probes, answered before the Host rule and the tokens (see app.fetch below): ok or not, and nothing else. */
  const probe = (ok: boolean, head: boolean) =>
    new Response(head ? null : ok ? '{"ok":true}' : '{"ok":false}', { status: ok ? 200 : 503, headers: { "content-type": "application/json", ...NO_STORE } });

  // The guard's rules (src/http/guard.ts), in its order; the fast path below applies the same ones.
  // DNS-rebinding defence, before routing: Host, then Origin.
  app.use("*", async (c, next) => {
    const refused = guard.door(c.req.raw.headers);
    if (refused !== null) return guard.refuse(c, refused);
    await next();
  });

  // the body: by its declared length, or counted as it is read
  app.use("*", bodyLimit({ maxSize: limit, onError: (c) => guard.refuse(c, "body_too_large") }));

  // the status page checks its own viewers (a bearer token, or a page session: see src/http/page/)
  options.page?.mount(app, {
    sideOf: guard.sideOf,
    caller: (side, via, c) => caller(side, via, (c as Context<Env>).env?.trace),
    seen: (side, c) => {
      const trace = (c as Context<Env>).env?.trace;
      if (trace) trace.side = side;
    },
  });

  // the host token or the metrics token (which opens this route and no other)
  app.get("/metrics", (c) => {
    const credential = guard.credentialOf(c.req.header("authorization"));
    if (credential === null) return guard.refuse(c, "unauthorized");
    if (credential === "agent") {
      metrics.gate("http", "refused", "wrong_side");
      return problem(c, 403, "unauthorized", "Metrics are the host's", "Use the metrics token (LONGRUN_METRICS_TOKEN) or the host token for /metrics");
    }
    if (credential === "metrics") metrics.gate("http", "allowed", "metrics");
    else guard.admit(credential, c.env?.trace);
    return c.body(metrics.render({ openRoots: roots.openCount }), 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8", ...NO_STORE });
  });

  // the token, which decides the side
  app.use("*", async (c, next) => {
    const side = guard.sideOf(c.req.header("authorization"));
    if (!side) return guard.refuse(c, "unauthorized");
    guard.admit(side, c.env?.trace);
    c.set("side", side);
    await next();
  });

  const rpc = async (text: string, side: Side, trace: Trace | undefined): Promise<Response> => {
    const answer = await options.dispatcher.handleText(text, caller(side, "http", trace));
    if (answer === null) return new Response(null, { status: 204 });
    return new Response(answer, { status: 200, headers: JSON_TYPE });
  };
  app.post("/rpc", async (c) => rpc(await c.req.text(), c.get("side"), c.env?.trace));

  app.get("/v1/status", async (c) => {
    const root = c.req.query("root");
    const answer = (await options.dispatcher.handleMessage(
      { jsonrpc: "2.0", id: 1, method: "task.status", params: root ? { root } : {} },
      caller(c.get("side"), "http", c.env?.trace),
    )) as { result?: unknown; error?: { code: number; message: string; data?: Record<string, unknown> } };
    if (answer.error) {
      const kind = String(answer.error.data?.kind ?? "internal");
      return problem(c, httpStatusOf(kind), kind, kind.replace(/_/g, " "), answer.error.message, answer.error.data ?? {});
    }
    return c.json(answer.result as Record<string, unknown>);
  });

  // the root's event log as server-sent events: `id:` is the event's id, so a reconnect's
  // Last-Event-ID (or ?after=N) goes on after the last one seen; ?kinds=run.,lease.requested and
  // ?task_id, ?run_id filter as events.read does; either token
  const streams = options.eventStreams ?? new EventStreams(250);
  app.get("/v1/events", async (c) => {
    const q = c.req.query();
    const from = c.req.header("last-event-id") ?? q.after ?? "0";
    if (!/^\d{1,15}$/.test(from)) return problem(c, httpStatusOf("invalid_params"), "invalid_params", "Bad event id", `Last-Event-ID or ?after= must be an event id (a whole number), not ${JSON.stringify(from.slice(0, 40))}`);
    const params: Record<string, unknown> = { after: Number(from), limit: 500 };
    if (q.root) params.root = q.root;
    if (q.kinds) params.kinds = q.kinds.split(",").filter(Boolean);
    if (q.task_id) params.task_id = q.task_id;
    if (q.run_id) params.run_id = q.run_id;
    const who = caller(c.get("side"), "http", undefined);
    const read = async () =>
      (await options.dispatcher.handleMessage({ jsonrpc: "2.0", id: 1, method: "events.read", params }, who)) as {
        result?: { events: { id: number; kind: string }[] };
        error?: { code: number; message: string; data?: Record<string, unknown> };
      };
    // the first read answers bad params (or a root it cannot open) as an error, before the stream starts
    const first = await read();
    if (first.error) {
      const kind = String(first.error.data?.kind ?? "internal");
      return problem(c, httpStatusOf(kind), kind, kind.replace(/_/g, " "), first.error.message, first.error.data ?? {});
    }
    let pending: typeof first | null = first;
    const next = async () => {
      const a = pending ?? (await read());
      pending = null;
      if (a.error) return `event: problem\ndata: ${JSON.stringify({ message: a.error.message, kind: a.error.data?.kind ?? "internal" })}\n\n`;
      const events = a.result!.events;
      if (events.length) params.after = events[events.length - 1]!.id;
      return events.map((e) => `id: ${e.id}\nevent: ${e.kind}\ndata: ${JSON.stringify(e)}\n\n`).join("");
    };
    return streams.open(c.req.raw.signal, c.get("side"), next) ??
      problem(c, 503, "limit_exceeded", "Too many event streams", `Too many event streams of the ${c.get("side")} side are open on this server; close one and retry`, { field: "streams" });
  });

  // a one-time login link for the status page, for whoever holds the host token (`longrun open`)
  app.post("/v1/login-link", (c) => {
    if (!options.page) return problem(c, 404, "not_found", "No status page", "This server serves no status page");
    if (c.get("side") !== "host") {
      metrics.gate("http", "refused", "wrong_side");
      return problem(c, 403, "unauthorized", "Login links are the host's", "Use the host token for /v1/login-link");
    }
    const url = `http://${c.req.header("host")}/?login=${options.page.sessions.mint("host")}`;
    return c.json({ url, expires_in_seconds: PAGE_LIMITS.code_ttl_seconds }, 200, NO_STORE);
  });

  app.all("/mcp", async (c) => {
    if (c.get("side") !== "agent") {
      metrics.gate("http", "refused", "wrong_side");
      return problem(c, 403, "unauthorized", "MCP is the agent side", "Use the agent token for /mcp; the host token is for /rpc");
    }
    // `/mcp?tools=research` (or all, or a comma list of set and tool names): the tools offered, default the default set
    let tools;
    try {
      tools = selectTools(c.req.query("tools"));
    } catch (e) {
      if (!(e instanceof ToolSetError)) throw e;
      return problem(c, 400, "invalid_params", "Unknown MCP tool set", e.message.replace("in --tools", "in ?tools="));
    }
    const server = createMcpServer({ dispatcher: options.dispatcher, caller: caller("agent", "mcp-http", c.env?.trace), tools, severalRoots: options.mcpSeveralRoots });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      void server.close();
    }
  });

  const problem500 = (e: unknown, trace: Trace | undefined) => {
    const message = toErrorObject(e).message;
    log?.event("error", "http_error", { message: oneLine(message) });
    if (trace) trace.outcome ??= "internal";
    return new Response(JSON.stringify({ type: "https://longrun.dev/errors/internal", title: "Internal error", status: 500, detail: message, kind: "internal" }), {
      status: 500,
      headers: { "content-type": "application/problem+json" },
    });
  };
  app.onError((e, c) => problem500(e, c.env?.trace));

  app.notFound((c) =>
    problem(c, 404, "not_found", "No such route", `${c.req.method} ${c.req.path} does not exist; routes: POST /rpc, GET /v1/status, /mcp, GET /metrics, POST /v1/login-link, GET /health, GET /ready${options.page ? ", GET / (status page)" : ""}`),
  );

  /** Every request ends here: its metrics and its log line. */
  const finish = (res: Response, method: string, path: string, trace: Trace, t0: number): Response => {
    const at = performance.now();
    const ms = at - t0;
    const route = ROUTES.has(path) ? path : "other";
    metrics.http(route, res.status, ms / 1000);
    log?.request({
      method,
      path: route === "other" ? logPath(path) : path,
      rpc: trace.calls === 1 ? trace.rpc : trace.calls > 1 ? "batch" : undefined,
      calls: trace.calls > 1 ? trace.calls : undefined,
      side: trace.side,
      status: res.status,
      outcome: trace.outcome ?? (res.status < 400 ? "ok" : `http_${res.status}`),
      ms,
      at,
      root: trace.root ?? undefined,
    });
    return res;
  };

  /** The hot route's work in one async function (each extra promise in a chain costs on every call). */
  const fast = async (req: Request, side: Side, trace: Trace, t0: number): Promise<Response> => {
    let res: Response;
    try {
      const answer = await options.dispatcher.handleText(await req.text(), caller(side, "http", trace));
      res = answer === null ? new Response(null, { status: 204 }) : new Response(answer, { status: 200, headers: JSON_TYPE });
    } catch (e) {
      res = problem500(e, trace);
    }
    return finish(res, "POST", "/rpc", trace, t0);
  };

  // The one hot route without the middleware chain: a POST /rpc that passes every rule of the
  // guard (served Host, no foreign Origin, a declared length within the limit, a valid token) is
  // answered here; so are the probes (before the Host rule: a Kubernetes probe sends the pod's IP, or no
  // usable Host at all); anything else goes through the app, which makes the refusal.
  const viaApp = app.fetch;
  app.fetch = (req, _env, ctx) => {
    const t0 = performance.now();
    const trace: Trace = { calls: 0 };
    const url = req.url;
    if (req.method === "POST") {
      const pathAt = url.indexOf("/", url.indexOf("//") + 2);
      if (pathAt >= 0 && url.length - pathAt === 4 && url.endsWith("/rpc")) {
        const side = guard.pass(req.headers);
        if (side) {
          guard.admit(side, trace);
          return fast(req, side, trace, t0);
        }
      }
    }
    const path = pathOf(url);
    if ((path === "/health" || path === "/ready") && (req.method === "GET" || req.method === "HEAD")) {
      const head = req.method === "HEAD";
      if (path === "/health") return finish(probe(true, head), req.method, path, trace, t0);
      return ready().then((ok) => {
        metrics.ready(ok);
        if (!ok) trace.outcome = "not_ready";
        return finish(probe(ok, head), req.method, path, trace, t0);
      });
    }
    const res = viaApp(req, { trace }, ctx);
    return res instanceof Promise ? res.then((r) => finish(r, req.method, path, trace, t0)) : finish(res, req.method, path, trace, t0);
  };

  return app;
}
