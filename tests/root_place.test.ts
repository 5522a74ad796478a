/**
 * A root never lies inside a protected directory (`.longrun/` anywhere, a root's `raw_data/`,
 * `.claude/`, `.git/`, …), on every route: the rule in-process, then through the binary over stdio
 * JSON-RPC, HTTP with the agent token (`/rpc`, `/v1/status`, `/mcp`) and each command's `--root`.
 * Nothing is created where a root is refused.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InvalidRootError, ProtectedRootError, resolveRoot } from "../src/root/root.ts";
import { protectedPlace, protectedRootRefusal } from "../src/root/place.ts";
import { listTree, removeDir, run, tempDir } from "./support/helpers.ts";
import { BINARY, requireBinary, Server, TARGETS } from "./support/server.ts";
import { type HttpChild, startHttpChild } from "./http/start.ts";

const INVALID_PARAMS = -32602;

/**
 * A base directory with a laid-out root `a`, a second root `b`, and the places a root may not
 * be: a's `.longrun/` and `raw_data/`, `.claude/x`, `.git/`, `.git/objects`, b's `.longrun/`, a
 * link `via-link` to a's `.longrun/`, and a case variant `.LONGRUN` inside `a`.
 */
function layout(base: string) {
  const a = join(base, "a");
  const b = join(base, "b");
  for (const d of [join(a, ".longrun"), join(a, "raw_data"), join(a, ".claude", "x"), join(a, ".git", "objects"), join(a, ".LONGRUN"), join(a, "src"), join(b, ".longrun")]) mkdirSync(d, { recursive: true });
  symlinkSync(join(a, ".longrun"), join(base, "via-link"));
  const refused = [
    join(a, ".longrun"),
    join(a, ".longrun") + "/",
    join(a, "raw_data"),
    join(a, ".claude"),
    join(a, ".claude", "x"),
    join(a, ".git"),
    join(a, ".git", "objects"),
    join(a, ".LONGRUN"),
    join(b, ".longrun"),
    join(base, "via-link"),
  ];
  return { a, b, refused };
}

describe("a root inside a protected directory is refused (the rule)", () => {
  let base = "";
  let paths: ReturnType<typeof layout>;
  before(() => {
    base = tempDir();
    paths = layout(base);
  });
  after(() => removeDir(base));

  test("resolveRoot refuses each protected place with an InvalidRootError naming where it lies", () => {
    for (const p of paths.refused) {
      assert.throws(() => resolveRoot(p), (e: unknown) => e instanceof ProtectedRootError && e instanceof InvalidRootError && e.root === p && !e.message.includes("\n"), p);
    }
    assert.equal(resolveRoot(paths.a), paths.a);
    assert.equal(resolveRoot(join(paths.a, "src")), join(paths.a, "src"), "an ordinary folder of a root may be a root of its own");
  });

  test("raw_data is protected only directly inside a longrun root; the link is judged where it leads", () => {
    const plain = join(base, "plain", "raw_data");
    mkdirSync(plain, { recursive: true });
    assert.equal(protectedPlace(plain), null, "a raw_data folder of a project that is no root");
    assert.equal(protectedPlace(join(paths.a, "raw_data"))?.rule, "longrun_raw");
    assert.equal(protectedPlace(join(paths.a, ".git", "objects"))?.rule, "git_dir");
    assert.equal(protectedPlace(join(paths.a, ".claude", "x"))?.at, join(paths.a, ".claude"));
    assert.match(protectedRootRefusal(join(base, "via-link")) ?? "", /resolves to .*\.longrun/);
    assert.equal(protectedRootRefusal(paths.a), null);
  });
});

describe("a root inside a protected directory is refused on every route (the binary)", () => {
  let base = "";
  let paths: ReturnType<typeof layout>;
  before(() => {
    base = tempDir();
    paths = layout(base);
  });
  after(() => removeDir(base));

  for (const target of TARGETS) {
    test(`stdio serve (${target.name}): task.status, task.start and memory.search naming each place answer invalid params and create nothing`, async () => {
      const srv = new Server(target, ["serve", "--root", paths.a]);
      try {
        await srv.result("task.status", {}); // lays out a; its files are then what they are
        await srv.result("task.status", { root: paths.b });
        const before = listTree(base);
        for (const root of paths.refused) {
          for (const [method, params] of [["task.status", {}], ["task.start", { description: "nest" }], ["memory.search", { query: "x" }]] as const) {
            const e = await srv.error(method, { ...params, root });
            assert.equal(e.code, INVALID_PARAMS, `${method} ${root}: ${JSON.stringify(e)}`);
            assert.equal(e.data.field, "root");
          }
        }
        assert.deepEqual(listTree(base), before, "nothing created or removed");
      } finally {
        await srv.close();
      }
    });
  }

  test("HTTP with the agent token: /rpc, /v1/status and /mcp refuse each place and create nothing", async () => {
    requireBinary();
    let h: HttpChild | null = null;
    try {
      h = await startHttpChild([BINARY], ["--root", paths.a, "--port", "0", "--allow-root", base]);
      const { agent_token } = JSON.parse(readFileSync(h.info.token_file, "utf8")) as { agent_token: string };
      const auth = { authorization: `Bearer ${agent_token}` };
      const rpc = async (params: Record<string, unknown>) => {
        const r = await fetch(`${h!.info.url}/rpc`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.status", params }) });
        return (await r.json()) as { result?: unknown; error?: { code: number; data: Record<string, unknown> } };
      };
      assert.ok((await rpc({ root: paths.b })).result, "an allowed root answers");
      const client = new Client({ name: "test", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${h.info.url}/mcp`), { requestInit: { headers: auth } }));
      try {
        await client.callTool({ name: "task_status", arguments: { root: paths.a } });
        const before = listTree(base);
        for (const root of paths.refused) {
          const e = (await rpc({ root })).error;
          assert.equal(e?.code, INVALID_PARAMS, root);
          assert.equal(e?.data.field, "root");
          const v1: Response = await fetch(`${h.info.url}/v1/status?root=${encodeURIComponent(root)}`, { headers: auth });
          assert.equal(v1.status, 422, `/v1/status ${root}: invalid params`);
          await v1.body?.cancel();
          await assert.rejects(client.callTool({ name: "task_status", arguments: { root } }), (e: { code?: number; data?: { field?: string } }) => e.code === INVALID_PARAMS && e.data?.field === "root", `mcp ${root}`);
        }
        assert.deepEqual(listTree(base), before, "nothing created or removed");
      } finally {
        await client.close();
      }
    } finally {
      if (h) {
        h.child.kill("SIGTERM");
        await h.exited;
      }
    }
  });

  test("each command's --root, hooks' --root and http --allow-root: one line, exit 2, nothing created", async () => {
    requireBinary();
    await run([BINARY, "status", "--root", paths.a]);
    const before = listTree(base);
    const lr = join(paths.a, ".longrun");
    const claude = join(paths.a, ".claude");
    const cases: [string[], string][] = [
      [["status", "--root", lr], ""],
      [["resume", "--root", lr], ""],
      [["checkpoint", "--summary", "s", "--next-step", "n", "--root", lr], ""],
      [["serve", "--root", lr], ""],
      [["mcp", "--root", lr], ""],
      [["http", "--root", lr, "--port", "0"], ""],
      [["http", "--root", paths.a, "--port", "0", "--allow-root", lr], ""],
      [["hook", "install", "claude", "--root", claude], ""],
      [["hook", "uninstall", "claude", "--root", claude], ""],
      [["hook", "claude", "UserPromptSubmit", "--root", lr], JSON.stringify({ hook_event_name: "UserPromptSubmit", prompt: "/approve go" })],
      [["hook", "claude", "PreToolUse", "--root", lr], JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Read", tool_input: { file_path: "x" } })],
    ];
    for (const [args, input] of cases) {
      const r = await run([BINARY, ...args], { input, timeoutMs: 20_000 });
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /Invalid root .*lies in/, args.join(" "));
      assert.equal(r.stderr.trim().split("\n").length, 1, `one line: ${r.stderr}`);
    }
    for (const event of ["SessionStart", "Stop", "PreCompact"]) {
      const r = await run([BINARY, "hook", "claude", event, "--root", lr], { input: JSON.stringify({ hook_event_name: event }) });
      assert.equal(r.code, 0, "these never block");
      assert.match(r.stdout, /Invalid root/, event);
    }
    assert.deepEqual(listTree(base), before, "nothing created or removed");
  });
});
