/**
 * `longrun open` end to end, with real processes: a person whose agent only runs `longrun mcp`
 * gets a login link (open serves the root itself on 127.0.0.1), follows it with cookies over
 * real HTTP, grants on the page, and the MCP agent's next write passes; with a `longrun http`
 * already serving the root, open asks that server for a link instead (POST /v1/login-link) and
 * hands it to the browser opener (a stand-in `xdg-open` on PATH that records its argument).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { startHttpChild } from "../http/start.ts";
import { startMcp } from "../mcp/helpers.ts";
import { removeDir, run, tempDir, until } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";

/** This process's environment without LONGRUN_ variables or a display (no browser is tried). */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LONGRUN_") && k !== "DISPLAY" && k !== "WAYLAND_DISPLAY")) as Record<string, string>;
  return { ...env, ...extra };
}

/** Logs in with a link's code the way the page's script does; the cookie and key of the session. */
async function login(link: string): Promise<{ origin: string; cookie: string; key: string }> {
  const u = new URL(link);
  const r = await fetch(`${u.origin}/page/login`, {
    method: "POST",
    headers: { "content-type": "application/json", "sec-fetch-site": "same-origin", origin: u.origin },
    body: JSON.stringify({ code: u.searchParams.get("login") }),
  });
  assert.equal(r.status, 200, await r.clone().text());
  const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0]!;
  const { key, side } = (await r.json()) as { key: string; side: string };
  assert.equal(side, "host");
  return { origin: u.origin, cookie, key };
}

describe("longrun open: the status page for a person", () => {
  test("an MCP-only user: open serves the root, prints a link; logged in with it, a grant on the page lets the MCP agent's next write through", async () => {
    requireBinary();
    const root = tempDir();
    const mcp = await startMcp(root);
    const open = spawn(BINARY, ["open", "--root", root, "--no-browser"], { env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    open.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    open.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    const exited = new Promise<number | null>((r) => open.on("close", (code) => r(code)));
    try {
      await mcp.ok("task_start", { description: "fix the parser" });
      assert.equal((await mcp.refused("writes_require", { action: "edit src/parser.ts" })).data.reason, "read_only");

      const link = await until(() => out.split("\n").find((l) => l.startsWith("http")), `open's link (stderr: ${err})`, 30_000);
      assert.match(link, /^http:\/\/127\.0\.0\.1:\d+\/\?login=[A-Za-z0-9_-]{43}$/);
      const page = await fetch(link);
      assert.equal(page.status, 200);
      await page.body?.cancel();
      const s = await login(link);
      const session = { cookie: s.cookie, "x-longrun-key": s.key, "sec-fetch-site": "same-origin", "content-type": "application/json" };
      const state = await fetch(`${s.origin}/page/state`, { headers: session });
      assert.equal(((await state.json()) as { task: { description: string } }).task.description, "fix the parser", "the page shows the MCP agent's task");
      const granted = await fetch(`${s.origin}/page/act`, { method: "POST", headers: session, body: JSON.stringify({ action: "grant", reason: "parser fix approved" }) });
      assert.equal(granted.status, 200, await granted.clone().text());

      assert.equal((await mcp.ok("writes_require", { action: "edit src/parser.ts" })).ok, true);
      const seen = await mcp.ok("task_status");
      assert.equal(seen.task.lease.granted_by, "host:page");
      assert.equal(seen.task.lease.reason, "parser fix approved");
      assert.match(err, /serving the status page for .* Ctrl-C stops it/);
    } finally {
      if (open.exitCode === null) process.kill(open.pid!, "SIGINT");
      assert.equal(await exited, 0, err);
      await mcp.close();
      removeDir(root);
    }
    assert.ok(!err.includes(new URL(out.trim()).searchParams.get("login")!), "the code is not in the log");
  });

  test("with longrun http serving the root, open asks it for a link and hands it to the browser opener", async () => {
    requireBinary();
    const root = tempDir();
    const bin = tempDir();
    // a stand-in browser opener: records the link it is given
    const opened = join(bin, "opened.txt");
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$1" > ${JSON.stringify(opened)}\n`);
    chmodSync(join(bin, "xdg-open"), 0o755);
    const srv = await startHttpChild([BINARY], ["--root", root, "--port", "0"], {}, { cleanEnv: true, loginLink: false });
    try {
      const r = await run([BINARY, "open"], { cwd: root, env: cleanEnv({ DISPLAY: ":99", PATH: `${bin}:${process.env.PATH}` }) });
      assert.equal(r.code, 0, r.stderr);
      const link = r.stdout.trim();
      assert.equal(new URL(link).origin, srv.info.url);
      await until(() => existsSync(opened) && readFileSync(opened, "utf8").trim() === link, "the opener to get the link");
      await login(link);
      await until(() => /path=\/v1\/login-link side=host status=200/.test(srv.stderr()), "the server's log line for the minted link");

      const wrong = await run([BINARY, "open", "--url", srv.info.url, "--no-browser"], { env: cleanEnv({ LONGRUN_HOST_TOKEN: "not-the-host-token-0123456789" }) });
      assert.equal(wrong.code, 1);
      assert.match(wrong.stderr, /^longrun: http:\/\/127\.0\.0\.1:\d+ refused a login link: 401/);
      assert.equal(wrong.stderr.trim().split("\n").length, 1);
      const none = await run([BINARY, "open", "--url", srv.info.url, "--no-browser"], { cwd: bin, env: cleanEnv() });
      assert.equal(none.code, 1);
      assert.match(none.stderr, /^longrun: no host token for http:\/\/127\.0\.0\.1:\d+: set LONGRUN_HOST_TOKEN/);
      const bad = await run([BINARY, "open", "--url", "ftp://x"], { env: cleanEnv() });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /^longrun: --url must be http:\/\/HOST:PORT/);
    } finally {
      assert.equal(await srv.stop(), 0);
      removeDir(root);
      removeDir(bin);
    }
  });
});
