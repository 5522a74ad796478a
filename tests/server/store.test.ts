/**
 * A root on a libSQL server, through the real binary: configuration errors, the project a database
 * holds, the seed's fallback when the server is unreachable (the gate fails closed, a checkpoint
 * goes to the runner's pending file and is replayed exactly once when the server is back), the
 * hook reading the lease on the server, and WebSocket URLs.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createClient } from "@libsql/client/web";
import { removeDir, run, tempDir, until } from "../support/helpers.ts";
import { startHttpChild } from "../http/start.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { decision, hook } from "../support/hook_run.ts";
import { BINARY, requireBinary, Server } from "../support/server.ts";
import { defaultStateDir } from "../../src/store/server_config.ts";
import { jwtKeys, type Sqld, sqldMissing, startSqld, useSqld } from "../support/sqld.ts";

const skip = sqldMissing();

function runner(url: string, project: string, stateDir: string, env: Record<string, string> = {}): Server {
  return new Server({ name: "binary", argv: [BINARY] }, ["serve", "--store", url, "--project", project, "--state-dir", stateDir], env);
}

/** Checkpoint records in the server's database, counted there. */
async function checkpointsIn(url: string): Promise<number> {
  const c = createClient({ url });
  try {
    return Number((await c.execute("SELECT COUNT(*) AS n FROM memories WHERE dedupe_key LIKE 'checkpoint:%'")).rows[0]!.n);
  } finally {
    c.close();
  }
}

describe("a root on a libSQL server (the binary against sqld)", { skip }, () => {
  const { db: server, dir } = useSqld();
  let db: Sqld;
  before(() => void (db = server()));

  test("bad store settings end the command at start with one line saying what to pass; nothing is opened", async () => {
    const cases: [string[], RegExp][] = [
      [["--store", "ftp://127.0.0.1:1", "--project", "p"], /scheme must be http, https, ws, wss or libsql/],
      [["--store", db.url], /needs a project key: pass --project KEY/],
      [["--store", `http://user:pw@127.0.0.1:1`, "--project", "p"], /must not carry credentials.*LONGRUN_STORE_TOKEN/],
      [["--store", db.url, "--project", "../etc"], /project key "\.\.\/etc" is not valid/],
      [["--store", db.url, "--project", "p", "--root", "/tmp"], /--root and --store name two different roots/],
      [["--project", "p"], /without a store; pass --store URL/],
    ];
    for (const [args, message] of cases) {
      const r = await run([BINARY, "serve", ...args]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split("\n").length, 1);
    }
  });

  test("one database holds one project: a runner with another project key is refused, naming both; the first is untouched", async () => {
    const a = runner(db.url, "alpha", dir());
    const b = runner(db.url, "beta", dir());
    try {
      await a.result("task.start", { description: "alpha's task" });
      const e = await b.error("task.status");
      assert.equal(e.code, -32602);
      assert.match(e.message, /holds project "alpha", not "beta"/);
      assert.equal(((await a.result("task.status")) as { task: { description: string } }).task.description, "alpha's task");
      // a call naming another root is refused too (a server store serves its one project)
      assert.match((await a.error("task.status", { root: "/tmp" })).message, /serves project alpha/);
      // the commands for people say it in one line too (no stack trace)
      for (const cmd of ["status", "resume", "finish", "recover"]) {
        const r = await run([BINARY, cmd, "--store", db.url, "--project", "beta", "--state-dir", dir()]);
        assert.equal(r.code, 2, `${cmd}: ${r.stderr}`);
        assert.match(r.stderr, /holds project "alpha", not "beta"/);
        assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("a TLS URL (libsql://) for a server without TLS is storage_error unreachable, saying which schemes speak TLS", async () => {
    const r = await run([BINARY, "status", "--store", db.url.replace(/^http:/, "libsql:"), "--project", "tls", "--state-dir", dir()]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /storage_error/);
    assert.match(r.stderr, /speak TLS; a server without TLS is http:\/\/ or ws:\/\//);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  });

  test("server unreachable: the gate refuses (fails closed), a checkpoint goes to the runner's pending file, and the server's return replays it exactly once", async () => {
    const own = await startSqld();
    const state = dir();
    const s = runner(own.url, "p", state);
    try {
      await s.result("task.start", { description: "outage" });
      await s.result("writes.enable", { reason: "edit" });
      assert.equal(((await s.result("writes.require", { action: "edit a.ts" })) as { ok: boolean }).ok, true);
      await own.kill();

      const gate = await s.error("writes.require", { action: "edit a.ts" });
      assert.equal(gate.data.kind, "storage_error");
      assert.equal(gate.data.reason, "unreachable");
      assert.match(gate.message, /libSQL server is unreachable/);

      const cp = await s.error("task.checkpoint", { summary: "done half", next_step: "the other half" });
      assert.equal(cp.data.kind, "checkpoint_write_error");
      assert.equal(cp.data.pending_path, join(state, "pending_checkpoint.json"));
      assert.ok(existsSync(cp.data.pending_path), "kept on the runner's disk");

      await own.start();
      // back: the pending checkpoint still keeps the gate closed until it is replayed
      const still = await s.error("writes.require", { action: "edit a.ts" });
      assert.equal(still.data.kind, "write_gate_violation");
      const r1 = (await s.result("task.resume")) as { replayed: { created: boolean } | null; task: { next_step: string; access_mode: string } };
      assert.equal(r1.replayed?.created, true);
      assert.equal(r1.task.next_step, "the other half", "the checkpoint's state was applied");
      assert.equal(r1.task.access_mode, "read_only");
      assert.equal(existsSync(join(state, "pending_checkpoint.json")), false);
      const r2 = (await s.result("task.resume")) as { replayed: unknown };
      assert.equal(r2.replayed, null, "replayed once");
      assert.equal(await checkpointsIn(own.url), 1);
    } finally {
      await s.close();
      await own.stop();
    }
  });

  test("the hook reads the lease on the server: allowed while granted, denied when not, denied when the server is unreachable", async () => {
    const own = await startSqld();
    const project = dir();
    const state = join(dir(), ".longrun", "runner"); // inside a .longrun directory: the gate protects it
    const env = { LONGRUN_STORE: own.url, LONGRUN_PROJECT: "p", LONGRUN_STATE_DIR: state };
    const s = runner(own.url, "p", state);
    const write = { tool_name: "Write", tool_input: { file_path: join(project, "a.txt"), content: "x" } };
    try {
      await s.result("task.start", { description: "hooked" });
      assert.equal(decision(await hook(project, "PreToolUse", write, env)), "deny");
      await s.result("writes.enable", { reason: "edit" });
      const allowed = await hook(project, "PreToolUse", write, env);
      assert.notEqual(decision(allowed), "deny", allowed.stdout + allowed.stderr);
      // nothing of the root is on the project's disk: the lease came from the server
      assert.equal(existsSync(join(project, ".longrun", "memory.db")), false);
      assert.equal(existsSync(join(project, "memory.db")), false);
      await own.kill();
      const down = await hook(project, "PreToolUse", write, env);
      assert.equal(decision(down), "deny");
      assert.match(down.stdout + down.stderr, /unreachable/);
    } finally {
      await s.close();
      await own.stop();
    }
  });

  test("attacks on the runner's own files: its state directory is protected by the gate, even under a lease; one outside .longrun is refused", async () => {
    const own = await startSqld();
    const project = dir();
    const home = dir();
    const env = { LONGRUN_STORE: own.url, LONGRUN_PROJECT: "p", HOME: home, XDG_STATE_HOME: "" };
    // the runner's default state directory, as the hook derives it
    const s = runner(own.url, "p", defaultStateDir(own.url, "p", { HOME: home }));
    try {
      await s.result("task.start", { description: "attacked" });
      await s.result("writes.enable", { reason: "edit anything" });
      const stateDir = defaultStateDir(own.url, "p", { HOME: home });
      assert.ok(stateDir.includes("/.longrun/"), stateDir);
      const pending = join(stateDir, "pending_checkpoint.json");
      const attempts: [string, Record<string, unknown>][] = [
        ["Write the pending checkpoint", { tool_name: "Write", tool_input: { file_path: pending, content: "" } }],
        ["Read the write counter", { tool_name: "Read", tool_input: { file_path: join(stateDir, "write_seq") } }],
        ["rm the state directory", { tool_name: "Bash", tool_input: { command: `rm -rf ${stateDir}` } }],
        ["rm by a glob", { tool_name: "Bash", tool_input: { command: `rm -rf ~/.local/state/.longr*` } }],
        ["Write through ~", { tool_name: "Write", tool_input: { file_path: "~/.local/state/.longrun/x", content: "" } }],
      ];
      for (const [what, payload] of attempts) assert.equal(decision(await hook(project, "PreToolUse", payload, env)), "deny", what);
      // the lease itself works: a write in the project is allowed
      assert.notEqual(decision(await hook(project, "PreToolUse", { tool_name: "Write", tool_input: { file_path: join(project, "a.txt"), content: "x" } }, env)), "deny");
      // a state directory the gate does not protect: the hook refuses to decide, so it denies
      const outside = await hook(project, "PreToolUse", { tool_name: "Write", tool_input: { file_path: join(project, "a.txt"), content: "x" } }, { ...env, LONGRUN_STATE_DIR: dir() });
      assert.equal(decision(outside), "deny");
      assert.match(outside.stdout + outside.stderr, /not inside a directory named \.longrun/);
    } finally {
      await s.close();
      await own.stop();
    }
  });

  test("a server that requires a token: LONGRUN_STORE_TOKEN opens it; none or a wrong one is storage_error 'refused', naming the variable", async () => {
    const keys = jwtKeys();
    const secured = await startSqld({ jwtPublicKeyPem: keys.publicKeyPem });
    const good = runner(secured.url, "p", dir(), { LONGRUN_STORE_TOKEN: keys.token });
    const none = runner(secured.url, "p", dir());
    const wrong = runner(secured.url, "p", dir(), { LONGRUN_STORE_TOKEN: jwtKeys().token });
    try {
      assert.equal((await good.result("task.start", { description: "with a token" })).task.description, "with a token");
      for (const s of [none, wrong]) {
        const e = await s.error("task.status");
        assert.equal(e.data.kind, "storage_error");
        assert.equal(e.data.reason, "refused");
        assert.match(e.message, /LONGRUN_STORE_TOKEN/);
      }
      assert.doesNotMatch(good.stderr + none.stderr + wrong.stderr, new RegExp(keys.token.slice(-20)), "the token is never logged");
    } finally {
      for (const s of [good, none, wrong]) await s.close();
      await secured.stop();
    }
  });

  test("a WebSocket URL works the same: tasks, memory with a long body in the database, CJK search", async () => {
    const other = await startSqld();
    const state = dir();
    const w = runner(other.ws, "ws-project", state);
    try {
      await w.result("task.start", { description: "over ws" });
      const long = "数据库 " + "x".repeat(20_000);
      const saved = (await w.result("memory.save", { type: "note", title: "长文", content: long })) as { id: string; record: { raw_ref: string } };
      assert.equal(((await w.result("memory.get", { id: saved.id })) as { record: { content: string } }).record.content, long);
      const hits = (await w.result("memory.search", { query: "数据" })) as { hits: { id: string }[] };
      assert.deepEqual(hits.hits.map((h) => h.id), [saved.id]);
      // the long body is a row of the server's blob table; the runner's disk holds none of it
      const c = createClient({ url: other.url });
      try {
        const blob = (await c.execute({ sql: "SELECT length(bytes) AS n FROM blobs WHERE ref = ?", args: [saved.record.raw_ref] })).rows[0];
        assert.equal(Number(blob?.n), new TextEncoder().encode(long).length);
      } finally {
        c.close();
      }
      assert.deepEqual(readdirSync(state).filter((n) => n !== "write_seq"), [], "nothing but the write counter on the runner's disk");
    } finally {
      await w.close();
      await other.stop();
    }
  });
});

describe("the HTTP API and the MCP server on a server store", { skip }, () => {
  let db: Sqld;
  let state = "";
  before(async () => {
    requireBinary();
    db = await startSqld();
    state = tempDir();
  });
  after(async () => {
    await db.stop();
    removeDir(state);
  });

  test("longrun http --store serves the project: host and agent tokens, its token file in the state directory", async () => {
    const env = { LONGRUN_STORE: db.url, LONGRUN_PROJECT: "web", LONGRUN_STATE_DIR: state, LONGRUN_HOST_TOKEN: "h".repeat(32), LONGRUN_AGENT_TOKEN: "a".repeat(32) };
    const { child, info, stderr, exited } = await startHttpChild([BINARY], ["--port", "0"], env);
    try {
      await until(() => new RegExp(`root ${db.url}#web`).test(stderr()), "the log naming the project on the server");
      assert.ok(info.token_file.startsWith(state));
      const rpc = async (method: string, params: Record<string, unknown>, token: string) => {
        const r = await fetch(`${info.url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
        return (await r.json()) as { result?: any; error?: any };
      };
      assert.ok((await rpc("task.start", { description: "over http" }, env.LONGRUN_AGENT_TOKEN)).result?.task);
      assert.equal((await rpc("writes.enable", { reason: "x" }, env.LONGRUN_AGENT_TOKEN)).error?.data?.kind, "unauthorized");
      assert.ok((await rpc("writes.enable", { reason: "x" }, env.LONGRUN_HOST_TOKEN)).result);
      assert.equal((await rpc("writes.require", { action: "edit" }, env.LONGRUN_AGENT_TOKEN)).result?.ok, true);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });

  test("longrun mcp --store: the MCP server on the project, with no root parameter", async () => {
    const client = new Client({ name: "test", version: "1" });
    await client.connect(new StdioClientTransport({ command: BINARY, args: ["mcp", "--store", db.url, "--project", "web", "--state-dir", state], stderr: "pipe" }));
    try {
      const tools = (await client.listTools()).tools;
      assert.ok(tools.length > 0);
      for (const t of tools) assert.equal("root" in ((t.inputSchema.properties ?? {}) as Record<string, unknown>), false, t.name);
      const status = await client.callTool({ name: tools.find((t) => /status/.test(t.name))!.name, arguments: {} });
      assert.equal(status.isError ?? false, false, JSON.stringify(status));
      assert.match(JSON.stringify(status.structuredContent), /over http/, "the task started over HTTP, read over MCP from the same server");
    } finally {
      await client.close();
    }
  });
});
