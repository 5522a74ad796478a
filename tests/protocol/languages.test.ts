/**
 * The catalog's languages where people meet them, through real processes of the compiled binary:
 * JSON-RPC over stdio (`longrun serve`) and the Claude Code hook (`longrun hook claude
 * PreToolUse`). The root's `.longrun/settings.json` `lang` picks the language of `message`; the
 * code, `data` (kind, reason, fields) are the same in every language; a gate refusal names the
 * grant path of the setup (`/approve` where longrun's hooks are installed, else `longrun grant`
 * and the page); settings that cannot be read are English.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { hook } from "../support/hook_run.ts";
import { Server, TARGETS } from "../support/server.ts";

const SCRIPT = { en: /^[\x20-\x7e…]*$/, zh: /\p{Script=Han}/u, ko: /\p{Script=Hangul}/u } as const;
type Lang = keyof typeof SCRIPT;

/** A root whose settings name `lang` (none for en); with longrun's PreToolUse hook in Claude Code's settings when `hooks`. */
function rootIn(lang: Lang | "broken", hooks = false): string {
  const root = tempDir();
  mkdirSync(join(root, ".longrun"), { recursive: true });
  if (lang === "broken") writeFileSync(join(root, ".longrun", "settings.json"), "{ not json");
  else if (lang !== "en") writeFileSync(join(root, ".longrun", "settings.json"), JSON.stringify({ lang }));
  if (hooks) {
    mkdirSync(join(root, ".claude"), { recursive: true });
    const command = `/usr/local/bin/longrun hook claude PreToolUse --root ${root}`;
    writeFileSync(join(root, ".claude", "settings.local.json"), JSON.stringify({ hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command }] }] } }));
  }
  return root;
}

describe("errors and refusals in the root's language (the compiled binary)", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const serve = (root: string) => {
    const s = new Server(TARGETS[0]!, ["serve", "--root", root]);
    cleanups.push(() => void s.close(), () => removeDir(root));
    return s;
  };

  /** The same calls in one root: no task, a read-only write, an unknown memory, a final task moved. */
  async function refusals(s: Server) {
    const noTask = await s.error("writes.require", { action: "Write src/a.ts" });
    await s.result("task.start", { description: "t" });
    const readOnly = await s.error("writes.require", { action: "Write src/a.ts" });
    const missing = await s.error("memory.get", { id: "S_9999" });
    await s.result("task.finish", { summary: "done" });
    const final = await s.error("task.transition", { to: "in_progress", reason: "again" });
    return { noTask, readOnly, missing, final };
  }

  test("JSON-RPC over stdio: the message in en, zh or ko; code and data identical; the gate names `longrun grant` without hooks", async () => {
    const by: Partial<Record<Lang, Awaited<ReturnType<typeof refusals>>>> = {};
    for (const lang of ["en", "zh", "ko"] as const) by[lang] = await refusals(serve(rootIn(lang)));
    const en = by.en!;
    assert.deepEqual([en.noTask.data.kind, en.readOnly.data.reason, en.missing.data.kind, en.final.data.kind], ["no_active_task", "read_only", "not_found", "transition_error"]);
    assert.match(en.readOnly.message, /^Write refused: .*writes\.enable.*; a person can also grant it from the project: `longrun grant "reason"`.*`longrun open`/);
    for (const lang of ["zh", "ko"] as const) {
      const got = by[lang]!;
      for (const key of ["noTask", "readOnly", "missing", "final"] as const) {
        assert.equal(got[key].code, en[key].code, `${lang} ${key}: code`);
        assert.deepEqual(got[key].data, en[key].data, `${lang} ${key}: data`);
        assert.match(got[key].message, SCRIPT[lang], `${lang} ${key}: ${got[key].message}`);
        assert.notEqual(got[key].message, en[key].message);
      }
      assert.match(got.readOnly.message, /longrun grant/);
      assert.doesNotMatch(got.readOnly.message, /\/approve/);
    }
  });

  test("JSON-RPC with longrun's Claude Code hooks installed: the gate's refusal names the approval line", async () => {
    const s = serve(rootIn("zh", true));
    await s.result("task.start", { description: "t" });
    const e = await s.error("writes.require", { action: "Write src/a.ts" });
    assert.equal(e.data.reason, "read_only");
    assert.match(e.message, SCRIPT.zh);
    assert.match(e.message, /\/approve/);
    assert.doesNotMatch(e.message, /longrun grant/);
  });

  test("settings that cannot be read are English, and the refusal still comes", async () => {
    const s = serve(rootIn("broken"));
    const e = await s.error("writes.require", { action: "Write src/a.ts" });
    assert.equal(e.data.kind, "no_active_task");
    assert.equal(e.message, "No active task in this root: call task.start first");
  });

  test("the Claude Code hook's PreToolUse refusals are in the root's language, the approval line named", async () => {
    for (const lang of ["zh", "ko"] as const) {
      const root = rootIn(lang);
      cleanups.push(() => removeDir(root));
      const write = { tool_name: "Write", tool_input: { file_path: join(root, "a.txt"), content: "x" }, tool_use_id: "t1" };
      const none = await hook(root, "PreToolUse", write);
      const noneReason = String(none.out?.hookSpecificOutput?.permissionDecisionReason);
      assert.equal(none.out?.hookSpecificOutput?.permissionDecision, "deny");
      assert.match(noneReason, SCRIPT[lang]);
      assert.match(noneReason, /\/approve/);
      await hook(root, "UserPromptSubmit", { prompt: "Refactor the parser\n/approve start" });
      await hook(root, "UserPromptSubmit", { prompt: "look around first" });
      // refused whatever the lease: a write outside the project, worded in the root's language too
      const outside = await hook(root, "PreToolUse", { tool_name: "Write", tool_input: { file_path: "/etc/longrun-test-x", content: "x" }, tool_use_id: "t3" });
      const outsideReason = String(outside.out?.hookSpecificOutput?.permissionDecisionReason);
      assert.equal(outside.out?.hookSpecificOutput?.permissionDecision, "deny");
      assert.match(outsideReason, SCRIPT[lang], outsideReason);
      assert.match(outsideReason, /\/etc\/longrun-test-x/);
      assert.doesNotMatch(outsideReason, /outside the project/);
      for (const payload of [write, { tool_name: "Bash", tool_input: { command: "rm -f a.txt" }, tool_use_id: "t2" }]) {
        const r = await hook(root, "PreToolUse", payload);
        const reason = String(r.out?.hookSpecificOutput?.permissionDecisionReason);
        assert.equal(r.out?.hookSpecificOutput?.permissionDecision, "deny", reason);
        assert.match(reason, /^longrun: /);
        assert.match(reason, SCRIPT[lang], reason);
        assert.doesNotMatch(reason, /Write refused|the user approves/, reason);
        assert.match(reason, /\/approve/);
      }
    }
  });
});
