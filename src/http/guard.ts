/**
 * The HTTP API's door, one guard for both ways in (the Hono middleware and the fast path for
 * `POST /rpc` in app.ts): the served `Host`, no foreign `Origin` (DNS rebinding), the body within
 * the limit, a valid bearer token (which decides the side), checked in that order; and the one
 * answer to each refusal, a problem+json (on `/rpc`, a missing token gets a JSON-RPC error), each
 * counted under its reason in the `http` gate's metrics. The tokens may change while serving
 * (LiveTokens): each request is checked against the set in force when it arrives.
 */
import type { Context } from "hono";
import { ERRORS } from "../core/errors.ts";
import { errorResponse } from "../rpc/dispatcher.ts";
import type { Side } from "../rpc/method.ts";
import type { Metrics } from "./metrics.ts";
import { type Credential, LiveTokens, type Tokens } from "./tokens.ts";

/** What one HTTP request did, for its log line and metrics. */
export interface Trace {
  side?: Side;
  /** The first JSON-RPC call's method (a name the server knows, or `(unknown)` / `(none)`). */
  rpc?: string;
  calls: number;
  /** The first error kind, or a refusal's kind. */
  outcome?: string;
  /** The hashed root the calls touched; null when they touched several. */
  root?: string | null;
}

export type Env = { Bindings: { trace?: Trace }; Variables: { side: Side } };

/** A problem+json answer (RFC 9457) of `kind`; the kind is also the request's outcome unless one was noted first. */
export function problem(c: Context<Env>, status: number, kind: string, title: string, detail: string, extra: Record<string, unknown> = {}) {
  const trace = c.env?.trace;
  if (trace) trace.outcome ??= kind;
  return c.body(JSON.stringify({ type: `https://longrun.dev/errors/${kind}`, title, status, detail, kind, ...extra }), status as 400, {
    "content-type": "application/problem+json",
  });
}

/** What the guard refuses, in the order it checks; each is also its reason in the `http` gate's metrics. */
export type Refusal = "forbidden_host" | "forbidden_origin" | "body_too_large" | "unauthorized";

export interface GuardOptions {
  /** `Host` header values served, compared whole and without case. */
  hosts: string[];
  /** The most bytes a body may have. */
  limit: number;
  /** The tokens, fixed, or a set that may be swapped while serving (a rotation). */
  tokens: Tokens | LiveTokens;
  metrics: Metrics;
}

export interface Guard {
  /** Host, then Origin: the first of the two rules the request breaks, or null. */
  door(h: Headers): "forbidden_host" | "forbidden_origin" | null;
  /**
   * Whether the declared length alone settles the body rule: a Content-Length of digits within
   * the limit and no Transfer-Encoding. Any other body is counted as it is read (the middleware's
   * `bodyLimit`), so a request for which this is false goes the middleware's way.
   */
  declaredWithin(h: Headers): boolean;
  /** The side the bearer token gives, or null (the token rule; the metrics token gives no side). */
  sideOf(authorization: string | null | undefined): Side | null;
  /** What the bearer token speaks for: a side, or reading the metrics; or null. */
  credentialOf(authorization: string | null | undefined): Credential | null;
  /** All four rules, in order, on a request whose body length is declared: its side, or null (the middleware then makes the refusal). */
  pass(h: Headers): Side | null;
  /** A request let through: counted under its side, and its side noted in the trace. */
  admit(side: Side, trace: Trace | undefined): void;
  /** The answer to a refusal, counted under its reason. */
  refuse(c: Context<Env>, refusal: Refusal): Response;
}

const UNAUTHORIZED_DETAIL = "A valid bearer token is required: Authorization: Bearer <host or agent token> (see .longrun/http.json)";

export function createGuard(options: GuardOptions): Guard {
  const hosts = new Set(options.hosts.map((h) => h.toLowerCase()));
  const origins = new Set(options.hosts.map((h) => `http://${h.toLowerCase()}`));
  const { limit, metrics } = options;
  const live = options.tokens instanceof LiveTokens ? options.tokens : new LiveTokens(options.tokens);
  const sideOf = (authorization: string | null | undefined) => live.sideOf(authorization);

  const door = (h: Headers): "forbidden_host" | "forbidden_origin" | null => {
    if (!hosts.has((h.get("host") ?? "").toLowerCase())) return "forbidden_host";
    const origin = h.get("origin");
    return origin !== null && !origins.has(origin.toLowerCase()) ? "forbidden_origin" : null;
  };
  const declaredWithin = (h: Headers): boolean => {
    const length = h.get("content-length");
    return length !== null && !h.has("transfer-encoding") && /^\d{1,10}$/.test(length) && Number(length) <= limit;
  };

  const refuse = (c: Context<Env>, refusal: Refusal): Response => {
    metrics.gate("http", "refused", refusal);
    switch (refusal) {
      case "forbidden_host": {
        const host = (c.req.header("host") ?? "").toLowerCase();
        return problem(c, 403, "forbidden_host", "Host not served", `This server answers to ${[...hosts].join(", ")}, not ${JSON.stringify(host)}`);
      }
      case "forbidden_origin":
        return problem(c, 403, "forbidden_origin", "Cross-origin request refused", `Origin ${JSON.stringify(c.req.header("origin"))} may not call this API; no CORS is offered`);
      case "body_too_large":
        return problem(c, ERRORS.limit_exceeded.http, "limit_exceeded", "Body too large", `The request body is over ${limit} bytes; send less or split it`, {
          field: "body",
          limit,
          unit: "bytes",
        });
      case "unauthorized": {
        if (c.req.path === "/rpc") {
          if (c.env?.trace) c.env.trace.outcome = "unauthorized";
          const body = errorResponse(null, { code: ERRORS.unauthorized.code, message: `Unauthorized: ${UNAUTHORIZED_DETAIL}`, data: { kind: "unauthorized" } });
          return c.json(body, ERRORS.unauthorized.http as 401, { "www-authenticate": "Bearer" });
        }
        c.header("www-authenticate", "Bearer");
        return problem(c, ERRORS.unauthorized.http, "unauthorized", "Unauthorized", UNAUTHORIZED_DETAIL);
      }
    }
  };

  return {
    door,
    declaredWithin,
    sideOf,
    credentialOf: (authorization) => live.credentialOf(authorization),
    pass: (h) => (door(h) === null && declaredWithin(h) ? sideOf(h.get("authorization")) : null),
    admit: (side, trace) => {
      metrics.gate("http", "allowed", side);
      if (trace) trace.side = side;
    },
    refuse,
  };
}
