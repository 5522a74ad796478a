/**
 * Refusals in the MCP client's words: the tool to call next by its MCP name, what the user must
 * do to grant a write in this setup (type /approve where longrun's Claude Code hooks are
 * installed, else run `longrun grant` or use the page), never a JSON-RPC method name; in the
 * project's language; the error's kind and fields along in `_meta`, the same in every language.
 * Invalid arguments are JSON-RPC -32602 with one short sentence. Real processes: the binary over
 * MCP, and `longrun serve` on the same root for the host's grants and turns.
 */
import assert from "node:assert/strict";
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { Server, TARGETS } from "../support/server.ts";
import { type Mcp, RPC_METHOD_NAME, startMcp } from "./helpers.ts";

/**
 * What `longrun hook install claude` leaves in a root that MCP reads: longrun's PreToolUse hook in
 * `.claude/settings.local.json` (the command only; nothing runs it here).
 */
function installedHooks(root: string): void {
  mkdirSync(join(root, ".claude"), { recursive: true });
  mkdirSync(join(root, ".longrun"), { recursive: true });
  const command = `/usr/local/bin/longrun hook claude PreToolUse --root ${root}`;
  writeFileSync(join(root, ".claude", "settings.local.json"), JSON.stringify({ hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command }] }] } }));
}

describe("MCP refusals name MCP tools and the user's next step (SDK client, compiled binary)", () => {
  let root = "";
  let mcp: Mcp | null = null;
  let host: Server | null = null;
  beforeEach(() => {
    root = tempDir();
  });
  afterEach(async () => {
    await mcp?.close();
    await host?.close();
    mcp = null;
    host = null;
    removeDir(root);
  });
  const hostSide = () => (host ??= new Server(TARGETS[0]!, ["serve", "--root", root]));
  /** A refusal whose text names no JSON-RPC method and no "host". */
  const refused = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await mcp!.refused(name, args);
    assert.doesNotMatch(r.text, RPC_METHOD_NAME, `${name}: ${r.text}`);
    assert.doesNotMatch(r.text, /\bthe host\b|\blease\b/, `${name}: ${r.text}`);
    return r;
  };

  test("the write check: no task, read-only, outside the scope, uses spent, a new turn: each says what to call or ask", async () => {
    mcp = await startMcp(root, ["--tools", "all"]);
    const none = await refused("writes_require", { action: "edit src/a.ts" });
    assert.equal(none.data.kind, "no_active_task");
    assert.match(none.text, /call task_start/);

    await mcp.ok("task_start", { description: "edit things" });
    const readOnly = await refused("writes_require", { action: "edit src/a.ts" });
    assert.deepEqual([readOnly.data.kind, readOnly.data.reason], ["write_gate_violation", "read_only"]);
    // an MCP-only project (no hooks installed): the person's command and the page
    assert.match(readOnly.text, /ask the user to approve \(they run `longrun grant "what to allow"` in a terminal in this project, or grant it on the status page that `longrun open` opens\)/);
    assert.doesNotMatch(readOnly.text, /\/approve/);
    assert.match(readOnly.text, /writes_request/);

    await hostSide().result("writes.enable", { reason: "src only", scope: ["src/**"], max_uses: 1 });
    const outside = await refused("writes_require", { action: "edit docs/a.md" });
    assert.equal(outside.data.reason, "out_of_scope");
    assert.match(outside.text, /outside what the user approved \(src\/\*\*\)/);
    await mcp.ok("writes_require", { action: "edit src/a.ts" });
    const spent = await refused("writes_require", { action: "edit src/b.ts" });
    assert.equal(spent.data.reason, "uses_exhausted");
    assert.match(spent.text, /Ask the user to approve again \(they run `longrun grant/);

    await hostSide().result("writes.enable", { reason: "again" });
    await hostSide().result("turn.begin", {});
    const ended = await mcp.refused("writes_require", { action: "edit src/a.ts" });
    assert.match(ended.data.reason, /read_only|stale_lease/);
    assert.match(ended.text, /ask the user to approve/i);
  });

  test("with longrun's Claude Code hooks installed the refusal says to type /approve, not to run a command", async () => {
    installedHooks(root);
    mcp = await startMcp(root);
    await mcp.ok("task_start", { description: "t" });
    const r = await refused("writes_require", { action: "edit a" });
    assert.match(r.text, /ask the user to approve \(they type \/approve and what to allow/);
    assert.doesNotMatch(r.text, /longrun grant/);
  });

  test("the approval words are the project's own marker when its hook settings name one", async () => {
    installedHooks(root);
    writeFileSync(join(root, ".longrun", "hooks.json"), JSON.stringify({ approve_marker: "/allow" }));
    mcp = await startMcp(root);
    await mcp.ok("task_start", { description: "t" });
    const r = await refused("writes_require", { action: "edit a" });
    assert.match(r.text, /they type \/allow/);
  });

  test("with lang zh or ko the refusal is in that language; code, kind, reason and fields are the English ones", async () => {
    const english = await startMcp(root);
    await english.ok("task_start", { description: "t" });
    const en = await english.refused("writes_require", { action: "edit src/a.ts" });
    await english.close();
    const scripts = { zh: /\p{Script=Han}/u, ko: /\p{Script=Hangul}/u };
    for (const [lang, script] of Object.entries(scripts)) {
      for (const hooks of [false, true]) {
        const dir = tempDir();
        try {
          mkdirSync(join(dir, ".longrun"), { recursive: true });
          writeFileSync(join(dir, ".longrun", "settings.json"), JSON.stringify({ lang }));
          if (hooks) installedHooks(dir);
          const m = await startMcp(dir);
          try {
            const none = await m.refused("writes_require", { action: "edit src/a.ts" });
            assert.equal(none.data.kind, "no_active_task");
            assert.match(none.text, script, none.text);
            assert.match(none.text, /task_start/);
            await m.ok("task_start", { description: "t" });
            const r = await m.refused("writes_require", { action: "edit src/a.ts" });
            assert.match(r.text, script, r.text);
            assert.doesNotMatch(r.text, /Not approved|ask the user/, r.text);
            assert.match(r.text, hooks ? /\/approve/ : /longrun grant/, r.text);
            assert.equal(r.code, en.code);
            assert.deepEqual(r.data, en.data);
          } finally {
            await m.close();
          }
        } finally {
          removeDir(dir);
        }
      }
    }
  });

  test("an unreadable settings file is English, never a failed refusal", async () => {
    mkdirSync(join(root, ".longrun"), { recursive: true });
    writeFileSync(join(root, ".longrun", "settings.json"), "{ not json");
    mcp = await startMcp(root);
    const r = await refused("writes_require", { action: "edit a" });
    assert.equal(r.data.kind, "no_active_task");
    assert.match(r.text, /^No task yet: call task_start/);
  });

  test("task refusals: paused, finished twice, waiting for the user's verification, an unknown memory", async () => {
    mcp = await startMcp(root, ["--tools", "all"]);
    await mcp.ok("task_start", { description: "t" });
    await mcp.ok("task_checkpoint", { summary: "s", next_step: "n" });
    const paused = await refused("task_transition", { to: "waiting_verification", reason: "done" });
    assert.equal(paused.data.kind, "transition_error");
    await mcp.ok("task_resume");
    await mcp.ok("task_transition", { to: "waiting_verification", reason: "done, please review" });
    const verify = await refused("task_finish", { summary: "self-accepted" });
    assert.equal(verify.data.kind, "unauthorized");
    assert.match(verify.text, /only the user/);
    await hostSide().result("task.finish", { summary: "accepted" });
    const again = await refused("task_finish", { summary: "again" });
    assert.equal(again.data.kind, "transition_error");
    assert.match(again.text, /already completed.*call task_start/);
    const missing = await refused("memory_get", { id: "S_9999" });
    assert.equal(missing.data.kind, "not_found");
    assert.match(missing.text, /memory_search/);
  });

  test("run refusals name the run tools: no task, a stale ownership number", async () => {
    mcp = await startMcp(root, ["--tools", "research"]);
    const noTask = await refused("run_start", { owner: "w" });
    assert.equal(noTask.data.kind, "no_active_task");
    assert.match(noTask.text, /task_start/);
    await mcp.ok("task_start", { description: "research" });
    const run = (await mcp.ok("run_start", { owner: "w1" })).run;
    const notGranted = await refused("receipt_begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "k", args: {} });
    assert.equal(notGranted.data.reason, "run_not_granted");
    await hostSide().result("run.grant", { run_id: run.run_id, reason: "go ahead" });
    await mcp.ok("run_claim", { run_id: run.run_id, owner: "w2" });
    const stale = await refused("run_park", { run_id: run.run_id, epoch: 1, waiting_for: "x" });
    assert.equal(stale.data.kind, "stale_epoch");
    assert.match(stale.text, /run_claim/);
  });

  test("a tool outside the set is named as such, with how to add it", async () => {
    mcp = await startMcp(root);
    const r = await mcp.protocolError("run_start", { owner: "w" });
    assert.equal(r.code, -32602);
    assert.match(r.message, /not offered by this server.*--tools research/);
  });

  test("invalid arguments are -32602 with one short sentence naming the argument", async () => {
    mcp = await startMcp(root);
    const cases: [unknown, RegExp][] = [
      [[1, 2], /arguments must be an object of named values, not an array/],
      ["edit a", /arguments must be an object of named values, not a string/],
      [{}, /"action" is required/],
      [{ action: 5 }, /"action" must be a string, got 5/],
      [{ action: "a", extra: true }, /unknown argument "extra"; it takes action/],
      [{ action: "a\u0000b" }, /action/],
    ];
    for (const [args, message] of cases) {
      const r = await mcp.protocolError("writes_require", args);
      assert.equal(r.code, -32602, JSON.stringify(args));
      assert.match(r.message, message);
      assert.ok(r.message.length < 200, `short: ${r.message}`);
      assert.doesNotMatch(r.message, RPC_METHOD_NAME);
    }
    const enumBad = await mcp.protocolError("task_checkpoint", { summary: "s", next_step: "n", kind: 3 });
    assert.match(enumBad.message, /"kind"/);
    const noName = await mcp.client.request({ method: "tools/call", params: { arguments: {} } } as never, (await import("@modelcontextprotocol/sdk/types.js")).CallToolResultSchema).catch((e) => e);
    assert.equal(noName.code, -32602);
  });
});
