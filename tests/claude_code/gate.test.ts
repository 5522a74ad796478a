/**
 * The gate through the real Claude Code CLI (the pinned devDependency): `longrun hook install
 * claude` in a temp root, then `claude -p` against a scripted model (messages_server.ts), so what is
 * checked is what Claude Code does with the hooks' answers, not only what the hooks print.
 *
 * Skips (saying why) only when the claude binary cannot run here, and never under CI=true.
 * Set LONGRUN_CLAUDE_TEST_BINARY to run against another longrun executable than dist/longrun.
 */
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, before, describe, test } from "node:test";
import { run, tempDir } from "../support/helpers.ts";
import { describeRun, resultOf, type ClaudeRun, type PermissionMode, type StreamEvent } from "./claude.ts";
import { bash, cleanUp, done, ensureBinary, LONGRUN, project, read, SECRET, skip, T, write } from "./project.ts";
import { removeMade } from "./project.ts";
import type { Step, ToolCall, ToolResult } from "./messages_server.ts";

/** The PreToolUse hooks' answers, parsed (null: printed nothing), from the stream's hook_response events. */
function gateAnswers(r: ClaudeRun): (Record<string, unknown> | null)[] {
  return r.hookResponses
    .filter((h: StreamEvent) => h.hook_event === "PreToolUse")
    .map((h) => {
      const out = String(h.stdout ?? "").trim();
      return out ? (JSON.parse(out) as Record<string, unknown>) : null;
    });
}

function decisionOf(answer: Record<string, unknown> | null): unknown {
  return (answer?.hookSpecificOutput as Record<string, unknown> | undefined)?.permissionDecision;
}

afterEach(removeMade);

describe("the gate through the real Claude Code CLI", { skip }, () => {
  before(() => ensureBinary()); // under CI=true a client that cannot run fails

  test("(a) a read-only turn: Write is refused by longrun, and the file does not exist (acceptEdits and bypassPermissions alike)", T, async () => {
    for (const mode of ["acceptEdits", "bypassPermissions"] as const) {
      const p = await project();
      const file = join(p.root, "a.txt");
      const r = await p.claude({ prompt: "Please write a.txt", permissionMode: mode, steps: [write(file), done] });
      assert.equal(r.code, 0, describeRun(r));
      assert.equal(r.toolResults.length, 1, describeRun(r));
      const [w] = r.toolResults;
      assert.equal(w!.is_error, true, describeRun(r));
      assert.match(w!.content, /longrun: no task in .*nothing may be written/, describeRun(r));
      assert.match(w!.content, /\/approve/, "the refusal says how the user approves");
      assert.equal(existsSync(file), false, `${mode}: the file must not exist`);
    }
  });

  test("(b) a prompt whose first line starts with /approve: the Write succeeds; (c) the next prompt of the continued conversation is read-only again", T, async () => {
    const p = await project();
    const a = join(p.root, "a.txt");
    const r1 = await p.claude({ prompt: "/approve write a.txt\nwith hello in it", permissionMode: "acceptEdits", steps: [write(a, "hello\n"), done] });
    assert.equal(r1.code, 0, describeRun(r1));
    assert.equal(r1.toolResults[0]?.is_error, false, describeRun(r1));
    assert.equal(readFileSync(a, "utf8"), "hello\n");
    assert.ok(r1.sessionId, "the init event names the session");

    const c = join(p.root, "c.txt");
    const r2 = await p.claude({ prompt: "now write c.txt too", permissionMode: "acceptEdits", continue: true, steps: [[write(c), bash(`touch ${c}`)], done] });
    assert.equal(r2.code, 0, describeRun(r2));
    assert.equal(r2.sessionId, r1.sessionId, "--continue went on with the same conversation");
    assert.equal(r2.toolResults.length, 2, describeRun(r2));
    for (const t of r2.toolResults) {
      assert.equal(t.is_error, true, describeRun(r2));
      assert.match(t.content, /longrun: .*read-only/, describeRun(r2));
    }
    assert.equal(existsSync(c), false, "the lease ended with the turn that had /approve");
    // the model saw turn 1 (the conversation continued), and turn 1's file is still there
    const last = r2.requests.filter((q) => q.kind === "main").at(-1)!.body!;
    assert.ok(JSON.stringify(last.messages).includes("write a.txt"), "the continued conversation holds turn 1");

    // and --resume <session> also begins a new, read-only turn
    const r3 = await p.claude({ prompt: "write c.txt once more", permissionMode: "acceptEdits", resume: r1.sessionId!, steps: [write(c), done] });
    assert.equal(r3.toolResults[0]?.is_error, true, describeRun(r3));
    assert.match(r3.toolResults[0]!.content, /longrun: .*read-only/, describeRun(r3));
    assert.equal(existsSync(c), false);
  });

  test("(d) --permission-mode bypassPermissions does not let a read-only turn's Write or Bash write through", T, async () => {
    const p = await project();
    const r1 = await p.claude({ prompt: "/approve set up the task", permissionMode: "acceptEdits", steps: [done] });
    assert.equal(r1.code, 0, describeRun(r1));
    const d = join(p.root, "d.txt");
    const d2 = join(p.root, "d2.txt");
    const r2 = await p.claude({ prompt: "write d.txt", permissionMode: "bypassPermissions", continue: true, steps: [[write(d), bash(`echo x > ${d2}`), { tool: "Edit", input: { file_path: join(p.root, ".gitignore"), old_string: "raw_data/", new_string: "raw/" } }], done] });
    assert.equal(r2.code, 0, describeRun(r2));
    assert.equal(r2.toolResults.length, 3, describeRun(r2));
    for (const t of r2.toolResults) {
      assert.equal(t.is_error, true, describeRun(r2));
      assert.match(t.content, /longrun: .*read-only/, describeRun(r2));
    }
    assert.equal(existsSync(d), false);
    assert.equal(existsSync(d2), false);
    assert.match(readFileSync(join(p.root, ".gitignore"), "utf8"), /raw_data\//);
  });

  test("(e) Read of .longrun/http.json or memory.db is refused in every mode, with and without a lease", T, async () => {
    const p = await project();
    writeFileSync(join(p.root, ".longrun", "http.json"), JSON.stringify({ url: "http://127.0.0.1:1", host_token: SECRET, agent_token: SECRET }), { mode: 0o600 });
    const steps = (): Step[] => [
      [read(join(p.root, ".longrun", "http.json")), read(join(p.root, "memory.db")), bash("cat .longrun/http.json"), bash(`head -c 64 ${join(p.root, "memory.db")}`)],
      done,
    ];
    const modes: (PermissionMode | undefined)[] = [undefined, "acceptEdits", "bypassPermissions", "plan", "dontAsk"];
    let first = true;
    for (const mode of modes) {
      for (const approved of [false, true]) {
        const r = await p.claude({ prompt: approved ? "/approve look at the files" : "look at the files", permissionMode: mode, continue: !first, steps: steps() });
        first = false;
        const what = `${mode ?? "default"}${approved ? " + /approve" : ""}`;
        assert.equal(r.code, 0, `${what}: ${describeRun(r)}`);
        assert.equal(r.toolResults.length, 4, `${what}: ${describeRun(r)}`);
        for (const t of r.toolResults) {
          assert.equal(t.is_error, true, `${what}: ${t.tool} ${JSON.stringify(t.input)} must be refused: ${t.content}`);
          assert.ok(!t.content.includes(SECRET), `${what}: the token leaked: ${t.content}`);
          assert.ok(!t.content.includes("SQLite format"), `${what}: memory.db leaked: ${t.content}`);
        }
      }
    }
  });

  test("(f) the hook never answers allow (nor ask): calls that pass get no decision, the rest deny; install adds no allow rule but longrun's own sandbox wrapper", T, async () => {
    const p = await project();
    const notes = join(p.root, "notes.txt");
    writeFileSync(notes, "plain notes 7d2e\n");
    const steps = (f: string): Step[] => [[read(notes), bash("ls"), bash("cat notes.txt")], write(join(p.root, f)), bash(`touch ${join(p.root, `${f}.2`)}`), done];
    const r1 = await p.claude({ prompt: "look around and write f1.txt", permissionMode: "acceptEdits", steps: steps("f1.txt") });
    const r2 = await p.claude({ prompt: "/approve look around and write f2.txt", permissionMode: "acceptEdits", continue: true, steps: steps("f2.txt") });
    for (const [r, approved] of [[r1, false], [r2, true]] as const) {
      assert.equal(r.code, 0, describeRun(r));
      const answers = gateAnswers(r);
      assert.equal(answers.length, 5, `one PreToolUse answer per call: ${JSON.stringify(r.hookResponses)}`);
      // deny, or no decision (nothing printed, or only an updatedInput): never allow, never ask
      for (const a of answers) assert.ok(decisionOf(a) === undefined || decisionOf(a) === "deny", `only deny or no decision: ${JSON.stringify(a)}`);
      const byLongrun = (t: ToolResult | undefined) => t?.is_error === true && /longrun: /.test(t.content);
      assert.match(resultOf(r, 0, 0)?.content ?? "", /plain notes 7d2e/, `Read passes: ${describeRun(r)}`);
      // a read-only Bash command is not refused by longrun (Claude Code's own rules may still ask)
      for (const call of [1, 2]) assert.equal(byLongrun(resultOf(r, 0, call)), false, describeRun(r));
      assert.equal(byLongrun(resultOf(r, 1)), !approved, `Write: ${describeRun(r)}`);
      assert.equal(byLongrun(resultOf(r, 2)), !approved, `touch: ${describeRun(r)}`);
      if (approved) assert.equal(resultOf(r, 1)?.is_error, false, `the approved Write ran: ${describeRun(r)}`);
      assert.equal(answers.filter((a) => decisionOf(a) === undefined).length, approved ? 5 : 3, "what passes gets no decision at all");
    }
    assert.ok(existsSync(join(p.root, "f2.txt")) && !existsSync(join(p.root, "f1.txt")));
    const settings = JSON.parse(readFileSync(p.settingsFile, "utf8"));
    // install may allow only longrun's own read-only sandbox wrapper (the prefix a rewritten Bash command starts with)
    for (const rule of settings.permissions?.allow ?? []) assert.match(rule, /^Bash\(\S*longrun'? sandbox --mode read\b/, `install adds no other allow rule: ${rule}`);
  });

  test("(h) a compaction in the middle of an approved turn (PreCompact, SessionStart source compact) keeps the turn's lease, as the README says; the next prompt is read-only", T, async () => {
    const p = await project();
    const files = ["1.txt", "2.txt", "3.txt"].map((f) => join(p.root, f));
    // the scripted model reports a context over --autocompact's window: the client compacts between the calls
    const r = await p.claude({ prompt: "/approve write three files", permissionMode: "acceptEdits", inputTokens: 150_000, extraArgs: ["--autocompact", "100000"], steps: [...files.map((f) => write(f)), done] });
    assert.equal(r.code, 0, describeRun(r));
    assert.ok(r.requests.some((q) => q.kind === "compact"), `the client compacted: ${r.requests.map((q) => q.kind).join(",")}`);
    const events = r.hookResponses.map((h) => String(h.hook_name));
    assert.ok(events.includes("SessionStart:compact"), events.join(", "));
    for (const h of r.hookResponses) assert.equal(h.exit_code, 0, `${h.hook_name}: ${h.stderr}`);
    assert.equal(r.toolResults.length, 3, describeRun(r));
    for (const t of r.toolResults) assert.equal(t.is_error, false, describeRun(r));
    for (const f of files) assert.ok(existsSync(f), f);
    const next = join(p.root, "4.txt");
    const r2 = await p.claude({ prompt: "and a fourth", permissionMode: "acceptEdits", continue: true, steps: [write(next), done] });
    assert.match(r2.toolResults[0]?.content ?? "", /longrun: .*read-only/, describeRun(r2));
    assert.equal(existsSync(next), false);
  });

  test("(g) a gate hook that cannot run or crashes blocks: the tool call (PreToolUse) and the prompt (UserPromptSubmit)", T, async () => {
    const bin = cleanUp(tempDir("longrun-cc-bin-"));
    const copy = join(bin, "longrun");
    copyFileSync(LONGRUN, copy);
    chmodSync(copy, 0o755);

    // PreToolUse's command made unrunnable, the other hooks working: an approved turn's Write is blocked
    const p = await project(copy);
    const settings = JSON.parse(readFileSync(p.settingsFile, "utf8"));
    const gate = settings.hooks.PreToolUse[0].hooks[0];
    assert.equal(gate.onFailure, "block");
    const unrunnable = join(bin, "not-executable");
    copyFileSync(LONGRUN, unrunnable);
    chmodSync(unrunnable, 0o644);
    const crashing = join(bin, "crashing");
    writeFileSync(crashing, "#!/bin/sh\necho 'not JSON'\nexit 1\n", { mode: 0o755 });
    for (const exe of [unrunnable, crashing, join(bin, "missing")]) {
      gate.command = String(gate.command).replace(/^\S+/, exe).replace(copy, exe);
      writeFileSync(p.settingsFile, JSON.stringify(settings, null, 2));
      const file = join(p.root, "g.txt");
      const r = await p.claude({ prompt: "/approve write g.txt", permissionMode: "bypassPermissions", steps: [write(file), done] });
      assert.equal(r.code, 0, describeRun(r));
      assert.equal(r.toolResults[0]?.is_error, true, `${exe}: ${describeRun(r)}`);
      assert.match(r.toolResults[0]!.content, /blocking because onFailure is "block"/, describeRun(r));
      assert.equal(existsSync(file), false, `${exe}: the call must not run when its gate fails`);
    }

    // the installed binary itself made unrunnable: the prompt is blocked before the model sees it
    const q = await project(copy);
    // `copy` lies in a temporary directory, so the hooks run install's lasting copy of it: that one made unrunnable
    const installed = String(JSON.parse(readFileSync(q.settingsFile, "utf8")).hooks.UserPromptSubmit[0].hooks[0].command).split(" ")[0]!;
    assert.notEqual(installed, copy);
    chmodSync(installed, 0o644);
    const file = join(q.root, "h.txt");
    const r = await q.claude({ prompt: "/approve write h.txt", permissionMode: "bypassPermissions", steps: [write(file), done] });
    assert.equal(r.requests.filter((x) => x.kind === "main").length, 0, `the model was never asked: ${describeRun(r)}`);
    assert.equal(r.toolResults.length, 0);
    assert.match(String(r.result?.result ?? ""), /UserPromptSubmit operation blocked by hook/, describeRun(r));
    assert.equal(existsSync(file), false);
  });
});
