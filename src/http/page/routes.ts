/**
 * The status page's routes on the HTTP app: `GET /` (the page), its script and style, login with
 * a one-time code, a snapshot (`/page/state`), live updates (`/page/events`, server-sent events),
 * memory search, and the host's actions (`POST /page/act`: grant, revoke, cancel a run, grant or
 * refuse a requested run).
 *
 * Who is asking: a bearer token (host or agent), or a page session (cookie and key, see
 * sessions.ts). Actions are the host's: an agent's are refused here and again by the dispatcher.
 * The app's Host and Origin rules run before these routes; on top of them a session is refused
 * on any request the browser marks as not same-origin (`Sec-Fetch-Site`), and a change needs a
 * JSON body (no form can send one across origins without CORS, which is not offered).
 */
import type { Context, Hono } from "hono";
import { getCookie, setCookie, deleteCookie } from "hono/cookie";
import * as v from "valibot";
import type { Dispatcher } from "../../rpc/dispatcher.ts";
import { readersFor } from "../../rpc/readers.ts";
import type { ErrorObject } from "../../rpc/errors.ts";
import type { Caller, Side } from "../../rpc/method.ts";
import { patternList, shortText } from "../../rpc/schemas.ts";
import { pageScript } from "./client.ts";
import { pageViews } from "./client_views.ts";
import { loginHtml, PAGE_CSS, pageHtml } from "./html.ts";
import { PAGE_LIMITS, PageSessions } from "./sessions.ts";
import { rootChoices, snapshot } from "./snapshot.ts";
import { EventStreams, snapshots } from "./stream.ts";

export interface StatusPageOptions {
  dispatcher: Dispatcher;
  /** The server's root (the page's default) and the directories other roots may be in. */
  defaultRoot: string;
  allowRoots?: string[];
  /** The session cookie's name; include the port: cookies are shared by every port of a host. */
  cookieName: string;
  sessions?: PageSessions;
  /** How often a live stream checks for a change, in milliseconds (default 250). */
  pollMs?: number;
}

/** What the app gives the page: the bearer-token check and how it makes a caller (with its trace, for logs and metrics). */
export interface PageDeps {
  sideOf: (authorization: string | undefined | null) => Side | null;
  caller: (side: Side, via: string, c: Context) => Caller;
  /** Tells the request's log line which side asked. */
  seen: (side: Side, c: Context) => void;
}

const SECURITY_HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

const KEY_HEADER = "x-longrun-key";

const Act = v.variant("action", [
  v.strictObject({ action: v.literal("grant"), root: v.optional(v.string()), reason: shortText(), scope: v.optional(patternList()) }),
  v.strictObject({ action: v.literal("revoke"), root: v.optional(v.string()), reason: v.optional(shortText()) }),
  v.strictObject({ action: v.literal("cancel_run"), root: v.optional(v.string()), run_id: v.pipe(v.string(), v.regex(/^R_\d{1,15}$/)), reason: v.optional(shortText()) }),
  // a requested run, granted as asked or refused (narrowing is run.grant's, over the protocol)
  v.strictObject({ action: v.literal("grant_run"), root: v.optional(v.string()), run_id: v.pipe(v.string(), v.regex(/^R_\d{1,15}$/)), reason: shortText() }),
  v.strictObject({ action: v.literal("refuse_run"), root: v.optional(v.string()), run_id: v.pipe(v.string(), v.regex(/^R_\d{1,15}$/)), reason: shortText() }),
  // the user's answer to a run parked for them
  v.strictObject({ action: v.literal("answer_run"), root: v.optional(v.string()), run_id: v.pipe(v.string(), v.regex(/^R_\d{1,15}$/)), text: shortText() }),
  // the host's answer to one approval request (edit is approval.answer's, over the protocol)
  v.strictObject({ action: v.literal("approve"), root: v.optional(v.string()), approval_id: v.pipe(v.string(), v.regex(/^A_\d{1,15}$/)), note: v.optional(shortText()) }),
  v.strictObject({ action: v.literal("reject"), root: v.optional(v.string()), approval_id: v.pipe(v.string(), v.regex(/^A_\d{1,15}$/)), note: shortText() }),
]);

const TASK_ID = /^T_[0-9A-Za-z_]{1,80}$/;

function problem(c: Context, status: number, kind: string, detail: string, extra: Record<string, unknown> = {}): Response {
  return c.body(JSON.stringify({ type: `https://longrun.dev/errors/${kind}`, title: kind.replace(/_/g, " "), status, detail, kind, ...extra }), status as 400, {
    "content-type": "application/problem+json",
    "cache-control": "no-store",
  });
}

export class StatusPage {
  readonly sessions: PageSessions;
  readonly #o: StatusPageOptions;
  readonly #streams: EventStreams;

  constructor(options: StatusPageOptions) {
    this.#o = options;
    this.sessions = options.sessions ?? new PageSessions();
    this.#streams = new EventStreams(options.pollMs ?? 250);
  }

  /** A login link for the host that works once and does not expire (the one printed at start). */
  startLink(baseUrl: string): string {
    return `${baseUrl}/?login=${this.sessions.mint("host", null)}`;
  }

  /** Ends every live stream (before the server stops: a stream never finishes by itself). */
  close(): void {
    this.#streams.closeAll();
  }

  #roots: { at: number; list: string[] } | null = null;

  /** The roots the page may show (existing ones only; see rootChoices), looked up at most every 2 s. */
  roots(): string[] {
    const now = Date.now();
    if (this.#roots === null || now - this.#roots.at >= 2000) this.#roots = { at: now, list: rootChoices(this.#o.defaultRoot, this.#o.allowRoots ?? []) };
    return this.#roots.list;
  }

  mount<E extends { Variables: { side: Side } }>(app: Hono<E>, deps: PageDeps): void {
    const o = this.#o;
    const sessions = this.sessions;
    const cookieOf = (c: Context) => getCookie(c, o.cookieName);

    /** The viewer's side: a bearer token, or a session from a same-origin request carrying its key. */
    const viewer = (c: Context): Side | null => {
      const auth = c.req.header("authorization");
      const site = c.req.header("sec-fetch-site");
      const side = auth !== undefined ? deps.sideOf(auth) : site !== undefined && site !== "same-origin" ? null : sessions.sideOf(cookieOf(c), c.req.header(KEY_HEADER));
      if (side) deps.seen(side, c);
      return side;
    };
    const refuse = (c: Context) =>
      problem(c, 401, "unauthorized", "Log in with a link from `longrun open` in the project (or mint one: POST /page/link with a bearer token), or send Authorization: Bearer <token>");
    /** The root a page request names: the default, or one of the roots the picker offers. */
    const rootOf = (c: Context): string | Response => {
      const named = c.req.query("root");
      if (named === undefined || named === "" || named === o.defaultRoot) return o.defaultRoot;
      if (this.roots().includes(named)) return named;
      return problem(c, 422, "invalid_params", `Root ${JSON.stringify(named)} is not one this page offers: the server's root, or an existing root in an allowed directory`, { field: "root" });
    };
    const taskOf = (c: Context): string | undefined | Response => {
      const t = c.req.query("task");
      if (t === undefined || t === "") return undefined;
      return TASK_ID.test(t) ? t : problem(c, 422, "invalid_params", "task is a task id such as T_20261130_120000_ab12", { field: "task" });
    };
    const html = (c: Context, body: string, status = 200) => c.body(body, status as 200, { "content-type": "text/html; charset=utf-8", ...SECURITY_HEADERS });

    app.get("/", (c) => {
      const login = c.req.query("login") !== undefined;
      const auth = c.req.header("authorization");
      const known = auth !== undefined ? deps.sideOf(auth) !== null : sessions.known(cookieOf(c));
      // its fixed words in the server's root's language (read per request: a changed setting applies at once)
      const lang = readersFor(o.dispatcher.roots, o.defaultRoot).lang;
      return login || known ? html(c, pageHtml(lang)) : html(c, loginHtml(lang), 401);
    });
    const script = `(${pageScript.toString()})((${pageViews.toString()})());\n`;
    app.get("/page/app.js", (c) => c.body(script, 200, { "content-type": "text/javascript; charset=utf-8", ...SECURITY_HEADERS }));
    app.get("/page/app.css", (c) => c.body(PAGE_CSS, 200, { "content-type": "text/css; charset=utf-8", ...SECURITY_HEADERS }));

    app.post("/page/login", async (c) => {
      const site = c.req.header("sec-fetch-site");
      if (site !== undefined && site !== "same-origin") return problem(c, 403, "unauthorized", "A login must come from this page itself");
      if (!/^application\/json\b/i.test(c.req.header("content-type") ?? "")) return problem(c, 415, "invalid_request", "Send the code as JSON: {\"code\": \"…\"}");
      const body = (await c.req.json().catch(() => null)) as { code?: unknown } | null;
      const session = typeof body?.code === "string" ? sessions.redeem(body.code) : null;
      if (!session) return problem(c, 401, "unauthorized", "This login link was already used, has expired or is wrong: each link works once.");
      setCookie(c, o.cookieName, session.id, { httpOnly: true, sameSite: "Strict", path: "/", maxAge: PAGE_LIMITS.session_idle_seconds });
      return c.json({ side: session.side, key: session.key }, 200, { "cache-control": "no-store" });
    });

    app.post("/page/logout", (c) => {
      // the cookie alone does not end a session: other ports of this host receive it, not the key
      const ended = sessions.end(cookieOf(c), c.req.header(KEY_HEADER));
      deleteCookie(c, o.cookieName, { path: "/" });
      return c.json({ ok: true, ended });
    });

    app.post("/page/link", (c) => {
      // minted with a token only: a page session never makes more of itself
      const side = deps.sideOf(c.req.header("authorization"));
      if (!side) return problem(c, 401, "unauthorized", "Mint a login link with Authorization: Bearer <host or agent token>; the link speaks for that token's side");
      const code = sessions.mint(side);
      const url = `http://${c.req.header("host")}/?login=${code}`;
      return c.json({ side, url, expires_in_seconds: PAGE_LIMITS.code_ttl_seconds }, 200, { "cache-control": "no-store" });
    });

    const readView = (c: Context) => {
      const side = viewer(c);
      if (!side) return refuse(c);
      const root = rootOf(c);
      if (root instanceof Response) return root;
      const task = taskOf(c);
      if (task instanceof Response) return task;
      // reads on the page are not the API's traffic: no trace (request counts and logs stay the callers')
      const caller: Caller = { side, via: "page" };
      return { side, root, task, caller };
    };

    app.get("/page/state", async (c) => {
      const r = readView(c);
      if (r instanceof Response) return r;
      const snap = await snapshot({ dispatcher: o.dispatcher, caller: r.caller, root: r.root, roots: this.roots(), taskId: r.task });
      return c.json(snap, 200, { "cache-control": "no-store" });
    });

    app.get("/page/events", (c) => {
      const r = readView(c);
      if (r instanceof Response) return r;
      const read = () => snapshot({ dispatcher: o.dispatcher, caller: r.caller, root: r.root, roots: this.roots(), taskId: r.task });
      return this.#streams.open(c.req.raw.signal, r.caller.side, snapshots(read)) ??
        problem(c, 503, "limit_exceeded", `Too many live pages of the ${r.caller.side} side are open on this server; close one and reload`, { field: "streams" });
    });

    app.get("/page/search", async (c) => {
      const r = readView(c);
      if (r instanceof Response) return r;
      const query = c.req.query("q") ?? "";
      const answer = (await o.dispatcher.handleMessage({ jsonrpc: "2.0", id: 1, method: "memory.search", params: { root: r.root, query, limit: 20 } }, r.caller)) as {
        result?: unknown;
        error?: ErrorObject;
      };
      if (answer.error) return problem(c, 422, String(answer.error.data?.kind ?? "internal"), answer.error.message);
      return c.json(answer.result as Record<string, unknown>, 200, { "cache-control": "no-store" });
    });

    app.post("/page/act", async (c) => {
      const side = viewer(c);
      if (!side) return refuse(c);
      if (side !== "host") return problem(c, 403, "unauthorized", "Granting, revoking and cancelling are the host's: this page was opened with the agent's side, which may only look");
      if (!/^application\/json\b/i.test(c.req.header("content-type") ?? "")) return problem(c, 415, "invalid_request", "Send the action as JSON");
      const parsed = v.safeParse(Act, await c.req.json().catch(() => null));
      if (!parsed.success) {
        return problem(c, 422, "invalid_params", "An action is {action: grant, reason, scope?} | {action: revoke} | {action: cancel_run, run_id} | {action: grant_run | refuse_run, run_id, reason} | {action: answer_run, run_id, text} | {action: approve, approval_id, note?} | {action: reject, approval_id, note}", { issues: v.flatten(parsed.issues) });
      }
      const a = parsed.output;
      const root = a.root === undefined || a.root === o.defaultRoot || this.roots().includes(a.root) ? (a.root ?? o.defaultRoot) : null;
      if (root === null) return problem(c, 422, "invalid_params", "That root is not one this page offers", { field: "root" });
      const [method, params] =
        a.action === "answer_run"
          ? ["run.wake", { run_id: a.run_id, reason: "the user answered on the status page", answer: { text: a.text } }]
          : a.action === "approve" || a.action === "reject"
            ? ["approval.answer", { approval_id: a.approval_id, decision: a.action, ...(a.note ? { note: a.note } : {}) }]
            : a.action === "grant"
          ? ["writes.enable", { reason: a.reason, ...(a.scope?.length ? { scope: a.scope } : {}) }]
          : a.action === "revoke"
            ? ["turn.end", { reason: a.reason ?? "revoked on the status page" }]
            : a.action === "grant_run"
              ? ["run.grant", { run_id: a.run_id, reason: a.reason }]
              : a.action === "refuse_run"
                ? ["run.refuse", { run_id: a.run_id, reason: a.reason }]
                : ["run.cancel", { run_id: a.run_id, reason: a.reason ?? "cancelled on the status page" }];
      const answer = (await o.dispatcher.handleMessage({ jsonrpc: "2.0", id: 1, method, params: { ...params, root } }, deps.caller(side, "page", c))) as {
        result?: unknown;
        error?: ErrorObject;
      };
      if (answer.error) {
        const kind = String(answer.error.data?.kind ?? "internal");
        return problem(c, kind === "unauthorized" ? 403 : 409, kind, answer.error.message, { data: answer.error.data ?? {} });
      }
      return c.json({ ok: true, method, result: answer.result }, 200, { "cache-control": "no-store" });
    });
  }
}
