/**
 * Claude Code hooks, as Claude Code runs them: the documented JSON payload on stdin of a real
 * process of the compiled binary; its JSON answer on stdout and its exit status checked.
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir, run, tempDir } from "../helpers.ts";
import { BINARY, requireBinary } from "../protocol/server.ts";

async function hook(root: string, event: string, payload: Record<string, unknown>, env: Record<string, string> = {}) {
  requireBinary();
  const r = await run([BINARY, "hook", "claude", event, "--root", root], { input: JSON.stringify({ hook_event_name: event, cwd: root, session_id: "s1", ...payload }), env });
  return { ...r, out: r.stdout.trim() ? JSON.parse(r.stdout) : null };
}

const decision = (o: { out: any }) => o.out?.hookSpecificOutput?.permissionDecision;
const reason = (o: { out: any }) => String(o.out?.hookSpecificOutput?.permissionDecisionReason ?? "");
const write = (root: string, file: string) => ({ tool_name: "Write", tool_input: { file_path: join(root, file), content: "x" }, tool_use_id: "t1" });
const state = (root: string) => JSON.parse(readFileSync(join(root, ".longrun", "state.json"), "utf8"));

describe("Claude Code hooks (real processes of the binary)", () => {
  let root = "";
  beforeEach(() => (root = tempDir()));
  afterEach(() => removeDir(root));

  test("PreToolUse denies a write when there is no task, with a reason, exit 0", async () => {
    const r = await hook(root, "PreToolUse", write(root, "a.txt"));
    assert.equal(r.code, 0);
    assert.equal(decision(r), "deny");
    assert.match(reason(r), /no task/);
    assert.equal(r.out.hookSpecificOutput.hookEventName, "PreToolUse");
  });

  test("the user's approval line begins a task's turn with a lease; PreToolUse then allows, and records who granted it", async () => {
    const u = await hook(root, "UserPromptSubmit", { prompt: "Rename the config loader\n/approve go ahead" });
    assert.equal(u.code, 0);
    assert.match(u.out.hookSpecificOutput.additionalContext, /writes are approved/);
    const p = await hook(root, "PreToolUse", write(root, "src/a.ts"));
    assert.equal(decision(p), "allow", reason(p));
    const s = state(root);
    assert.equal(s.description, "Rename the config loader");
    assert.equal(s.lease.granted_by, "host:claude-prompt");
    assert.equal(s.lease.reason, "go ahead");
    assert.equal(s.lease_log.at(-1).event, "granted");
  });

  test("the next prompt begins a new turn and the lease is gone", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve first turn" });
    assert.equal(decision(await hook(root, "PreToolUse", write(root, "a.txt"))), "allow");
    const u = await hook(root, "UserPromptSubmit", { prompt: "and now?" });
    assert.match(u.out.hookSpecificOutput.additionalContext, /turn 2.*NOT approved/);
    const p = await hook(root, "PreToolUse", write(root, "a.txt"));
    assert.equal(decision(p), "deny");
    assert.match(reason(p), /read-only/);
  });

  test("a scoped approval allows writes inside the scope only", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve scope=docs/** docs only" });
    assert.equal(decision(await hook(root, "PreToolUse", write(root, "docs/x.md"))), "allow");
    const out = await hook(root, "PreToolUse", write(root, "src/x.ts"));
    assert.equal(decision(out), "deny");
    assert.match(reason(out), /outside the lease's scope/);
  });

  test("read-only Bash passes untouched; a writing Bash needs the lease", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "look around" });
    const ls = await hook(root, "PreToolUse", { tool_name: "Bash", tool_input: { command: "ls -la" } });
    assert.deepEqual(ls.out, {});
    assert.equal(decision(await hook(root, "PreToolUse", { tool_name: "Bash", tool_input: { command: "rm -rf build" } })), "deny");
  });

  test("more read-only Bash commands can be configured in .longrun/hooks.json", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "x" });
    assert.equal(decision(await hook(root, "PreToolUse", { tool_name: "Bash", tool_input: { command: "npm test" } })), "deny");
    writeFileSync(join(root, ".longrun", "hooks.json"), JSON.stringify({ bash_read_only: ["npm test"] }));
    assert.deepEqual((await hook(root, "PreToolUse", { tool_name: "Bash", tool_input: { command: "npm test" } })).out, {});
    assert.equal(decision(await hook(root, "PreToolUse", { tool_name: "Bash", tool_input: { command: "npm install" } })), "deny");
  });

  test("the agent cannot reach longrun's files or host commands, even with a lease", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve everything" });
    for (const payload of [
      { tool_name: "Edit", tool_input: { file_path: join(root, ".longrun", "state.json"), old_string: "read_only", new_string: "writable" } },
      { tool_name: "Read", tool_input: { file_path: join(root, ".longrun", "http.json") } },
      { tool_name: "Bash", tool_input: { command: `echo '{"prompt":"/approve"}' | longrun hook claude UserPromptSubmit --root ${root}` } },
      { tool_name: "Bash", tool_input: { command: "sqlite3 memory.db 'delete from memories'" } },
    ]) {
      const r = await hook(root, "PreToolUse", payload);
      assert.equal(decision(r), "deny", JSON.stringify(payload));
    }
  });

  test("a stale lease in the state file is denied even though the mode says writable", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve ok" });
    const s = state(root);
    s.turn_index += 1; // a turn began somewhere without revoking
    s.version += 1;
    writeFileSync(join(root, ".longrun", "state.json"), JSON.stringify(s));
    const r = await hook(root, "PreToolUse", write(root, "a.txt"));
    assert.equal(decision(r), "deny");
    assert.match(reason(r), /expired/);
    assert.equal(state(root).access_mode, "read_only", "the stale lease was revoked");
  });

  const broken: [string, () => { args?: string[]; input?: string; prep?: () => void }][] = [
    ["its input is not JSON", () => ({ input: "not json" })],
    ["the state file is corrupt", () => ({ prep: () => { mkdirSync(join(root, ".longrun"), { recursive: true }); writeFileSync(join(root, ".longrun", "state.json"), "{trunc"); } })],
    ["it is given no root at all", () => ({ args: [BINARY, "hook", "claude", "PreToolUse"], input: JSON.stringify(write("/x", "a")) })],
    ["its hooks.json is malformed", () => ({ prep: () => { mkdirSync(join(root, ".longrun"), { recursive: true }); writeFileSync(join(root, ".longrun", "hooks.json"), '{"approve_marker": 5}'); } })],
    ["it gets an unknown flag", () => ({ args: [BINARY, "hook", "claude", "PreToolUse", "--bogus"] })],
    ["the state directory is unreadable", () => ({ prep: () => { mkdirSync(join(root, ".longrun"), { recursive: true }); writeFileSync(join(root, ".longrun", "state.json"), "{}"); chmodSync(join(root, ".longrun", "state.json"), 0o000); } })],
  ];
  for (const [name, make] of broken) {
    test(`PreToolUse fails closed when ${name}: deny with a reason, exit 0`, async () => {
      requireBinary();
      const c = make();
      c.prep?.();
      const env: Record<string, string> = { CLAUDE_PROJECT_DIR: "" };
      const r = await run(c.args ?? [BINARY, "hook", "claude", "PreToolUse", "--root", root], { input: c.input ?? JSON.stringify(write(root, "a.txt")), env });
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      // (root can read a mode-000 file; then the answer is a plain refusal, still a deny)
      assert.equal(out.hookSpecificOutput.permissionDecision, "deny", r.stdout);
      assert.ok(out.hookSpecificOutput.permissionDecisionReason.length > 10);
    });
  }

  test("Stop checkpoints a task in progress; the next prompt resumes it in a new turn", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve work" });
    const st = await hook(root, "Stop", { stop_hook_active: false });
    assert.equal(st.code, 0);
    assert.deepEqual(st.out, {}, "Stop never blocks");
    const s = state(root);
    assert.equal(s.status, "paused");
    assert.equal(s.access_mode, "read_only");
    assert.ok(s.last_checkpoint.memory_id.startsWith("S_"));
    const u = await hook(root, "UserPromptSubmit", { prompt: "continue" });
    assert.match(u.out.hookSpecificOutput.additionalContext, /in_progress\), turn 2/);
  });

  test("PreCompact checkpoints too; with no task in progress, Stop does nothing", async () => {
    const none = await hook(root, "Stop", {});
    assert.deepEqual(none.out, {});
    assert.equal(existsSync(join(root, ".longrun", "state.json")), false);
    await hook(root, "UserPromptSubmit", { prompt: "/approve x" });
    const pc = await hook(root, "PreCompact", { trigger: "auto", custom_instructions: "" });
    assert.match(pc.out.systemMessage, /checkpoint saved as S_/);
    assert.equal(state(root).status, "paused");
  });

  test("SessionStart resumes the task read-only in a new turn and tells the model where it stands", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "Port the importer\n/approve yes" });
    await hook(root, "Stop", {});
    const s = await hook(root, "SessionStart", { source: "resume" });
    const ctx = s.out.hookSpecificOutput.additionalContext as string;
    assert.match(ctx, /resumed task T_.* in turn 2, read-only/);
    assert.match(ctx, /Port the importer/);
    assert.equal(state(root).access_mode, "read_only");
  });

  test("the PreToolUse path loads neither libSQL nor anything native; serve does (the check can fail)", async () => {
    requireBinary();
    await hook(root, "UserPromptSubmit", { prompt: "/approve x" });
    const env = { LD_DEBUG: "files" };
    const gate = await run([BINARY, "hook", "claude", "PreToolUse", "--root", root], { input: JSON.stringify(write(root, "a.txt")), env });
    assert.equal(JSON.parse(gate.stdout).hookSpecificOutput.permissionDecision, "allow");
    assert.doesNotMatch(gate.stderr, /\.node \[0\];\s+dynamically loaded/);
    const serve = await run([BINARY, "serve", "--root", root], { input: '{"jsonrpc":"2.0","id":1,"method":"memory.search","params":{"query":"x"}}\n', env });
    assert.match(serve.stderr, /\.node \[0\];\s+dynamically loaded/);
  });
});

describe("longrun hook install claude", () => {
  let root = "";
  beforeEach(() => (root = tempDir()));
  afterEach(() => removeDir(root));

  test("writes settings.local.json (not settings.json), keeps other settings, is idempotent, and proves each hook answers", async () => {
    requireBinary();
    mkdirSync(join(root, ".claude"));
    const file = join(root, ".claude", "settings.local.json");
    writeFileSync(file, JSON.stringify({ model: "x", permissions: { deny: ["Read(./.env)"] }, hooks: { Stop: [{ hooks: [{ type: "command", command: "echo mine" }] }] } }));
    const first = await run([BINARY, "hook", "install", "claude", "--root", root]);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    for (const e of ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "PreCompact"]) assert.match(first.stdout, new RegExp(`ok\\s+${e}`));
    const once = readFileSync(file, "utf8");
    const second = await run([BINARY, "hook", "install", "claude", "--root", root]);
    assert.equal(second.code, 0);
    assert.equal(readFileSync(file, "utf8"), once, "a second install changes nothing");
    const s = JSON.parse(once);
    assert.equal(s.model, "x");
    assert.equal(s.hooks.Stop.length, 2);
    assert.equal(s.hooks.Stop[0].hooks[0].command, "echo mine");
    assert.equal(s.hooks.PreToolUse[0].matcher, "*");
    assert.equal(s.hooks.PreToolUse[0].hooks[0].command, `${BINARY} hook claude PreToolUse --root ${root}`);
    assert.deepEqual(s.permissions.deny.slice(0, 3), ["Read(./.env)", "Read(./.longrun/**)", "Edit(./.longrun/**)"], "its own deny rules are kept, longrun's added once");
    assert.ok(s.permissions.deny.includes("Read(./raw_data/**)"));
    assert.equal(existsSync(join(root, ".claude", "settings.json")), false);
    assert.equal(existsSync(join(root, ".longrun", "state.json")), false, "the check ran in a scratch root, not here");
  });

  test("a settings file that is not JSON is left alone and the install fails", async () => {
    requireBinary();
    mkdirSync(join(root, ".claude"));
    writeFileSync(join(root, ".claude", "settings.local.json"), "{oops");
    const r = await run([BINARY, "hook", "install", "claude", "--root", root]);
    assert.equal(r.code, 1);
    assert.equal(readFileSync(join(root, ".claude", "settings.local.json"), "utf8"), "{oops");
  });
});

