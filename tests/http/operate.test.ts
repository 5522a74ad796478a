/**
 * Operating `longrun http` across restarts and rotations, for real (child processes of the
 * compiled binary on 127.0.0.1): tokens from files as secrets are mounted, the tokens http.json
 * keeps for the next start (and `--rotate-tokens`), token files read again on SIGHUP and when
 * they change (old tokens refused at once, and the page sessions they opened; a bad new file
 * keeping the old ones), the read-only
 * metrics token, the status page's login link only on request or from POST /v1/login-link, and
 * `longrun health`.
 */
import assert from "node:assert/strict";
import { chmodSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { removeDir, run, tempDir, until } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";
import { type HttpChild, startHttpChild } from "./start.ts";

const T = { host: "host-token-from-a-secret-file-01", agent: "agent-token-from-a-secret-file-2", metrics: "metrics-token-from-a-secret-f-3" };

/** `longrun http --root root --port 0` in an environment without this process's LONGRUN_ variables, once its start line is logged. */
async function start(root: string, env: Record<string, string> = {}, extra: string[] = [], loginLink = false): Promise<HttpChild> {
  const srv = await startHttpChild([BINARY], ["--root", root, "--port", "0", ...extra], env, { cleanEnv: true, loginLink });
  await until(() => /HTTP API on/.test(srv.stderr()), "the start line on stderr");
  return srv;
}

/** The HTTP status of `method path` with `token` (none: no Authorization header). */
async function status(url: string, path: string, token: string | null, method = "GET", body?: string): Promise<number> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const r = await fetch(url + path, { method, headers, body });
  await r.body?.cancel();
  return r.status;
}

const rpcBody = (method: string) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: {} });
const rpcStatus = (url: string, token: string) => status(url, "/rpc", token, "POST", rpcBody("task.status"));

/** Writes a token file atomically (a rename, as Kubernetes and editors do) with a trailing newline. */
function secret(dir: string, name: string, value: string): string {
  const path = join(dir, name);
  writeFileSync(path + ".new", value + "\n", { mode: 0o600 });
  renameSync(path + ".new", path);
  return path;
}

describe("operating longrun http: tokens across restarts and rotations (the compiled binary)", () => {
  test("tokens from files (LONGRUN_*_TOKEN_FILE): served as given, never written to http.json, the same after a restart", async () => {
    requireBinary();
    const root = tempDir();
    const secrets = tempDir();
    const env = {
      LONGRUN_HOST_TOKEN_FILE: secret(secrets, "host", T.host),
      LONGRUN_AGENT_TOKEN_FILE: secret(secrets, "agent", T.agent),
      LONGRUN_METRICS_TOKEN_FILE: secret(secrets, "metrics", T.metrics),
    };
    try {
      for (let i = 0; i < 2; i++) {
        const srv = await start(root, env);
        try {
          assert.equal(srv.info.tokens, "environment");
          assert.equal(await rpcStatus(srv.info.url, T.agent), 200);
          assert.equal(await rpcStatus(srv.info.url, T.host), 200);
          const file = readFileSync(srv.info.token_file, "utf8");
          for (const t of Object.values(T)) assert.ok(!file.includes(t), "given tokens are not written");
          assert.equal(JSON.parse(file).host_token_file, env.LONGRUN_HOST_TOKEN_FILE);
          assert.match(srv.stderr(), /tokens from LONGRUN_HOST_TOKEN_FILE and LONGRUN_AGENT_TOKEN_FILE .*; metrics token from LONGRUN_METRICS_TOKEN_FILE/);
        } finally {
          assert.equal(await srv.stop(), 0);
        }
        for (const t of Object.values(T)) assert.ok(!srv.stderr().includes(t), "no token in the log");
      }
    } finally {
      removeDir(root);
      removeDir(secrets);
    }
  });

  test("a bad token file stops the start with one line naming the variable, never the value, exit 2", async () => {
    requireBinary();
    const root = tempDir();
    const secrets = tempDir();
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LONGRUN_"))) as Record<string, string>;
    const agent = secret(secrets, "agent", T.agent);
    const cases: [Record<string, string>, RegExp][] = [
      [{ LONGRUN_HOST_TOKEN_FILE: join(secrets, "missing"), LONGRUN_AGENT_TOKEN_FILE: agent }, /^longrun: LONGRUN_HOST_TOKEN_FILE: cannot read the token file .*: ENOENT; see longrun --help\n$/],
      [{ LONGRUN_HOST_TOKEN_FILE: secret(secrets, "short", "short-one"), LONGRUN_AGENT_TOKEN_FILE: agent }, /: the content of LONGRUN_HOST_TOKEN_FILE's file is 9 characters long;/],
      [{ LONGRUN_HOST_TOKEN_FILE: agent, LONGRUN_AGENT_TOKEN_FILE: agent }, /: they are the same/],
      [{ LONGRUN_AGENT_TOKEN_FILE: agent }, /LONGRUN_AGENT_TOKEN_FILE is set but the host token is not/],
      [{ LONGRUN_METRICS_TOKEN_FILE: secret(secrets, "spaced", "metrics token with spaces") }, /^longrun: LONGRUN_METRICS_TOKEN_FILE must be 16 to 1024 characters.*has a character outside that set/],
      [{ LONGRUN_HOST_TOKEN: T.host, LONGRUN_AGENT_TOKEN: T.agent }, /^longrun: --rotate-tokens mints new tokens .* these come from LONGRUN_HOST_TOKEN and LONGRUN_AGENT_TOKEN/],
    ];
    try {
      for (const [env, expected] of cases) {
        const rotate = env.LONGRUN_HOST_TOKEN ? ["--rotate-tokens"] : [];
        const r = await run([BINARY, "http", "--root", root, "--port", "0", ...rotate], { env: { ...clean, ...env }, timeoutMs: 20_000 });
        const what = `${JSON.stringify(env)}: ${r.stderr}`;
        assert.equal(r.code, 2, what);
        assert.equal(r.stdout, "", what);
        assert.equal(r.stderr.trim().split("\n").length, 1, what);
        assert.match(r.stderr, expected, what);
        for (const t of [...Object.values(T), "short-one", "metrics token with spaces"]) assert.ok(!r.stderr.includes(t), `no value: ${what}`);
      }
    } finally {
      removeDir(root);
      removeDir(secrets);
    }
  });

  test("without given tokens a restart keeps those in http.json (a runner that read them once keeps working); --rotate-tokens or a file not ours mints new ones", async () => {
    requireBinary();
    const root = tempDir();
    try {
      const first = await start(root);
      const kept = JSON.parse(readFileSync(first.info.token_file, "utf8"));
      assert.equal(await rpcStatus(first.info.url, kept.agent_token), 200);
      assert.equal(await first.stop(), 0);

      const second = await start(root);
      try {
        assert.equal(await rpcStatus(second.info.url, kept.agent_token), 200, "the agent token read before the restart");
        assert.equal(await rpcStatus(second.info.url, kept.host_token), 200);
        assert.equal(await status(second.info.url, "/metrics", kept.metrics_token), 200);
        assert.match(second.stderr(), /tokens in .*http\.json \(kept from the last start\)/);
      } finally {
        assert.equal(await second.stop(), 0);
      }

      const rotated = await start(root, {}, ["--rotate-tokens"]);
      try {
        assert.match(rotated.stderr(), /\(new: --rotate-tokens\)/);
        for (const old of [kept.host_token, kept.agent_token]) assert.equal(await rpcStatus(rotated.info.url, old), 401);
        assert.equal(await status(rotated.info.url, "/metrics", kept.metrics_token), 401);
        const now = JSON.parse(readFileSync(rotated.info.token_file, "utf8"));
        assert.notEqual(now.host_token, kept.host_token);
        assert.equal(await rpcStatus(rotated.info.url, now.agent_token), 200);
      } finally {
        assert.equal(await rotated.stop(), 0);
      }

      chmodSync(join(root, ".longrun", "http.json"), 0o644);
      const loose = await start(root);
      try {
        assert.match(loose.stderr(), /\(new: .*http\.json has mode 644 \(0600 needed\)\)/);
      } finally {
        assert.equal(await loose.stop(), 0);
      }
    } finally {
      removeDir(root);
    }
  });

  test("a changed token file, or SIGHUP, puts the new tokens in force at once; a bad new file keeps the old ones and says so once", async () => {
    requireBinary();
    const root = tempDir();
    const secrets = tempDir();
    const env = { LONGRUN_HOST_TOKEN_FILE: secret(secrets, "host", T.host), LONGRUN_AGENT_TOKEN_FILE: secret(secrets, "agent", T.agent), LONGRUN_METRICS_TOKEN_FILE: secret(secrets, "metrics", T.metrics) };
    const srv = await start(root, env, ["--log-format", "json"]);
    const events = (name: string) => srv.stderr().split("\n").filter((l) => l.includes(`"event":"${name}"`));
    try {
      const url = srv.info.url;
      // the file changes (a rename over it, as a mounted secret changes): the poll sees it
      secret(secrets, "agent", "agent-token-rotated-by-a-file-04");
      await until(async () => (await rpcStatus(url, T.agent)) === 401, "the old agent token to be refused").catch((e) => {
        throw new Error(`${e.message} (log: ${srv.stderr()})`);
      });
      assert.equal(await rpcStatus(url, "agent-token-rotated-by-a-file-04"), 200);
      assert.equal(await rpcStatus(url, T.host), 200, "the host token did not change");

      // a bad new file: the tokens in force stay, one error line
      secret(secrets, "host", "too-short");
      await until(() => events("tokens_not_reloaded").length > 0, "an error line about the bad file");
      assert.equal(await rpcStatus(url, T.host), 200, "the old host token still works");
      assert.equal(events("tokens_not_reloaded").length, 1, "said once, not once a second");
      assert.match(events("tokens_not_reloaded")[0]!, /LONGRUN_HOST_TOKEN_FILE/);
      assert.ok(!srv.stderr().includes("too-short"), "the bad value is not logged");

      // a page session opened with the host token before it is rotated
      const minted = (await (await fetch(`${url}/v1/login-link`, { method: "POST", headers: { authorization: `Bearer ${T.host}` } })).json()) as { url: string };
      const loggedIn = await fetch(`${url}/page/login`, {
        method: "POST",
        headers: { "content-type": "application/json", "sec-fetch-site": "same-origin" },
        body: JSON.stringify({ code: new URL(minted.url).searchParams.get("login") }),
      });
      const page = { cookie: (loggedIn.headers.get("set-cookie") ?? "").split(";")[0]!, "x-longrun-key": ((await loggedIn.json()) as { key: string }).key, "sec-fetch-site": "same-origin" };
      const pageState = async () => {
        const r = await fetch(`${url}/page/state`, { headers: page });
        await r.body?.cancel();
        return r.status;
      };
      assert.equal(await pageState(), 200);

      // SIGHUP reads the files again (here after the file was fixed)
      secret(secrets, "host", "host-token-rotated-by-sighup-05");
      process.kill(srv.child.pid!, "SIGHUP");
      await until(async () => (await rpcStatus(url, T.host)) === 401, "the old host token to be refused");
      assert.equal(await rpcStatus(url, "host-token-rotated-by-sighup-05"), 200);
      assert.equal(await pageState(), 401, "the page session the old host token opened ended with it");
      secret(secrets, "metrics", "metrics-token-rotated-06-xxxxx");
      process.kill(srv.child.pid!, "SIGHUP");
      await until(async () => (await status(url, "/metrics", T.metrics)) === 401, "the old metrics token to be refused");
      assert.equal(await status(url, "/metrics", "metrics-token-rotated-06-xxxxx"), 200);
      assert.ok(events("tokens_reloaded").length >= 3);
      assert.equal(srv.child.exitCode, null, "SIGHUP does not stop the server");
    } finally {
      assert.equal(await srv.stop(), 0);
      removeDir(root);
      removeDir(secrets);
    }
    for (const t of ["agent-token-rotated-by-a-file-04", "host-token-rotated-by-sighup-05", ...Object.values(T)]) assert.ok(!srv.stderr().includes(t), "no token in the log");
  });

  test("the metrics token opens /metrics and no other route; the host token still opens /metrics, the agent token does not", async () => {
    requireBinary();
    const root = tempDir();
    const srv = await start(root, { LONGRUN_HOST_TOKEN: T.host, LONGRUN_AGENT_TOKEN: T.agent, LONGRUN_METRICS_TOKEN: T.metrics });
    try {
      const url = srv.info.url;
      assert.equal(await status(url, "/metrics", T.metrics), 200);
      assert.equal(await status(url, "/metrics", T.host), 200);
      assert.equal(await status(url, "/metrics", T.agent), 403);
      assert.equal(await status(url, "/metrics", null), 401);
      const elsewhere: [string, string, string | undefined][] = [
        ["POST", "/rpc", rpcBody("task.status")],
        ["POST", "/rpc", rpcBody("writes.enable")],
        ["GET", "/v1/status", undefined],
        ["POST", "/mcp", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })],
        ["GET", "/", undefined],
        ["GET", "/page/state", undefined],
        ["POST", "/page/link", undefined],
        ["POST", "/page/act", JSON.stringify({ action: "grant", reason: "metrics token" })],
        ["POST", "/v1/login-link", undefined],
      ];
      for (const [method, path, body] of elsewhere) assert.equal(await status(url, path, T.metrics, method, body), 401, `${method} ${path} with the metrics token`);
      const m = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${T.host}` } }).then((r) => r.text());
      assert.match(m, /longrun_gate_decisions_total\{gate="http",decision="allowed",reason="metrics"\} 1/);
    } finally {
      assert.equal(await srv.stop(), 0);
      removeDir(root);
    }
  });

  test("the login link: not printed unless asked (stdout says how to get one); --login-link or LONGRUN_LOGIN_LINK prints it; POST /v1/login-link mints one for the host token only", async () => {
    requireBinary();
    const root = tempDir();
    try {
      const quiet = await start(root);
      let minted = "";
      try {
        assert.equal(quiet.info.page, undefined);
        assert.equal(quiet.info.login, `longrun open --root ${root}`);
        assert.ok(!quiet.stderr().includes("login="));
        const tokens = JSON.parse(readFileSync(quiet.info.token_file, "utf8"));
        const url = quiet.info.url;
        assert.equal(await status(url, "/v1/login-link", tokens.agent_token, "POST"), 403);
        assert.equal(await status(url, "/v1/login-link", null, "POST"), 401);
        const r = await fetch(`${url}/v1/login-link`, { method: "POST", headers: { authorization: `Bearer ${tokens.host_token}` } });
        assert.equal(r.status, 200);
        const body = (await r.json()) as { url: string; expires_in_seconds: number };
        minted = body.url;
        assert.equal(new URL(minted).origin, url);
        assert.equal(body.expires_in_seconds, 600);
        const login = (code: string) =>
          fetch(`${url}/page/login`, { method: "POST", headers: { "content-type": "application/json", "sec-fetch-site": "same-origin" }, body: JSON.stringify({ code }) });
        const code = new URL(minted).searchParams.get("login")!;
        const first = await login(code);
        assert.equal(first.status, 200);
        assert.equal(((await first.json()) as { side: string }).side, "host");
        assert.equal((await login(code)).status, 401, "a link works once");
      } finally {
        assert.equal(await quiet.stop(), 0);
      }
      assert.ok(!quiet.stderr().includes(new URL(minted).searchParams.get("login")!), "the minted code is not logged");
      for (const [env, extra] of [[{}, ["--login-link"]], [{ LONGRUN_LOGIN_LINK: "1" }, []]] as const) {
        const loud = await start(root, env, [...extra]);
        try {
          assert.match(loud.info.page, /^http:\/\/127\.0\.0\.1:\d+\/\?login=[A-Za-z0-9_-]{43}$/);
          assert.equal(loud.info.login, undefined);
        } finally {
          assert.equal(await loud.stop(), 0);
        }
      }
    } finally {
      removeDir(root);
    }
  });

  test("longrun health: exit 0 and one line while the server answers (URL from --root's http.json or --url, /ready with --ready); exit 1 once it is gone; exit 2 on a bad URL", async () => {
    requireBinary();
    const root = tempDir();
    const srv = await start(root);
    try {
      for (const args of [["--root", root], ["--url", srv.info.url], ["--root", root, "--ready"], ["--url", srv.info.url.replace("127.0.0.1", "0.0.0.0"), "--timeout", "10"]]) {
        const r = await run([BINARY, "health", ...args], { cwd: root });
        assert.equal(r.code, 0, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
        assert.equal(r.stdout, `ok: ${srv.info.url}/${args.includes("--ready") ? "ready" : "health"} answered 200\n`);
      }
      const byCwd = await run([BINARY, "health"], { cwd: root, env: { LONGRUN_ROOT: "" } });
      assert.equal(byCwd.code, 0, "the working directory is the root by default");
    } finally {
      assert.equal(await srv.stop(), 0);
    }
    try {
      const gone = await run([BINARY, "health", "--root", root]);
      assert.equal(gone.code, 1, gone.stdout + gone.stderr);
      assert.match(gone.stdout, /^not healthy: http:\/\/127\.0\.0\.1:\d+\/health: .+\n$/);
      for (const args of [["--url", "ftp://x"], ["--url", "http://127.0.0.1:8080/health?x=1"], ["--timeout", "soon"], ["--nope"]]) {
        const bad = await run([BINARY, "health", ...args]);
        assert.equal(bad.code, 2, args.join(" "));
        assert.equal(bad.stderr.trim().split("\n").length, 1);
        assert.match(bad.stderr, /^longrun: .*; see longrun --help\n$/);
      }
    } finally {
      removeDir(root);
    }
  });
});
