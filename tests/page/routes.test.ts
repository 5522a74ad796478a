/**
 * The status page's routes in-process (Hono's app.request, the same middleware as a socket), played
 * by a hostile agent: it holds the agent token, may steal the page's cookie (cookies are shared by
 * every port of a host), forges Origin and Sec-Fetch-Site, replays login codes and names roots it
 * should not see. Each attack is a test; each asserts nothing changed.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { createHttpApp } from "../../src/http/app.ts";
import { Logger } from "../../src/http/log.ts";
import { StatusPage } from "../../src/http/page/routes.ts";
import { Dispatcher } from "../../src/rpc/dispatcher.ts";
import { allMethods } from "../../src/rpc/methods/index.ts";
import { RootRegistry } from "../../src/root/registry.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

const HOST = "127.0.0.1:9999";
const ORIGIN = `http://${HOST}`;
const COOKIE = "longrun_page_9999";
const tokens = { host: "h".repeat(32), agent: "a".repeat(32) };

interface Session {
  cookie: string;
  key: string;
  side: string;
}

describe("status page routes (in-process)", () => {
  let dir = "";
  let parent = "";
  let roots: RootRegistry;
  let page: StatusPage;
  let app: ReturnType<typeof createHttpApp>;
  let logged: string[];
  let log: Logger;

  beforeEach(() => {
    parent = tempDir();
    dir = join(parent, "main");
    mkdirSync(dir);
    roots = new RootRegistry({ defaultRoot: dir, allow: [dir, parent] });
    const dispatcher = new Dispatcher({ methods: allMethods(), roots });
    page = new StatusPage({ dispatcher, defaultRoot: dir, allowRoots: [parent], cookieName: COOKIE, pollMs: 20 });
    logged = [];
    log = new Logger("text", (t) => void logged.push(t), () => 0);
    app = createHttpApp({ dispatcher, tokens, hosts: [HOST], defaultLeaseTtlSeconds: 600, page, log });
  });
  afterEach(async () => {
    page.close();
    await roots.closeAll();
    removeDir(parent);
  });

  const rpc = async (method: string, params: Record<string, unknown> = {}, token = tokens.host) => {
    const r = await app.request("/rpc", {
      method: "POST",
      headers: { host: HOST, "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return (await r.json()) as { result?: any; error?: any };
  };
  const task = async () => (await rpc("task.status")).result.task;

  /** Logs in with a code the way the page's script does (same origin, JSON). */
  const login = async (code: string, headers: Record<string, string> = {}): Promise<Session | Response> => {
    const r = await app.request("/page/login", {
      method: "POST",
      headers: { host: HOST, origin: ORIGIN, "sec-fetch-site": "same-origin", "content-type": "application/json", ...headers },
      body: JSON.stringify({ code }),
    });
    if (r.status !== 200) return r;
    const cookie = /longrun_page_9999=([^;]+)/.exec(r.headers.get("set-cookie") ?? "")?.[1];
    const body = (await r.json()) as { key: string; side: string };
    assert.ok(cookie);
    return { cookie, key: body.key, side: body.side };
  };
  const codeOf = (link: string) => new URL(link).searchParams.get("login")!;
  const mint = async (token: string) => {
    const r = await app.request("/page/link", { method: "POST", headers: { host: HOST, authorization: `Bearer ${token}` } });
    assert.equal(r.status, 200);
    return codeOf(((await r.json()) as { url: string }).url);
  };
  const asSession = (s: Session, extra: Record<string, string> = {}) => ({ host: HOST, cookie: `${COOKIE}=${s.cookie}`, "x-longrun-key": s.key, "sec-fetch-site": "same-origin", ...extra });
  const act = (headers: Record<string, string>, body: Record<string, unknown>) =>
    app.request("/page/act", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

  test("the start link logs in once as the host; its cookie is HttpOnly, SameSite=Strict; a second use is refused", async () => {
    const code = codeOf(page.startLink(ORIGIN));
    const r = await app.request("/page/login", {
      method: "POST",
      headers: { host: HOST, origin: ORIGIN, "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
    assert.equal(r.status, 200);
    const cookie = r.headers.get("set-cookie") ?? "";
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Strict/i);
    assert.match(cookie, /Path=\//);
    assert.equal(((await r.json()) as { side: string }).side, "host");
    const again = await login(code);
    assert.ok(again instanceof Response);
    assert.equal(again.status, 401);
  });

  test("GET / without a token or session is 401 and says how to log in; the page itself holds no token and forbids framing", async () => {
    const r = await app.request("/", { headers: { host: HOST } });
    assert.equal(r.status, 401);
    assert.match(await r.text(), /login link/);
    const s = (await login(codeOf(page.startLink(ORIGIN)))) as Session;
    const ok = await app.request("/", { headers: { host: HOST, cookie: `${COOKIE}=${s.cookie}` } });
    assert.equal(ok.status, 200);
    const html = await ok.text();
    for (const secret of [tokens.host, tokens.agent, s.cookie, s.key]) assert.ok(!html.includes(secret));
    assert.match(ok.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
    assert.match(ok.headers.get("content-security-policy") ?? "", /script-src 'self'/);
    assert.equal(ok.headers.get("x-frame-options"), "DENY");
    assert.doesNotMatch(html, /<script>|<script [^>]*src="http/, "no inline script, no script from elsewhere");
  });

  test("the agent token cannot act: a grant with the agent's bearer token is refused and the task stays read-only", async () => {
    await rpc("task.start", { description: "page task" }, tokens.agent);
    const r = await act({ host: HOST, authorization: `Bearer ${tokens.agent}` }, { action: "grant", reason: "I approve myself" });
    assert.equal(r.status, 403);
    assert.equal(((await r.json()) as { kind: string }).kind, "unauthorized");
    assert.equal((await task()).access_mode, "read_only");
  });

  test("the lease panel gives the cause: no grant in this turn, or a task that is not in progress (its lease ended with it)", async () => {
    await rpc("task.start", { description: "page task" });
    const why = async () => {
      const r = await app.request("/page/state", { headers: { host: HOST, authorization: `Bearer ${tokens.host}` } });
      return ((await r.json()) as { lease: { writable: boolean; why: string | null } }).lease;
    };
    assert.deepEqual(await why(), { ...(await why()), writable: false, why: "read_only" });
    await rpc("writes.enable", { reason: "edit" });
    assert.equal((await why()).writable, true);
    await rpc("task.checkpoint", { summary: "pause here", next_step: "go on" });
    assert.equal((await task()).status, "paused");
    assert.deepEqual(await why(), { ...(await why()), writable: false, why: "not_in_progress" });
  });

  test("a page session opened with the agent's link sees the state but cannot grant, revoke or cancel", async () => {
    await rpc("task.start", { description: "page task" }, tokens.agent);
    const { result } = await rpc("run.start", { owner: "w" }, tokens.host);
    const agent = (await login(await mint(tokens.agent))) as Session;
    assert.equal(agent.side, "agent");
    const state = await app.request("/page/state", { headers: asSession(agent) });
    assert.equal(state.status, 200);
    const snapshot = (await state.json()) as { side: string; runs: { grant: { decided_by: string; decided_at: string } | null }[] };
    assert.equal(snapshot.side, "agent");
    assert.equal(snapshot.runs[0]!.grant?.decided_by, "host:http", "the snapshot shows who granted the run");
    for (const body of [{ action: "grant", reason: "me" }, { action: "revoke" }, { action: "cancel_run", run_id: result.run.run_id }]) {
      const r = await act(asSession(agent), body);
      assert.equal(r.status, 403, JSON.stringify(body));
    }
    assert.equal((await task()).access_mode, "read_only");
    assert.equal((await rpc("run.get", { run_id: result.run.run_id })).result.run.status, "running");
  });

  test("a host session grants for this turn with a reason (recorded as host:page, with the HTTP time to live), revokes, and cancels a run", async () => {
    await rpc("task.start", { description: "page task" }, tokens.agent);
    const { result } = await rpc("run.start", { owner: "w" }, tokens.host);
    const host = (await login(codeOf(page.startLink(ORIGIN)))) as Session;
    const g = await act(asSession(host), { action: "grant", reason: "edit the docs", scope: ["docs/**"] });
    assert.equal(g.status, 200);
    let t = await task();
    assert.equal(t.access_mode, "writable");
    assert.equal(t.lease.granted_by, "host:page");
    assert.equal(t.lease.reason, "edit the docs");
    assert.deepEqual(t.lease.scope, ["docs/**"]);
    assert.ok(t.lease.expires_at, "a grant over HTTP without ttl gets the default time to live");
    assert.equal((await act(asSession(host), { action: "revoke" })).status, 200);
    t = await task();
    assert.equal(t.access_mode, "read_only");
    assert.equal((await act(asSession(host), { action: "cancel_run", run_id: result.run.run_id })).status, 200);
    assert.equal((await rpc("run.get", { run_id: result.run.run_id })).result.run.status, "cancelled");
  });

  test("a host session grants or refuses a run the agent asked for (recorded as host:page); the agent's session may not", async () => {
    await rpc("task.start", { description: "page task" }, tokens.agent);
    const asked = (await rpc("run.start", { owner: "w", tools: ["fetch"] }, tokens.agent)).result.run;
    const agent = (await login(await mint(tokens.agent))) as Session;
    assert.equal((await act(asSession(agent), { action: "grant_run", run_id: asked.run_id, reason: "me" })).status, 403);
    const host = (await login(codeOf(page.startLink(ORIGIN)))) as Session;
    assert.equal((await act(asSession(host), { action: "grant_run", run_id: asked.run_id, reason: "the user said yes" })).status, 200);
    const granted = (await rpc("run.get", { run_id: asked.run_id })).result.run;
    assert.deepEqual([granted.status, granted.grant.decided_by, granted.grant.reason], ["running", "host:page", "the user said yes"]);
    await rpc("run.finish", { run_id: asked.run_id, epoch: 1, outcome: "done" }, tokens.agent);
    const again = (await rpc("run.continue", { parent_run_id: asked.run_id, owner: "w", budget: {} }, tokens.agent)).result.run;
    assert.equal((await act(asSession(host), { action: "refuse_run", run_id: again.run_id, reason: "enough" })).status, 200);
    assert.equal((await rpc("run.get", { run_id: again.run_id })).result.run.status, "refused");
    assert.equal((await act(asSession(host), { action: "refuse_run", run_id: again.run_id, reason: "twice" })).status, 409);
  });

  test("a stolen cookie without the page's key is refused (cookies are shared by every port of a host; the key is not)", async () => {
    await rpc("task.start", { description: "page task" }, tokens.agent);
    const host = (await login(codeOf(page.startLink(ORIGIN)))) as Session;
    const stolen = { host: HOST, cookie: `${COOKIE}=${host.cookie}` };
    assert.equal((await act(stolen, { action: "grant", reason: "stolen cookie" })).status, 401);
    assert.equal((await act({ ...stolen, "x-longrun-key": "k".repeat(43) }, { action: "grant", reason: "guessed key" })).status, 401);
    assert.equal((await app.request("/page/state", { headers: stolen })).status, 401);
    assert.equal((await task()).access_mode, "read_only");
  });

  test("cross-site requests are refused even with the cookie and the key: a foreign Origin, or Sec-Fetch-Site other than same-origin", async () => {
    await rpc("task.start", { description: "page task" }, tokens.agent);
    const host = (await login(codeOf(page.startLink(ORIGIN)))) as Session;
    const foreign = await act(asSession(host, { origin: "http://127.0.0.1:4444" }), { action: "grant", reason: "csrf from another port" });
    assert.equal(foreign.status, 403);
    for (const site of ["same-site", "cross-site", "none"]) {
      assert.equal((await act(asSession(host, { "sec-fetch-site": site }), { action: "grant", reason: `csrf ${site}` })).status, 401, site);
    }
    const form = await app.request("/page/act", {
      method: "POST",
      headers: { ...asSession(host), "content-type": "application/x-www-form-urlencoded" },
      body: "action=grant&reason=form",
    });
    assert.equal(form.status, 415, "a form post (which crosses origins without a preflight) is not an action");
    assert.equal((await task()).access_mode, "read_only");
  });

  test("login CSRF: a code posted from another origin or site is refused and not spent", async () => {
    const code = codeOf(page.startLink(ORIGIN));
    const foreign = await login(code, { origin: "http://evil.example" });
    assert.ok(foreign instanceof Response && foreign.status === 403);
    const site = await login(code, { "sec-fetch-site": "same-site" });
    assert.ok(site instanceof Response && site.status === 403);
    const form = await app.request("/page/login", { method: "POST", headers: { host: HOST, "content-type": "application/x-www-form-urlencoded" }, body: `code=${code}` });
    assert.equal(form.status, 415);
    assert.equal(((await login(code)) as Session).side, "host", "the code still works for its owner");
  });

  test("a page session cannot mint login links (only a bearer token can), and an agent-minted link never opens a host session", async () => {
    const agent = (await login(await mint(tokens.agent))) as Session;
    const r = await app.request("/page/link", { method: "POST", headers: asSession(agent) });
    assert.equal(r.status, 401);
    const again = (await login(await mint(tokens.agent))) as Session;
    assert.equal(again.side, "agent");
  });

  test("the page offers only existing roots of the allowed directories, and refuses any other (without laying it out)", async () => {
    const other = join(parent, "other");
    mkdirSync(join(other, ".longrun"), { recursive: true });
    mkdirSync(join(parent, "plain"));
    await rpc("task.start", { description: "main" }, tokens.agent);
    const s = await app.request("/page/state", { headers: { host: HOST, authorization: `Bearer ${tokens.agent}` } });
    const body = (await s.json()) as { roots: string[]; root: string };
    assert.equal(body.root, dir);
    assert.deepEqual(body.roots.sort(), [dir, other].sort());
    const outside = tempDir();
    try {
      for (const named of [outside, join(parent, "plain"), parent, "/"]) {
        const r = await app.request(`/page/state?root=${encodeURIComponent(named)}`, { headers: { host: HOST, authorization: `Bearer ${tokens.agent}` } });
        assert.equal(r.status, 422, named);
      }
      assert.equal(existsSync(join(parent, "plain", ".longrun")), false, "a refused root is not laid out");
      const ok = await app.request(`/page/state?root=${encodeURIComponent(other)}`, { headers: { host: HOST, authorization: `Bearer ${tokens.agent}` } });
      assert.equal(ok.status, 200);
      assert.equal(((await ok.json()) as { root: string; task: unknown }).task, null);
    } finally {
      removeDir(outside);
    }
  });

  test("an action naming a root the page does not offer is refused", async () => {
    const host = (await login(codeOf(page.startLink(ORIGIN)))) as Session;
    const outside = tempDir();
    try {
      const r = await act(asSession(host), { action: "grant", reason: "elsewhere", root: outside });
      assert.equal(r.status, 422);
    } finally {
      removeDir(outside);
    }
  });

  test("the log has every page request and never a token, a login code, a cookie or a key", async () => {
    await rpc("task.start", { description: "page task" }, tokens.agent);
    const code = codeOf(page.startLink(ORIGIN));
    await app.request(`/?login=${code}`, { headers: { host: HOST } });
    const host = (await login(code)) as Session;
    await act(asSession(host), { action: "grant", reason: "logged" });
    await app.request("/page/state", { headers: asSession(host) });
    const agentCode = await mint(tokens.agent);
    log.flush();
    const text = logged.join("");
    assert.match(text, /path=\/page\/act/);
    assert.match(text, /side=host/);
    for (const secret of [tokens.host, tokens.agent, code, agentCode, host.cookie, host.key]) assert.ok(!text.includes(secret), "a secret in the log");
  });

  test("live updates: the event stream sends the state, then a change made elsewhere, without being asked", async () => {
    await rpc("task.start", { description: "streamed" }, tokens.agent);
    const ac = new AbortController();
    const r = await app.request("/page/events", { headers: { host: HOST, authorization: `Bearer ${tokens.host}` }, signal: ac.signal });
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /text\/event-stream/);
    const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const next = async (pred: (s: string) => boolean) => {
      const end = Date.now() + 10_000;
      while (!pred(text)) {
        if (Date.now() > end) throw new Error(`no such event in: ${text.slice(-500)}`);
        const { value, done } = await reader.read();
        if (done) throw new Error("the stream ended");
        text += value;
      }
    };
    await next((s) => s.includes('"access_mode":"read_only"'));
    // an unchanged state is not sent again (the stream polls every 20 ms here)
    const quiet = reader.read();
    const early = await Promise.race([quiet.then(() => "a frame"), new Promise((r) => setTimeout(() => r("nothing"), 300))]);
    assert.equal(early, "nothing", "a second frame for an unchanged state");
    await rpc("writes.enable", { reason: "from elsewhere" });
    const { value } = await quiet;
    text += value;
    await next((s) => s.includes('"reason":"from elsewhere"'));
    page.close();
    await next(() => false).catch((e: Error) => assert.match(e.message, /ended/));
  });

  test("memory search on the page goes through memory.search with the viewer's side", async () => {
    await rpc("task.start", { description: "searching" }, tokens.agent);
    await rpc("memory.save", { type: "note", title: "qdrant is fast", content: "inserts 10k per second" }, tokens.agent);
    const r = await app.request(`/page/search?q=qdrant`, { headers: { host: HOST, authorization: `Bearer ${tokens.agent}` } });
    assert.equal(r.status, 200);
    const hits = ((await r.json()) as { hits: { title: string }[] }).hits;
    assert.ok(hits.some((h) => h.title === "qdrant is fast"));
    assert.equal((await app.request(`/page/search?q=qdrant`, { headers: { host: HOST } })).status, 401);
  });

  test("a task that is not current still shows its own artifacts and adjustments (artifact.list and adjust.list by task_id)", async () => {
    const first = (await rpc("task.start", { description: "first" }, tokens.agent)).result.task.task_id;
    await rpc("artifact.put", { name: "first.md", kind: "full", content: "one" }, tokens.agent);
    await rpc("adjust.receive", { text: "about the first" });
    await rpc("task.start", { description: "second" }, tokens.agent);
    assert.deepEqual((await rpc("artifact.list", {}, tokens.agent)).result.artifacts, []);
    assert.equal((await rpc("artifact.list", { task_id: first }, tokens.agent)).result.artifacts[0].name, "first.md");
    const r = await app.request(`/page/state?task=${first}`, { headers: { host: HOST, authorization: `Bearer ${tokens.agent}` } });
    const snap = (await r.json()) as { task: { task_id: string }; current: boolean; artifacts: { name: string }[]; adjustments: { text: string }[]; tasks: unknown[] };
    assert.equal(snap.task.task_id, first);
    assert.equal(snap.current, false);
    assert.deepEqual(snap.artifacts.map((a) => a.name), ["first.md"]);
    assert.deepEqual(snap.adjustments.map((a) => a.text), ["about the first"]);
    assert.equal(snap.tasks.length, 2);
  });

  test("the script and the style come from the server itself, and the script compiles on its own", async () => {
    const js = await app.request("/page/app.js", { headers: { host: HOST } });
    assert.equal(js.status, 200);
    assert.match(js.headers.get("content-type") ?? "", /javascript/);
    const text = await js.text();
    assert.doesNotThrow(() => new Function(text), "the served script parses alone");
    assert.doesNotMatch(text, /https?:\/\//, "no address elsewhere");
    const css = await app.request("/page/app.css", { headers: { host: HOST } });
    assert.equal(css.status, 200);
    assert.doesNotMatch(await css.text(), /@import|url\(\s*['"]?http/);
  });
});
