/**
 * Claude Code hooks, as Claude Code runs them: the documented JSON payload on stdin of a real
 * process of the compiled binary; its answer on stdout, its stderr and its exit status checked.
 * A PreToolUse answer is a deny with a reason, or nothing; never "allow".
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { REPO, removeDir, run, scriptArgv, tempDir, until } from "../support/helpers.ts";
import { readTask, writeTask } from "../support/state.ts";
import { BINARY, requireBinary } from "../support/server.ts";

import { sandboxedCommand } from "../../src/hooks/wrap.ts";
import { decision, hook, passed, rewritten } from "../support/hook_run.ts";
const reason = (o: { out: any; stderr: string }) => String(o.out?.hookSpecificOutput?.permissionDecisionReason ?? o.stderr);
const write = (root: string, file: string) => ({ tool_name: "Write", tool_input: { file_path: join(root, file), content: "x" }, tool_use_id: "t1" });
const state = (root: string) => readTask(root);

/** A real task in a read-only turn: started with an approval, then a prompt without one. */
async function readOnlyTurn(root: string): Promise<void> {
  await hook(root, "UserPromptSubmit", { prompt: "Refactor the parser\n/approve start" });
  await hook(root, "UserPromptSubmit", { prompt: "look around first" });
}

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

  test("the user's approval line begins a turn with a lease; a permitted write then gets no decision at all (never allow)", async () => {
    const u = await hook(root, "UserPromptSubmit", { prompt: "Rename the config loader\n/approve go ahead" });
    assert.equal(u.code, 0);
    assert.match(u.out.hookSpecificOutput.additionalContext, /writes are approved/);
    const p = await hook(root, "PreToolUse", write(root, "src/a.ts"));
    assert.equal(p.code, 0);
    assert.equal(p.stdout, "", "nothing printed: Claude Code's own permission rules and prompts still apply");
    const s = await state(root);
    assert.equal(s.description, "Rename the config loader");
    assert.equal(s.lease.granted_by, "host:claude-prompt");
    assert.equal(s.lease.reason, "go ahead");
  });

  test("the next prompt begins a new turn and the lease is gone", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve first turn" });
    assert.equal((await hook(root, "PreToolUse", write(root, "a.txt"))).stdout, "");
    const u = await hook(root, "UserPromptSubmit", { prompt: "and now?" });
    assert.match(u.out.hookSpecificOutput.additionalContext, /turn 2.*NOT approved/);
    const p = await hook(root, "PreToolUse", write(root, "a.txt"));
    assert.equal(decision(p), "deny");
    assert.match(reason(p), /read-only/);
  });

  test("a scoped approval covers writes inside the scope only, and never a path outside the root", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve scope=docs/**,**/*.py docs only" });
    assert.equal((await hook(root, "PreToolUse", write(root, "docs/x.md"))).stdout, "");
    const out = await hook(root, "PreToolUse", write(root, "src/x.ts"));
    assert.equal(decision(out), "deny");
    assert.match(reason(out), /outside the lease's scope/);
    const site = await hook(root, "PreToolUse", { tool_name: "Write", tool_input: { file_path: "/usr/lib/python3/dist-packages/sitecustomize.py", content: "x" } });
    assert.equal(decision(site), "deny", "a scope is relative to the root; an absolute path outside it never matches");
    assert.equal(decision(await hook(root, "PreToolUse", write(root, "tools/gen.py"))), undefined, "inside the root the same pattern matches");
  });

  test("a symlinked directory leading out of the root is outside the scope", async () => {
    const outside = tempDir();
    try {
      const { symlinkSync } = await import("node:fs");
      symlinkSync(outside, join(root, "docs"));
      await hook(root, "UserPromptSubmit", { prompt: "/approve scope=docs/** docs" });
      const r = await hook(root, "PreToolUse", write(root, "docs/x.md"));
      assert.equal(decision(r), "deny");
      assert.match(reason(r), /outside the project/, "a lease never reaches outside the root, scoped or not");
    } finally {
      removeDir(outside);
    }
  });

  test("under a scoped lease Bash is refused unless the scope names Bash", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve scope=src/** src" });
    const r = await hook(root, "PreToolUse", { tool_name: "Bash", tool_input: { command: "rm -rf src/x" } });
    assert.equal(decision(r), "deny");
    assert.match(reason(r), /Bash can write anywhere/);
    await hook(root, "UserPromptSubmit", { prompt: "/approve scope=src/**,Bash src and shell" });
    const leased = await hook(root, "PreToolUse", { tool_name: "Bash", tool_input: { command: "rm -rf src/x" } });
    assert.ok(passed(leased), leased.stdout);
    assert.equal(rewritten(leased), sandboxedCommand("rm -rf src/x", "lease", root, BINARY), "it runs inside the lease's OS boundary");
  });

  test("read-only Bash passes with no decision, rewritten to run inside the read-only OS boundary; a writing Bash needs the lease and the denial says why and what to use instead", async () => {
    await readOnlyTurn(root);
    const ls = await hook(root, "PreToolUse", { tool_name: "Bash", tool_input: { command: "ls -la", description: "list" } });
    assert.ok(passed(ls), ls.stdout);
    assert.deepEqual(ls.out.hookSpecificOutput.updatedInput, { command: sandboxedCommand("ls -la", "read", root, BINARY), description: "list" }, "the rest of the input is kept");
    const r = await hook(root, "PreToolUse", { tool_name: "Bash", tool_input: { command: "sort -o out.txt a.txt" } });
    assert.equal(decision(r), "deny");
    assert.match(reason(r), /the option -o is not allowed/);
    assert.match(reason(r), /the Read tool/);
  });

  test("more read-only Bash commands and tools can be vouched for in .longrun/hooks.json", async () => {
    await readOnlyTurn(root);
    const npm = { tool_name: "Bash", tool_input: { command: "npm test" } };
    const mcp = { tool_name: "mcp__github__get_issue", tool_input: { number: 1 } };
    assert.equal(decision(await hook(root, "PreToolUse", npm)), "deny");
    assert.equal(decision(await hook(root, "PreToolUse", mcp)), "deny");
    writeFileSync(join(root, ".longrun", "hooks.json"), JSON.stringify({ bash_read_only: ["npm test"], read_only_tools: ["mcp__github__get_issue"] }));
    assert.equal(rewritten(await hook(root, "PreToolUse", npm)), sandboxedCommand("npm test", "read", root, BINARY));
    assert.equal((await hook(root, "PreToolUse", mcp)).stdout, "");
    assert.equal(decision(await hook(root, "PreToolUse", { tool_name: "Bash", tool_input: { command: "npm install" } })), "deny");
    assert.equal(decision(await hook(root, "PreToolUse", { tool_name: "Bash", tool_input: { command: "npm test > out.txt" } })), "deny");
  });

  test("a stale lease in the state file is denied even though the mode says writable", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve ok" });
    const s = await state(root);
    s.turn_index += 1; // a turn began somewhere without revoking
    s.version += 1;
    await writeTask(root, s);
    const r = await hook(root, "PreToolUse", write(root, "a.txt"));
    assert.equal(decision(r), "deny");
    assert.match(reason(r), /expired/);
    assert.equal((await state(root)).access_mode, "read_only", "the stale lease was revoked");
  });

  const broken: [string, () => { args?: string[]; input?: string; prep?: () => void }][] = [
    ["its input is not JSON", () => ({ input: "not json" })],
    ["its input is empty", () => ({ input: "" })],
    ["its input is not valid UTF-8", () => ({ input: "\u00ff" })],
    ["the state file is corrupt", () => ({ prep: () => { mkdirSync(join(root, ".longrun"), { recursive: true }); writeFileSync(join(root, ".longrun", "state.json"), "{trunc"); } })],
    ["it is given no root at all", () => ({ args: [BINARY, "hook", "claude", "PreToolUse"], input: JSON.stringify(write("/x", "a")) })],
    ["its hooks.json is malformed", () => ({ prep: () => { mkdirSync(join(root, ".longrun"), { recursive: true }); writeFileSync(join(root, ".longrun", "hooks.json"), '{"approve_marker": 5}'); } })],
    ["its hooks.json has an unknown setting", () => ({ prep: () => { mkdirSync(join(root, ".longrun"), { recursive: true }); writeFileSync(join(root, ".longrun", "hooks.json"), '{"allow_everything": true}'); } })],
    ["it gets an unknown flag", () => ({ args: [BINARY, "hook", "claude", "PreToolUse", "--bogus"] })],
    ["the state file is unreadable", () => ({ prep: () => { mkdirSync(join(root, ".longrun"), { recursive: true }); writeFileSync(join(root, ".longrun", "state.json"), "{}"); chmodSync(join(root, ".longrun", "state.json"), 0o000); } })],
  ];
  for (const [name, make] of broken) {
    test(`PreToolUse fails closed when ${name}: blocked with a reason`, async () => {
      requireBinary();
      const c = make();
      c.prep?.();
      const r = await run(c.args ?? [BINARY, "hook", "claude", "PreToolUse", "--root", root], { input: c.input ?? JSON.stringify(write(root, "a.txt")), env: { CLAUDE_PROJECT_DIR: "" } });
      // exit 2 (stderr is the reason) or a JSON deny with exit 0; nothing else
      if (r.code === 2) assert.match(r.stderr, /longrun: .{10,}/);
      else {
        assert.equal(r.code, 0, r.stderr);
        assert.equal(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision, "deny", r.stdout);
      }
    });
  }

  test("an unknown event fails closed", async () => {
    requireBinary();
    const r = await run([BINARY, "hook", "claude", "PostWhatever", "--root", root], { input: "{}" });
    assert.equal(r.code, 2);
  });

  test("a stdin that never closes is denied at the hard bound (the watchdog answers while the main thread is stuck reading)", async () => {
    requireBinary();
    const child = spawn(BINARY, ["hook", "claude", "PreToolUse", "--root", root], { stdio: ["pipe", "pipe", "pipe"] });
    child.stdin.write('{"hook_event_name":"PreToolUse","tool_name":"Write",');
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.on("close", (c, sig) => resolve([c, sig])));
    clearTimeout(killer);
    child.stdin.destroy();
    assert.equal(signal, null, "it ended by itself, not by the test's kill");
    assert.equal(code, 2, "exit 2: Claude Code blocks the call");
    assert.match(stderr, /no decision within .* denied \(fail closed\)/);
  });

  test("a Stop that runs out of time (its stdin never closes) leaves word that the turn ended, and the gate refuses writes", { timeout: 60_000 }, async () => {
    requireBinary();
    await hook(root, "UserPromptSubmit", { prompt: "Port the importer\n/approve yes" });
    const child = spawn(BINARY, ["hook", "claude", "Stop", "--root", root], { stdio: ["pipe", "pipe", "pipe"] });
    child.stdin.write('{"hook_event_name":"Stop",');
    const killer = setTimeout(() => child.kill("SIGKILL"), 50_000);
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.on("close", (c, sig) => resolve([c, sig])));
    clearTimeout(killer);
    child.stdin.destroy();
    assert.equal(signal, null, "it ended by itself");
    assert.equal(code, 0, "Stop never blocks");
    assert.ok(existsSync(join(root, ".longrun", "turn_end_pending")), "word that the turn ended unrecorded");
    assert.equal(decision(await hook(root, "PreToolUse", write(root, "a.txt"))), "deny", "the lease of a turn Stop saw end is not used");
  });

  test("a held state lock makes PreToolUse answer within its deadline, denied, naming the holder", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve uses=5 go" }); // a counted lease needs the lock to record a use
    const holder = holdLock(join(root, "memory.db"));
    try {
      await holder.ready;
      const started = Date.now();
      const r = await hook(root, "PreToolUse", write(root, "a.txt"));
      const took = Date.now() - started;
      assert.equal(decision(r), "deny");
      assert.match(reason(r), /busy|held/);
      assert.ok(took < 9_000, `answered in ${took} ms, under the installed 10 s timeout`);
    } finally {
      holder.release();
    }
  });

  test("a held state lock blocks the prompt (the turn cannot begin), and the old lease does not carry into the next turn", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve first" });
    const holder = holdLock(join(root, "memory.db"));
    try {
      await holder.ready;
      const u = await hook(root, "UserPromptSubmit", { prompt: "second prompt" });
      assert.equal(u.code, 0);
      assert.equal(u.out.decision, "block", JSON.stringify(u.out));
      assert.match(u.out.reason, /could not begin this turn/);
      assert.match(u.out.reason, /process \d+/, "names the process holding the lock");
    } finally {
      holder.release();
    }
    const again = await hook(root, "UserPromptSubmit", { prompt: "second prompt" });
    assert.match(again.out.hookSpecificOutput.additionalContext, /turn 2.*NOT approved/);
    assert.equal(decision(await hook(root, "PreToolUse", write(root, "a.txt"))), "deny");
  });

  test("Stop ends the turn and saves the assistant's last words as a pause checkpoint; the next prompt resumes", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve work" });
    const st = await hook(root, "Stop", { stop_hook_active: false, last_assistant_message: "Renamed the loader; tests pass. Next: update the docs." });
    assert.equal(st.code, 0);
    assert.equal(st.stdout, "", "Stop never blocks");
    const s = await state(root);
    assert.equal(s.status, "paused");
    assert.equal(s.access_mode, "read_only");
    assert.ok(s.last_checkpoint.memory_id.startsWith("S_"));
    const u = await hook(root, "UserPromptSubmit", { prompt: "continue" });
    assert.match(u.out.hookSpecificOutput.additionalContext, /in_progress\), turn 2/);
    const search = await run([BINARY, "serve", "--root", root], { input: '{"jsonrpc":"2.0","id":1,"method":"memory.search","params":{"query":"Renamed loader"}}\n' });
    assert.match(search.stdout, /Renamed the loader/);
  });

  test("Stop with nothing said ends the turn without an empty checkpoint record", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve work" });
    const st = await hook(root, "Stop", { stop_hook_active: false });
    assert.equal(st.code, 0);
    const s = await state(root);
    assert.equal(s.status, "in_progress");
    assert.equal(s.access_mode, "read_only", "the lease ended with the turn");
    assert.equal(s.last_checkpoint, null, "no record made of nothing");
  });

  test("Stop reads the assistant's last words from the transcript when the payload lacks them", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve work" });
    const transcript = join(root, "t.jsonl");
    writeFileSync(transcript, [
      JSON.stringify({ type: "user", message: { role: "user", content: "go" } }),
      JSON.stringify({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "Migrated the schema to v4." }, { type: "tool_use", name: "Bash" }] } }),
      "{not json",
    ].join("\n"));
    await hook(root, "Stop", { transcript_path: transcript });
    assert.equal((await state(root)).status, "paused");
    const search = await run([BINARY, "serve", "--root", root], { input: '{"jsonrpc":"2.0","id":1,"method":"memory.search","params":{"query":"Migrated schema"}}\n' });
    assert.match(search.stdout, /Migrated the schema to v4/);
  });

  test("PreCompact saves a progress checkpoint: the task keeps running and the lease stands", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "/approve long job" });
    const pc = await hook(root, "PreCompact", { trigger: "auto", custom_instructions: "" });
    assert.equal(pc.code, 0);
    const s = await state(root);
    assert.equal(s.status, "in_progress");
    assert.equal(s.access_mode, "writable");
    assert.ok(s.last_checkpoint.memory_id.startsWith("S_"));
    assert.equal((await hook(root, "PreToolUse", write(root, "a.txt"))).stdout, "", "still writable in the same turn");
  });

  test("with no task in progress, Stop and PreCompact do nothing", async () => {
    assert.equal((await hook(root, "Stop", {})).stdout, "");
    assert.equal((await hook(root, "PreCompact", { trigger: "manual" })).stdout, "");
    assert.equal(existsSync(join(root, "memory.db")), false, "no root was laid out");
  });

  test("SessionStart tells the model where the task stands and begins no turn; the next prompt resumes it read-only", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "Port the importer\n/approve yes" });
    await hook(root, "Stop", { last_assistant_message: "started the port" });
    const s = await hook(root, "SessionStart", { source: "resume" });
    const ctx = s.out.hookSpecificOutput.additionalContext as string;
    assert.match(ctx, /task T_.* \(paused\), turn 1, read-only/);
    assert.match(ctx, /Port the importer/);
    assert.equal((await state(root)).turn_index, 1, "a turn begins only at UserPromptSubmit");
    await hook(root, "UserPromptSubmit", { prompt: "go on" });
    const t = await state(root);
    assert.equal(t.turn_index, 2);
    assert.equal(t.status, "in_progress");
    assert.equal(t.access_mode, "read_only");
  });

  test("a new session ends a lease that still stands (its turn was never ended), without beginning a turn", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "Port the importer\n/approve yes" });
    const s = await hook(root, "SessionStart", { source: "startup" });
    assert.match(s.out.hookSpecificOutput.additionalContext, /read-only/);
    const t = await state(root);
    assert.equal(t.access_mode, "read_only");
    assert.equal(t.turn_index, 1);
    assert.equal(decision(await hook(root, "PreToolUse", write(root, "a.txt"))), "deny");
  });

  test("a compaction in the middle of a turn keeps the turn and the user's grant", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "Port the importer\n/approve yes" });
    assert.equal(await hook(root, "PreCompact", { trigger: "auto" }).then((r) => r.code), 0);
    const s = await hook(root, "SessionStart", { source: "compact" });
    assert.match(s.out.hookSpecificOutput.additionalContext, /compacted.*writes are approved for this turn/s);
    const t = await state(root);
    assert.equal(t.access_mode, "writable");
    assert.equal(t.turn_index, 1);
    assert.ok(passed(await hook(root, "PreToolUse", write(root, "a.txt"))), "the lease stands");
  });

  test("a Stop that cannot end its turn (the state is locked) leaves word, and the gate refuses writes until the next prompt", async () => {
    await hook(root, "UserPromptSubmit", { prompt: "Port the importer\n/approve yes" });
    const holder = holdLock(join(root, "memory.db"));
    try {
      await holder.ready;
      const st = await hook(root, "Stop", {});
      assert.equal(st.code, 0, "Stop never blocks");
      assert.match(st.out.systemMessage, /could not be recorded/);
    } finally {
      holder.release();
    }
    const w = await hook(root, "PreToolUse", write(root, "a.txt"));
    assert.equal(decision(w), "deny", "the lease of an ended turn is not used, even though the state still shows it");
    assert.match(reason(w), /last turn ended/);
    await hook(root, "UserPromptSubmit", { prompt: "next" });
    assert.equal(existsSync(join(root, ".longrun", "turn_end_pending")), false, "the new turn clears the word");
    await hook(root, "UserPromptSubmit", { prompt: "/approve again" });
    assert.ok(passed(await hook(root, "PreToolUse", write(root, "a.txt"))));
  });

  test("the PreToolUse path loads neither libSQL nor anything native; serve does (the check can fail)", async () => {
    requireBinary();
    await hook(root, "UserPromptSubmit", { prompt: "/approve x" });
    const env = { LD_DEBUG: "files" };
    const gate = await run([BINARY, "hook", "claude", "PreToolUse", "--root", root], { input: JSON.stringify(write(root, "a.txt")), env });
    assert.equal(gate.code, 0);
    assert.doesNotMatch(gate.stderr, /\.node \[0\];\s+dynamically loaded/);
    const serve = await run([BINARY, "serve", "--root", root], { input: '{"jsonrpc":"2.0","id":1,"method":"memory.search","params":{"query":"x"}}\n', env });
    assert.match(serve.stderr, /\.node \[0\];\s+dynamically loaded/);
  });

  test("the shipped binary ignores crash-injection variables", async () => {
    const r = await hook(root, "UserPromptSubmit", { prompt: "/approve x" }, { LONGRUN_CRASH_AT: "checkpoint.before_commit,memory.before_commit" });
    assert.equal(r.code, 0);
    const st = await hook(root, "Stop", { last_assistant_message: "done" }, { LONGRUN_CRASH_AT: "checkpoint.before_commit,memory.before_commit" });
    assert.equal(st.signal, null, "not killed");
    assert.equal((await state(root)).status, "paused");
  });
});

/** A separate process holding memory.db's write lock until released (the way a stuck process would). */
export function holdLock(db: string): { ready: Promise<void>; release: () => void } {
  const argv = scriptArgv(join(REPO, "tests", "fixtures", "hold_write_lock.ts"), [db]);
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "inherit"], detached: true });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  return {
    ready: until(() => out.includes("held"), "the lock to be held").then(() => {}),
    release: () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}
