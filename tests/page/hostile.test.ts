/**
 * The status page of a real `longrun http` (the compiled binary, a child process on 127.0.0.1),
 * attacked by an agent that holds only the agent token (or an agent page session), may steal the
 * host's page cookie (another port of the same host receives it), and can make directories in an
 * allowed directory. Raw HTTP where a client library would tidy the request (duplicated headers,
 * odd paths). Each attack asserts the refusal and that nothing changed: the task stays read-only
 * in its turn, no run is cancelled, no other root is read, no secret reaches a response or the log.
 *
 * tests/page/routes.test.ts has the basic refusals in-process (agent token, agent session, stolen
 * cookie without key, cross-site, login CSRF, a root not offered); these are the tricks around them.
 */
import assert from "node:assert/strict";
import { mkdirSync, renameSync, symlinkSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { removeDir, run, tempDir, until } from "../support/helpers.ts";
import { type HttpChild, startHttpChild } from "../http/start.ts";
import { BINARY, requireBinary } from "../support/server.ts";

const tokens = { host: "H".repeat(40), agent: "A".repeat(40) };

interface Session {
  cookie: string;
  key: string;
  side: string;
}

describe("the status page under attack (the binary over real HTTP)", () => {
  let dir = "";
  let root = "";
  /** An --allow-root directory, where the agent can make directories. */
  let allowed = "";
  /** A root outside every allowed directory: the agent must never see it. */
  let outside = "";
  let http: HttpChild;
  let url = "";
  let hostHeader = "";
  let cookieName = "";
  let runId = "";

  before(async () => {
    requireBinary();
    dir = tempDir();
    root = join(dir, "main");
    allowed = join(dir, "allowed");
    outside = join(dir, "outside");
    for (const d of [root, allowed, outside]) mkdirSync(d);
    // a task outside the allow-list, made by the host's own serve on that root
    const made = await run([BINARY, "serve", "--root", outside], {
      input: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.start", params: { description: "SECRET task outside the allow-list" } }) + "\n",
    });
    assert.match(made.stdout, /SECRET/);
    http = await startHttpChild([BINARY], ["--root", root, "--allow-root", allowed, "--port", "0"], { LONGRUN_HOST_TOKEN: tokens.host, LONGRUN_AGENT_TOKEN: tokens.agent });
    url = http.info.url;
    hostHeader = new URL(url).host;
    cookieName = `longrun_page_${http.port}`;
    await rpc("task.start", { description: "the page's task" });
    runId = (await rpc("run.start", { owner: "w" })).result.run.run_id;
  });
  after(async () => {
    try {
      if (http && http.child.exitCode === null) process.kill(http.child.pid!, "SIGTERM");
      if (http) assert.equal(await http.exited, 0);
      // nothing secret ever reached the log
      const log = http?.stderr() ?? "";
      for (const s of [tokens.host, tokens.agent, codeOf(http?.info.page ?? "http://x/?login=none"), ...secrets]) assert.ok(!log.includes(s), "a secret in the log");
    } finally {
      removeDir(dir);
    }
  });

  /** Session cookies, keys and codes seen during the run: none may reach the log. */
  const secrets: string[] = [];

  const rpc = async (method: string, params: Record<string, unknown> = {}, token = tokens.agent) => {
    const r = await fetch(`${url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
    return (await r.json()) as { result?: any; error?: any };
  };
  /** What must not change: the lease, the turn, the run. */
  const snapshot = async () => {
    const t = (await rpc("task.status")).result.task;
    const run = (await rpc("run.get", { run_id: runId })).result.run;
    return { mode: t.access_mode, lease: t.lease, turn: t.turn_index, run: run.status };
  };
  const codeOf = (link: string) => new URL(link).searchParams.get("login")!;
  const mint = async (token: string) => {
    const r = await fetch(`${url}/page/link`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 200);
    const code = codeOf(((await r.json()) as { url: string }).url);
    secrets.push(code);
    return code;
  };
  const login = async (code: string): Promise<Session | number> => {
    const r = await fetch(`${url}/page/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code }) });
    if (r.status !== 200) {
      await r.body?.cancel();
      return r.status;
    }
    const cookie = new RegExp(`${cookieName}=([^;]+)`).exec(r.headers.get("set-cookie") ?? "")?.[1];
    const body = (await r.json()) as { key: string; side: string };
    assert.ok(cookie);
    secrets.push(cookie, body.key);
    return { cookie, key: body.key, side: body.side };
  };
  const session = async (token: string) => (await login(await mint(token))) as Session;
  const stateAs = async (headers: Record<string, string>, query = "") => {
    const r = await fetch(`${url}/page/state${query}`, { headers });
    return { status: r.status, body: (await r.json()) as any };
  };

  /** One raw HTTP/1.1 request (duplicated headers, odd paths and methods as written); the status and the body. */
  const raw = (head: string, body = "", chunked = false): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const framing = chunked ? `Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n` : `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
      const s = connect(http.port, "127.0.0.1", () => s.write(`${head}\r\nHost: ${hostHeader}\r\n${framing}`));
      let got = "";
      s.setEncoding("utf8").on("data", (d: string) => (got += d));
      s.on("error", reject);
      s.on("end", () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0), body: got.split("\r\n\r\n").slice(1).join("\r\n\r\n") }));
    });
  const GRANT = JSON.stringify({ action: "grant", reason: "I approve myself" });

  test("Authorization tricks: both tokens in duplicated headers (either order), the host token after the agent's, another scheme: never the host", async () => {
    const before = await snapshot();
    const cases: [string, string[], number][] = [
      ["agent then host", [`Authorization: Bearer ${tokens.agent}`, `Authorization: Bearer ${tokens.host}`], 401],
      ["host then agent", [`Authorization: Bearer ${tokens.host}`, `Authorization: Bearer ${tokens.agent}`], 401],
      ["two tokens in one header", [`Authorization: Bearer ${tokens.agent} ${tokens.host}`], 401],
      ["comma-joined", [`Authorization: Bearer ${tokens.agent}, Bearer ${tokens.host}`], 401],
      ["Basic scheme", [`Authorization: Basic ${tokens.agent}`], 401],
      ["lowercase scheme and header: still the agent", [`authorization: bearer ${tokens.agent}`], 403],
      ["empty Authorization", [`Authorization: `], 401],
    ];
    for (const [what, headers, status] of cases) {
      const r = await raw(["POST /page/act HTTP/1.1", "Content-Type: application/json", ...headers].join("\r\n"), GRANT);
      assert.equal(r.status, status, `${what}: ${r.body}`);
      assert.doesNotMatch(r.body, /"ok":true/);
    }
    // the same tricks on /rpc: the host method stays the host's
    const enable = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "writes.enable", params: { reason: "me" } });
    for (const headers of [[`Authorization: Bearer ${tokens.agent}`, `Authorization: Bearer ${tokens.host}`], [`Authorization: Bearer ${tokens.host}`, `Authorization: Bearer ${tokens.agent}`]]) {
      const r = await raw(["POST /rpc HTTP/1.1", "Content-Type: application/json", ...headers].join("\r\n"), enable);
      assert.equal(r.status, 401, r.body);
    }
    assert.deepEqual(await snapshot(), before);
  });

  test("path and method tricks: other spellings of /page/act either are not routes or are the same route, refused for the agent", async () => {
    const before = await snapshot();
    const auth = `Authorization: Bearer ${tokens.agent}`;
    const cases: [string, number][] = [
      ["POST //page/act", 404],
      ["POST /page/act/", 404],
      ["POST /page/act/.", 404],
      ["POST /page%2fact", 404],
      ["POST /PAGE/ACT", 404],
      ["POST /page/act;jsessionid=x", 404],
      ["POST /page/%61ct", 403],
      ["POST /page/./act", 403],
      ["POST /x/../page/act", 403],
      [`POST http://${"HOST"}/page/act`, 403],
      ["POST /page/act?root=", 403],
      ["PUT /page/act", 404],
      ["HEAD /page/act", 404],
      ["GET /page/act?action=grant&reason=x", 404],
    ];
    for (const [line, status] of cases) {
      const r = await raw([`${line.replace("HOST", hostHeader)} HTTP/1.1`, "Content-Type: application/json", auth].join("\r\n"), line.startsWith("GET") || line.startsWith("HEAD") ? "" : GRANT);
      assert.equal(r.status, status, `${line}: ${r.body}`);
    }
    // a preflight from elsewhere gets no CORS
    const pre = await raw(["OPTIONS /page/act HTTP/1.1", "Origin: http://127.0.0.1:1", "Access-Control-Request-Method: POST", auth].join("\r\n"));
    assert.equal(pre.status, 403);
    assert.doesNotMatch(pre.body, /access-control-allow/i);
    assert.deepEqual(await snapshot(), before);
  });

  test("body tricks with the agent's token or session: prototype keys, an extra side field, chunked, text/plain, a form, a huge body", async () => {
    const before = await snapshot();
    const agent = await session(tokens.agent);
    const asAgent = { cookie: `${cookieName}=${agent.cookie}`, "x-longrun-key": agent.key };
    const bodies = [
      '{"action":"grant","reason":"x","__proto__":{"side":"host"}}',
      '{"action":"grant","reason":"x","constructor":{"prototype":{"side":"host"}}}',
      '{"action":"grant","reason":"x","side":"host"}',
      '{"action":"revoke","side":"host","caller":{"side":"host"}}',
      `{"action":"cancel_run","run_id":"${runId}"}`,
      '[{"action":"grant","reason":"x"}]',
    ];
    for (const headers of [{ authorization: `Bearer ${tokens.agent}` }, asAgent]) {
      for (const body of bodies) {
        const r = await fetch(`${url}/page/act`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
        assert.equal(r.status, 403, body);
        await r.body?.cancel();
      }
      for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
        const r = await fetch(`${url}/page/act`, { method: "POST", headers: { "content-type": type, ...headers }, body: "action=grant&reason=x" });
        assert.ok(r.status === 403 || r.status === 415, `${type}: ${r.status}`);
        await r.body?.cancel();
      }
    }
    const chunked = await raw(["POST /page/act HTTP/1.1", "Content-Type: application/json", `Authorization: Bearer ${tokens.agent}`].join("\r\n"), GRANT, true);
    assert.equal(chunked.status, 403, `chunked: ${chunked.body}`);
    const huge = await fetch(`${url}/page/act`, { method: "POST", headers: { "content-type": "application/json", ...asAgent }, body: JSON.stringify({ action: "grant", reason: "x".repeat(3 * 1024 * 1024) }) });
    assert.equal(huge.status, 413);
    await huge.body?.cancel();
    assert.deepEqual(await snapshot(), before);
  });

  test("cookie tossing: the host's stolen cookie beside the agent's own (either order), with the agent's key, or with an agent bearer token, never acts as the host", async () => {
    const host = await session(tokens.host);
    const agent = await session(tokens.agent);
    const before = await snapshot();
    const cases: [string, Record<string, string>][] = [
      ["host cookie + agent key", { cookie: `${cookieName}=${host.cookie}`, "x-longrun-key": agent.key }],
      ["host cookie + the cookie as key", { cookie: `${cookieName}=${host.cookie}`, "x-longrun-key": host.cookie }],
      ["agent cookie first, host cookie second + agent key", { cookie: `${cookieName}=${agent.cookie}; ${cookieName}=${host.cookie}`, "x-longrun-key": agent.key }],
      ["host cookie first, agent cookie second + agent key", { cookie: `${cookieName}=${host.cookie}; ${cookieName}=${agent.cookie}`, "x-longrun-key": agent.key }],
      ["host cookie + two keys", { cookie: `${cookieName}=${host.cookie}`, "x-longrun-key": `${agent.key}, ${agent.key}` }],
      ["host cookie under another port's name + agent key", { cookie: `longrun_page_1=${host.cookie}`, "x-longrun-key": agent.key }],
      ["agent bearer + host cookie", { authorization: `Bearer ${tokens.agent}`, cookie: `${cookieName}=${host.cookie}` }],
      ["empty bearer + host cookie", { authorization: "", cookie: `${cookieName}=${host.cookie}` }],
    ];
    for (const [what, headers] of cases) {
      for (const body of [{ action: "grant", reason: "tossed" }, { action: "revoke" }, { action: "cancel_run", run_id: runId }]) {
        const r = await fetch(`${url}/page/act`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
        assert.ok(r.status === 401 || r.status === 403, `${what} ${body.action}: ${r.status}`);
        await r.body?.cancel();
      }
    }
    assert.deepEqual(await snapshot(), before);
    // the host's real session still works (the attempts did not end it)
    assert.equal((await stateAs({ cookie: `${cookieName}=${host.cookie}`, "x-longrun-key": host.key })).body.side, "host");
  });

  test("login races: one code sent many times at once opens exactly one session, and an agent's code never opens a host one", async () => {
    const code = await mint(tokens.agent);
    const tries = await Promise.all(Array.from({ length: 8 }, () => login(code)));
    const opened = tries.filter((t) => typeof t !== "number") as Session[];
    assert.equal(opened.length, 1);
    assert.equal(opened[0]!.side, "agent");
    assert.deepEqual(tries.filter((t) => typeof t === "number"), Array(7).fill(401));
    // codes minted by the agent never push out the host's waiting codes (codes are bounded per side)
    const hostCode = await mint(tokens.host);
    for (let i = 0; i < 20; i++) await mint(tokens.agent);
    assert.equal(((await login(hostCode)) as Session).side, "host");
  });

  test("root parameter tricks: other spellings of an offered root, '..', a relative path, NUL, an outside root are refused", async () => {
    const agent = { authorization: `Bearer ${tokens.agent}` };
    const other = join(allowed, "other");
    mkdirSync(other);
    assert.ok((await rpc("task.start", { root: other, description: "other" })).result);
    // the picker's list is refreshed every 2 s (in the server, by the wall clock): poll until it offers the new root
    await until(async () => (await stateAs(agent, `?root=${encodeURIComponent(other)}`)).status === 200, "the picker to offer the new root");
    assert.equal((await stateAs(agent, `?root=${encodeURIComponent(other)}`)).status, 200);
    for (const spelling of [`${other}/`, `${allowed}/./other`, `${allowed}//other`, `${allowed}/other/../other`, `${allowed}/../outside`, outside, `${other}\0`, "other", "../outside", `${root}/`, "~"]) {
      const r = await stateAs(agent, `?root=${encodeURIComponent(spelling)}`);
      assert.equal(r.status, 422, JSON.stringify(spelling));
      assert.equal(r.body.field, "root");
    }
    for (const task of ["../x", "T_x/../y", "T_" + "a".repeat(200), "T_%00"]) {
      assert.equal((await stateAs(agent, `?task=${encodeURIComponent(task)}`)).status, 422, task);
    }
  });

  test("a symlink in an allowed directory to a root outside it is not offered, shows nothing of that root, and the host's action there is refused", async () => {
    symlinkSync(outside, join(allowed, "link"));
    // what is not offered cannot be polled for: wait out the picker's 2 s refresh (a timer in the server process)
    await new Promise((r) => setTimeout(r, 2100));
    const offered = await stateAs({ authorization: `Bearer ${tokens.agent}` });
    assert.ok(!offered.body.roots.includes(join(allowed, "link")), `the picker offers the link: ${offered.body.roots}`);
    const r = await stateAs({ authorization: `Bearer ${tokens.agent}` }, `?root=${encodeURIComponent(join(allowed, "link"))}`);
    assert.equal(r.status, 422);
    assert.doesNotMatch(JSON.stringify(r.body), /SECRET/);
    const act = await fetch(`${url}/page/act`, { method: "POST", headers: { authorization: `Bearer ${tokens.host}`, "content-type": "application/json" }, body: JSON.stringify({ action: "grant", reason: "x", root: join(allowed, "link") }) });
    assert.notEqual(act.status, 200);
    await act.body?.cancel();
  });

  // Found by this suite: the registry cached a name's real path, so a directory the server had seen
  // once, swapped for a symlink, was opened through the symlink, outside --allow-root.
  test("a root the server has seen, swapped for a symlink to a root outside the allowed directories, is not read (page or /rpc)", async () => {
    const swapped = join(allowed, "swapped");
    mkdirSync(swapped);
    assert.ok((await rpc("task.status", { root: swapped })).result, "seen once as a real directory");
    renameSync(swapped, `${swapped}-old`);
    symlinkSync(outside, swapped);
    const viaRpc = await rpc("task.status", { root: swapped });
    assert.doesNotMatch(JSON.stringify(viaRpc), /SECRET/, "/rpc read a root outside --allow-root");
    assert.equal(viaRpc.error?.data?.kind, "invalid_params", JSON.stringify(viaRpc));
    assert.match(viaRpc.error.message, /not inside the directories this server allows|now resolves to/, "refused for the root it names");
    const save = await rpc("memory.save", { root: swapped, type: "note", title: "planted", content: "planted by the agent" });
    assert.match(String(save.error?.message), /not inside the directories this server allows|now resolves to/, "a write through the swapped name is refused too");
    const outsideSearch = await run([BINARY, "serve", "--root", outside], {
      input: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "memory.search", params: { query: "planted" } }) + "\n",
    });
    assert.doesNotMatch(outsideSearch.stdout, /planted by the agent/, "nothing was written into the outside root");
    const page = await stateAs({ authorization: `Bearer ${tokens.agent}` }, `?root=${encodeURIComponent(swapped)}`);
    assert.doesNotMatch(JSON.stringify(page.body), /SECRET/, "the page read a root outside --allow-root");
  });

  // Found by this suite (denial of service): /page/logout needed only the cookie, which other ports of the host receive.
  test("a stolen cookie without its key cannot log the host out", async () => {
    const host = await session(tokens.host);
    const r = await fetch(`${url}/page/logout`, { method: "POST", headers: { cookie: `${cookieName}=${host.cookie}` } });
    await r.body?.cancel();
    assert.equal((await stateAs({ cookie: `${cookieName}=${host.cookie}`, "x-longrun-key": host.key })).status, 200, "the host's session was ended with the cookie alone");
  });

  // Found by this suite (denial of service): sessions were bounded in one pool, oldest out first, whatever the side.
  test("the agent opening many sessions of its own does not end the host's", async () => {
    const host = await session(tokens.host);
    for (let i = 0; i < 70; i++) await session(tokens.agent);
    assert.equal((await stateAs({ cookie: `${cookieName}=${host.cookie}`, "x-longrun-key": host.key })).status, 200, "the agent's logins pushed out the host's session");
  });

  // Found by this suite (denial of service): live streams were bounded in one pool for both sides.
  test("the agent holding every live stream does not keep the host's page from its own", async () => {
    const held: AbortController[] = [];
    try {
      for (let i = 0; i < 40; i++) {
        const c = new AbortController();
        held.push(c);
        const r = await fetch(`${url}/page/events`, { headers: { authorization: `Bearer ${tokens.agent}` }, signal: c.signal });
        if (r.status !== 200) await r.body?.cancel();
      }
      const c = new AbortController();
      held.push(c);
      const host = await fetch(`${url}/page/events`, { headers: { authorization: `Bearer ${tokens.host}` }, signal: c.signal });
      assert.equal(host.status, 200, "the host's live stream was refused");
    } finally {
      for (const c of held) c.abort();
    }
  });
});
