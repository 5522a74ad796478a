/**
 * Operating `longrun http` in a container, for real: configuration by environment, the probes
 * (/health, /ready), /metrics, request and error logs in both formats, one-line start-up errors,
 * and the token file kept (without the pid) on a clean exit. Child processes of the compiled binary (and of
 * `deno run` for the probes and the logs), spoken to over real sockets on 127.0.0.1.
 */
import assert from "node:assert/strict";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, test } from "node:test";
import { Logger, MAX_BACKLOG_BYTES } from "../../src/http/log.ts";
import { removeDir, run, tempDir, until } from "../support/helpers.ts";
import { BINARY, requireBinary, TARGETS } from "../support/server.ts";
import { raw } from "./raw.ts";
import { freePort, startHttpChild } from "./start.ts";

interface Running {
  child: ChildProcessWithoutNullStreams;
  url: string;
  port: number;
  tokenFile: string;
  tokensFrom: string;
  /** stderr so far (the logs). */
  err: () => string;
  exited: Promise<number | null>;
  /** SIGTERM, then the exit code and the whole of stderr. */
  stop: (signal?: NodeJS.Signals) => Promise<{ code: number | null; stderr: string }>;
}

/** Starts `longrun http` with `args` (no --root or --port added: the environment may give them), in an environment without this process's LONGRUN_ variables. */
async function start(argv: string[], args: string[], env: Record<string, string> = {}): Promise<Running> {
  const h = await startHttpChild(argv, args, env, { cleanEnv: true });
  return {
    child: h.child,
    url: h.info.url,
    port: h.port,
    tokenFile: h.info.token_file,
    tokensFrom: h.info.tokens,
    err: h.stderr,
    exited: h.exited,
    stop: async (signal = "SIGTERM") => ({ code: await h.stop(signal), stderr: h.stderr() }),
  };
}


const get = (port: number, path: string, host: string, headers = "") => raw(port, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${headers}Connection: close\r\n\r\n`);

async function rpc(url: string, token: string, method: string, params: Record<string, unknown> = {}) {
  const r = await fetch(`${url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  return (await r.json()) as { result?: any; error?: any };
}

async function metrics(url: string, token: string): Promise<string> {
  const r = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return r.text();
}

/** The value of one sample (0 when the series is absent). */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

const HOST_TOKEN = "host-token-for-ops-tests-0123456789";
/** The rule every token error states first. */
const TOKEN_RULE = "LONGRUN_HOST_TOKEN and LONGRUN_AGENT_TOKEN \\(each or its _FILE\\) must both be set, differ, and each be 16 to 1024 characters of A-Z a-z 0-9 - \\. _ ~ \\+ / \\(= only at the end\\)";
const AGENT_TOKEN = "agent-token-for-ops-tests-9876543210";
const ENV_TOKENS = { LONGRUN_HOST_TOKEN: HOST_TOKEN, LONGRUN_AGENT_TOKEN: AGENT_TOKEN };
/** Text a request body carries, which no log line may contain. */
const BODY_MARKER = "body-marker-that-must-not-be-logged";

for (const target of TARGETS) {
  describe(`longrun http operations: ${target.name}`, () => {
    test("probes: /health and /ready answer a foreign Host and no token with {ok} only; everything else stays refused", async () => {
      const root = tempDir();
      const srv = await start(target.argv, ["--root", root, "--port", "0"], ENV_TOKENS);
      try {
        for (const host of ["10.1.2.3:8080", "attacker.example", ""]) {
          const h = await get(srv.port, "/health", host);
          assert.equal(h.status, 200, `/health with Host ${JSON.stringify(host)}`);
          assert.deepEqual(JSON.parse(h.body), { ok: true });
          const r = await get(srv.port, "/ready", host, "Origin: http://evil.example\r\n");
          assert.equal(r.status, 200);
          assert.deepEqual(JSON.parse(r.body), { ok: true });
          for (const answer of [h, r]) {
            assert.doesNotMatch(answer.text, /longrun|version|\d+\.\d+\.\d+|\/tmp|root/i, "a probe reveals nothing");
          }
        }
        const refused = await get(srv.port, "/v1/status", "10.1.2.3:8080", `Authorization: Bearer ${AGENT_TOKEN}\r\n`);
        assert.equal(refused.status, 403, "the Host rule still guards the API");
        const ok = await get(srv.port, "/v1/status", `127.0.0.1:${srv.port}`, `Authorization: Bearer ${AGENT_TOKEN}\r\n`);
        assert.equal(ok.status, 200);
        const remapped = await get(srv.port, "/v1/status", "localhost:18080", `Authorization: Bearer ${AGENT_TOKEN}\r\n`);
        assert.equal(remapped.status, 403, "Host is compared whole: a remapped port is named with --allowed-host NAME:PORT");
      } finally {
        await srv.stop();
        removeDir(root);
      }
    });

    for (const format of ["text", "json"] as const) {
      test(`logs as ${format}: one line per request with method, path, rpc, outcome and time; no token, no body`, async () => {
        const root = tempDir();
        const args = ["--root", root, "--port", "0", ...(format === "json" ? ["--log-format", "json"] : [])];
        const srv = await start(target.argv, args, ENV_TOKENS);
        let stderr = "";
        try {
          await rpc(srv.url, AGENT_TOKEN, "task.start", { description: BODY_MARKER });
          await rpc(srv.url, AGENT_TOKEN, "writes.require", { action: BODY_MARKER });
          await rpc(srv.url, "wrong-token-wrong-token-wrong", "task.status");
          await get(srv.port, "/health", "10.0.0.1");
          await get(srv.port, `/nowhere?token=${BODY_MARKER}`, `127.0.0.1:${srv.port}`, `Authorization: Bearer ${HOST_TOKEN}\r\n`);
        } finally {
          const stopped = await srv.stop();
          stderr = stopped.stderr;
          assert.equal(stopped.code, 0);
          removeDir(root);
        }
        for (const secret of [HOST_TOKEN, AGENT_TOKEN, BODY_MARKER, "wrong-token"]) assert.ok(!stderr.includes(secret), `the log holds ${secret}`);
        const lines = stderr.split("\n").filter((l) => l !== "");
        type Line = Record<string, string | number | undefined>;
        let requests: Line[];
        if (format === "json") {
          const parsed = lines.map((l) => JSON.parse(l) as Line); // every line is JSON
          for (const p of parsed) assert.match(String(p.ts), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
          assert.equal(parsed[0]!.event, "start");
          assert.equal(parsed[0]!.tokens, "environment");
          assert.deepEqual(parsed.slice(-2).map((p) => p.event), ["stopping", "stopped"]);
          requests = parsed.filter((p) => p.event === "request");
        } else {
          for (const l of lines) assert.match(l, /^longrun: /);
          assert.match(lines[0]!, /tokens from LONGRUN_HOST_TOKEN and LONGRUN_AGENT_TOKEN \(not written to /);
          requests = lines
            .filter((l) => l.startsWith("longrun: request "))
            .map((l) => Object.fromEntries([...l.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|\S+)/g)].map((m) => [m[1]!, m[2]!.startsWith('"') ? JSON.parse(m[2]!) : ["status", "ms", "calls"].includes(m[1]!) ? Number(m[2]) : m[2]!])));
        }
        assert.equal(requests.length, 5, JSON.stringify(requests));
        const [begun, gate, unauthorized, health, notFound] = requests;
        assert.equal(begun!.method, "POST");
        assert.equal(begun!.path, "/rpc");
        assert.equal(begun!.rpc, "task.start");
        assert.equal(begun!.side, "agent");
        assert.equal(begun!.status, 200);
        assert.equal(begun!.outcome, "ok");
        assert.equal(typeof begun!.ms, "number");
        assert.match(String(begun!.root), /^[0-9a-f]{12}$/, "the root is hashed, not named");
        assert.equal(gate!.rpc, "writes.require");
        assert.equal(gate!.outcome, "write_gate_violation");
        assert.equal(unauthorized!.status, 401);
        assert.equal(unauthorized!.outcome, "unauthorized");
        assert.equal(unauthorized!.rpc, undefined);
        assert.equal(health!.path, "/health");
        assert.equal(notFound!.path, "/nowhere", "no query string");
        assert.equal(notFound!.status, 404);
        for (const l of lines.slice(1)) assert.ok(!l.includes(root), `only the start line names the root: ${l}`);
      });
    }
  });
}

describe("longrun http operations: the compiled binary", () => {
  test("/ready: not ready while memory.db is unreadable (and says nothing more), ready again once it is back", async () => {
    const root = tempDir();
    const srv = await start([BINARY], ["--root", root, "--port", "0"], ENV_TOKENS);
    try {
      await rpc(srv.url, AGENT_TOKEN, "task.start", { description: "ready or not" });
      assert.equal((await fetch(`${srv.url}/ready`)).status, 200);
      const db = join(root, "memory.db");
      renameSync(db, db + ".aside");
      writeFileSync(db, "this is not a database ".repeat(400));
      // answers are reused for a second
      const notReady = await until(async () => {
        const r = await fetch(`${srv.url}/ready`);
        return r.status === 503 ? r : null;
      }, "/ready to answer 503", 10_000);
      assert.deepEqual(await notReady.json(), { ok: false });
      assert.equal((await fetch(`${srv.url}/health`)).status, 200, "alive all the same");
      assert.match(srv.err(), /not_ready/);
      renameSync(db + ".aside", db);
      await until(async () => (await fetch(`${srv.url}/ready`)).status === 200, "/ready to answer 200 again", 10_000);
      assert.equal((await rpc(srv.url, AGENT_TOKEN, "task.status")).result.task.description, "ready or not");
      const m = await metrics(srv.url, HOST_TOKEN);
      assert.equal(sample(m, "longrun_ready"), 1);
    } finally {
      await srv.stop();
      removeDir(root);
    }
  });

  test("/metrics needs the host token, and its counters move with the calls", async () => {
    const root = tempDir();
    const srv = await start([BINARY], ["--root", root, "--port", "0"], ENV_TOKENS);
    try {
      assert.equal((await fetch(`${srv.url}/metrics`)).status, 401);
      assert.equal((await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${AGENT_TOKEN}` } })).status, 403);
      assert.equal((await get(srv.port, "/metrics", "evil.example", `Authorization: Bearer ${HOST_TOKEN}\r\n`)).status, 403, "the Host rule holds for /metrics");
      const before = await metrics(srv.url, HOST_TOKEN);
      await rpc(srv.url, AGENT_TOKEN, "task.start", { description: "counted" });
      await rpc(srv.url, AGENT_TOKEN, "writes.require", { action: "edit a" });
      await rpc(srv.url, HOST_TOKEN, "writes.enable", { reason: "ok" });
      await rpc(srv.url, AGENT_TOKEN, "writes.require", { action: "edit a" });
      await rpc(srv.url, AGENT_TOKEN, "task.checkpoint", { summary: "s", next_step: "n" });
      await rpc(srv.url, AGENT_TOKEN, "no.such.method");
      await rpc(srv.url, "wrong-token-wrong-token-wrong", "task.status");
      const after = await metrics(srv.url, HOST_TOKEN);
      const moved = (series: string) => sample(after, series) - sample(before, series);
      assert.equal(moved('longrun_rpc_requests_total{method="task.start",outcome="ok"}'), 1);
      assert.equal(moved('longrun_rpc_requests_total{method="writes.require",outcome="write_gate_violation"}'), 1);
      assert.equal(moved('longrun_rpc_requests_total{method="writes.require",outcome="ok"}'), 1);
      assert.equal(moved('longrun_rpc_requests_total{method="(unknown)",outcome="method_not_found"}'), 1, "an unknown name is not a label");
      assert.equal(moved('longrun_gate_decisions_total{gate="write",decision="refused",reason="read_only"}'), 1);
      assert.equal(moved('longrun_gate_decisions_total{gate="write",decision="allowed",reason="lease"}'), 1);
      assert.equal(moved('longrun_gate_decisions_total{gate="http",decision="refused",reason="unauthorized"}'), 1);
      assert.ok(moved('longrun_gate_decisions_total{gate="http",decision="allowed",reason="agent"}') >= 5);
      assert.equal(moved('longrun_checkpoints_total{method="task.checkpoint",outcome="ok"}'), 1);
      assert.equal(sample(after, "longrun_checkpoint_failures_total"), 0);
      assert.equal(moved('longrun_rpc_duration_seconds_count{method="task.start"}'), 1);
      assert.ok(sample(after, 'longrun_rpc_duration_seconds_bucket{method="writes.require",le="+Inf"}') >= 2);
      assert.ok(moved('longrun_http_requests_total{route="/rpc",status="200"}') >= 6);
      assert.equal(moved('longrun_http_requests_total{route="/rpc",status="401"}'), 1);
      assert.equal(sample(after, "longrun_open_roots"), 1);
      for (const l of after.split("\n").filter((l) => l && !l.startsWith("#"))) {
        assert.match(l, /^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [-+0-9.eInf]+$/, `a valid sample line: ${l}`);
      }
      for (const secret of [HOST_TOKEN, AGENT_TOKEN, root]) assert.ok(!after.includes(secret));
    } finally {
      await srv.stop();
      removeDir(root);
    }
  });

  test("configured by environment: root, host, port, exposure, allowed hosts, tokens and log format", async () => {
    const root = tempDir();
    const port = await freePort();
    const srv = await start([BINARY], [], {
      LONGRUN_ROOT: root,
      LONGRUN_HOST: "0.0.0.0",
      LONGRUN_PORT: String(port),
      LONGRUN_EXPOSE: "true",
      LONGRUN_ALLOWED_HOSTS: "longrun.svc, other.internal:9999,",
      LONGRUN_LOG_FORMAT: "json",
      ...ENV_TOKENS,
    });
    try {
      assert.equal(srv.port, port);
      assert.equal(srv.url, `http://0.0.0.0:${port}`);
      assert.equal(srv.tokenFile, join(root, ".longrun", "http.json"));
      assert.equal(srv.tokensFrom, "environment");
      const file = readFileSync(srv.tokenFile, "utf8");
      assert.ok(!file.includes(HOST_TOKEN) && !file.includes(AGENT_TOKEN), "tokens from the environment are not written");
      assert.equal(JSON.parse(file).tokens_from_env, true);
      const status = (host: string, token = AGENT_TOKEN) => get(port, "/v1/status", host, `Authorization: Bearer ${token}\r\n`).then((r) => r.status);
      assert.equal(await status(`longrun.svc:${port}`), 200);
      assert.equal(await status("longrun.svc"), 200);
      assert.equal(await status("other.internal:9999"), 200);
      assert.equal(await status(`127.0.0.1:${port}`), 200);
      assert.equal(await status(`attacker.example:${port}`), 403);
      assert.equal(await status(`longrun.svc:${port}`, "not-the-token-not-the-token"), 401);
      const first = await until(() => (srv.err().includes("\n") ? srv.err().split("\n")[0] : null), "the start line");
      assert.equal(JSON.parse(first).event, "start");
    } finally {
      await srv.stop();
      removeDir(root);
    }
  });

  test("a flag wins over its variable", async () => {
    const root = tempDir();
    const other = tempDir();
    const srv = await start([BINARY], ["--root", root, "--port", "0", "--log-format", "text"], { LONGRUN_ROOT: other, LONGRUN_PORT: "not-a-port", LONGRUN_LOG_FORMAT: "xml" });
    try {
      assert.equal(srv.tokenFile, join(root, ".longrun", "http.json"));
      assert.equal(srv.tokensFrom, "file");
      const line = await until(() => srv.err().split("\n").find((l) => l.includes("HTTP API on")), "the start line");
      assert.match(line, /^longrun: HTTP API on http:\/\/127\.0\.0\.1:\d+ .*; tokens in /);
    } finally {
      await srv.stop();
      removeDir(root);
      removeDir(other);
    }
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal}: exit 0, http.json kept with its tokens for the next start, without the pid`, async () => {
      const root = tempDir();
      const srv = await start([BINARY], ["--root", root, "--port", "0"]);
      try {
        const before = JSON.parse(readFileSync(srv.tokenFile, "utf8"));
        assert.equal(before.pid, srv.child.pid);
        const { code } = await srv.stop(signal);
        assert.equal(code, 0);
        const after = JSON.parse(readFileSync(srv.tokenFile, "utf8"));
        assert.equal(after.pid, undefined);
        assert.match(after.stopped_at, /^\d{4}-/);
        assert.deepEqual([after.host_token, after.agent_token, after.metrics_token], [before.host_token, before.agent_token, before.metrics_token]);
      } finally {
        removeDir(root);
      }
    });
  }

  test("every bad value: one line naming the variable and what it accepts, exit 2, no stack trace", async () => {
    requireBinary();
    const root = tempDir();
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", () => r()));
    const takenPort = (taken.address() as { port: number }).port;
    const cases: [Record<string, string>, string[], RegExp][] = [
      [{ LONGRUN_PORT: "http" }, [], /^longrun: LONGRUN_PORT must be a port number from 0 to 65535.*got "http"/],
      [{ LONGRUN_PORT: "65536" }, [], /^longrun: LONGRUN_PORT must be a port number/],
      [{}, ["--port=-1"], /^longrun: --port must be a port number/],
      [{}, ["--port", "-1"], /^longrun: Option '--port' argument is ambiguous\. .*use '--port=-XYZ'/],
      [{ LONGRUN_HOST: "not a host" }, [], /^longrun: LONGRUN_HOST must be an IP address or host name/],
      [{ LONGRUN_HOST: "0.0.0.0" }, [], /^longrun: refusing to listen on 0\.0\.0\.0.*LONGRUN_EXPOSE=1/],
      [{ LONGRUN_HOST: "0.0.0.0", LONGRUN_EXPOSE: "sure" }, [], /^longrun: LONGRUN_EXPOSE must be 1, true, yes or on/],
      [{ LONGRUN_HOST: "0.0.0.0", LONGRUN_EXPOSE: "1" }, [], /^longrun: listening on 0\.0\.0\.0 needs --allowed-host NAME \(or LONGRUN_ALLOWED_HOSTS/],
      [{ LONGRUN_ALLOWED_HOSTS: "ok.example,bad host" }, [], /^longrun: LONGRUN_ALLOWED_HOSTS must list host names.*"bad host"/],
      [{ LONGRUN_LOG_FORMAT: "yaml" }, [], /^longrun: LONGRUN_LOG_FORMAT must be text or json, got "yaml"/],
      [{ LONGRUN_ROOT: "relative/dir" }, ["--port", "0"], /^longrun: LONGRUN_ROOT: Invalid root "relative\/dir": it is not an absolute path/],
      [{ LONGRUN_ROOT: "/no/such/dir" }, [], /^longrun: LONGRUN_ROOT: Invalid root "\/no\/such\/dir": it does not exist/],
      [{ LONGRUN_ALLOW_ROOTS: `${root}:/no/such/dir` }, [], /^longrun: LONGRUN_ALLOW_ROOTS: Invalid root "\/no\/such\/dir"/],
      [{}, ["--allow-root", "/no/such/dir"], /^longrun: --allow-root: Invalid root/],
      [{ LONGRUN_MAX_ROOTS: "lots" }, [], /^longrun: --max-roots \(or LONGRUN_MAX_ROOTS\) must be a whole number from 1 to 100000, got "lots"/],
      [{ LONGRUN_HOST_TOKEN: "short", LONGRUN_AGENT_TOKEN: AGENT_TOKEN }, [], new RegExp(`^longrun: ${TOKEN_RULE}: LONGRUN_HOST_TOKEN is 5 characters long;`)],
      [{ LONGRUN_HOST_TOKEN: HOST_TOKEN }, [], new RegExp(`^longrun: ${TOKEN_RULE}: LONGRUN_HOST_TOKEN is set but the agent token is not \\(LONGRUN_AGENT_TOKEN or LONGRUN_AGENT_TOKEN_FILE;`)],
      [{ LONGRUN_AGENT_TOKEN: AGENT_TOKEN }, [], new RegExp(`^longrun: ${TOKEN_RULE}: LONGRUN_AGENT_TOKEN is set but the host token is not`)],
      [{ LONGRUN_HOST_TOKEN: HOST_TOKEN, LONGRUN_AGENT_TOKEN: HOST_TOKEN }, [], new RegExp(`^longrun: ${TOKEN_RULE}: they are the same`)],
      [{ LONGRUN_HOST_TOKEN: HOST_TOKEN, LONGRUN_AGENT_TOKEN: "agent token with spaces" }, [], new RegExp(`^longrun: ${TOKEN_RULE}: LONGRUN_AGENT_TOKEN has a character outside that set`)],
      [{ LONGRUN_PORT: String(takenPort) }, [], /^longrun: cannot listen on 127\.0\.0\.1:\d+: /],
      [{ LONGRUN_HOST: "10.255.255.1", LONGRUN_EXPOSE: "1" }, ["--port", "0"], /^longrun: cannot listen on 10\.255\.255\.1:0: /],
    ];
    try {
      for (const [env, args, expected] of cases) {
        const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LONGRUN_"))) as Record<string, string>;
        const r = await run([BINARY, "http", ...(env.LONGRUN_ROOT ? [] : ["--root", root]), ...args], { env: { ...clean, ...env }, timeoutMs: 20_000 });
        const what = `${JSON.stringify(env)} ${args.join(" ")}: ${r.stderr}`;
        assert.equal(r.code, 2, what);
        assert.equal(r.stdout, "", what);
        assert.equal(r.stderr.split("\n").filter((l) => l !== "").length, 1, `one line: ${what}`);
        assert.match(r.stderr, expected, what);
        assert.doesNotMatch(r.stderr, /\n\s+at |\$bunfs|Error: /, `no stack trace: ${what}`);
        for (const secret of [HOST_TOKEN, AGENT_TOKEN]) assert.ok(!r.stderr.includes(secret), `a token's value is never printed: ${what}`);
      }
    } finally {
      taken.close();
      removeDir(root);
    }
  });
});

describe("the request log never holds up the server", () => {
  test("past the backlog limit request lines are dropped and counted; events always go out", () => {
    const written: string[] = [];
    let backlog = 0;
    const log = new Logger("json", (t) => void written.push(t), () => backlog);
    const line = { method: "POST", path: "/rpc", rpc: "writes.require", side: "agent", status: 200, outcome: "ok", ms: 0.25 };
    log.request(line);
    log.flush();
    assert.equal(written.length, 1);
    backlog = MAX_BACKLOG_BYTES + 1; // nobody reads stderr
    for (let i = 0; i < 3; i++) log.request(line);
    log.flush();
    assert.equal(written.length, 1, "request lines dropped, nothing queued");
    const parse = (text: string) => text.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    log.event("error", "rpc_error", { kind: "storage_error" });
    assert.equal(written.length, 2, "an event is written all the same, with the count of lines dropped before it");
    assert.deepEqual(parse(written[1]!).map((l) => [l.event, l.lines]), [["log_dropped", 3], ["rpc_error", undefined]]);
    for (let i = 0; i < 2; i++) log.request(line);
    log.flush();
    backlog = 0; // read again
    log.request(line);
    log.flush();
    assert.deepEqual(parse(written.at(-1)!).map((l) => [l.event, l.lines]), [["log_dropped", 2], ["request", undefined]]);
  });
});
