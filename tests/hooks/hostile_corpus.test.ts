/**
 * The hostile corpus (tests/hooks/corpus.ts), every call sent as a real PreToolUse payload to a
 * process of the compiled binary, in a root set up the way an attacker would want it (a symlink
 * and a hard link into .longrun/, files named like options):
 * - in a read-only turn, every hostile call is denied;
 * - under the user's unscoped lease, every call that reaches protected files or grants is denied;
 * - no answer is ever "allow"; ordinary work under the lease still passes.
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";
import { ALWAYS_DENIED, LEASE_PASSES, MALFORMED, READ_ONLY_DENIED } from "./corpus.ts";
import { type Answer, decisionOf, payload, pool } from "./hook_calls.ts";



async function send(root: string, input: string): Promise<Answer> {
  return run([BINARY, "hook", "claude", "PreToolUse", "--root", root], { input, env: { CLAUDE_PROJECT_DIR: "" } });
}


/** A git repository inside the root whose own configuration or hooks make read commands run a program. */
async function evilRepo(dir: string, setup: (dir: string) => Promise<unknown> | void): Promise<void> {
  mkdirSync(dir);
  await run(["git", "init", "-q", dir]);
  await setup(dir);
}


async function prompt(root: string, text: string): Promise<void> {
  const r = await run([BINARY, "hook", "claude", "UserPromptSubmit", "--root", root], { input: JSON.stringify({ hook_event_name: "UserPromptSubmit", cwd: root, prompt: text }) });
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /"decision":"block"/, r.stdout);
}

describe("the hostile corpus against the binary's PreToolUse hook", () => {
  let root = "";
  before(async () => {
    requireBinary();
    root = tempDir();
    await prompt(root, "Refactor the parser\n/approve start"); // a real task…
    await prompt(root, "now look around first"); // …in a read-only turn (no approval in this prompt)
    // what an attacker would have prepared under an earlier lease
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "a.txt"), "hello\n");
    writeFileSync(join(root, "--output=pwned"), "");
    writeFileSync(join(root, "-o"), "");
    symlinkSync(join(root, ".longrun"), join(root, "link-to-state"));
    symlinkSync(join(root, ".longrun", "state.json"), join(root, "state-link"));
    writeFileSync(join(root, ".longrun", "hooks.json"), "{}");
    linkSync(join(root, ".longrun", "hooks.json"), join(root, "hard-link"));
    symlinkSync("./.claude/settings.local.json", join(root, "dangling")); // its target does not exist yet
    assert.ok(existsSync(join(root, "memory.db")) && existsSync(join(root, "raw_data")), "the task's root is laid out");
    await evilRepo(join(root, "evil-fsmonitor"), (d) => run(["git", "-C", d, "config", "core.fsmonitor", "touch pwned"]));
    await evilRepo(join(root, "evil-hookspath"), (d) => run(["git", "-C", d, "config", "core.hooksPath", "hk"]));
    // a bare layout that git treats as a work tree, its hook where .git/hooks would not be
    mkdirSync(join(root, "evil-bare"));
    await run(["git", "init", "-q", "--bare", join(root, "evil-bare")]);
    await run(["git", "-C", join(root, "evil-bare"), "config", "core.bare", "false"]);
    await run(["git", "-C", join(root, "evil-bare"), "config", "core.worktree", join(root, "evil-bare")]);
    writeFileSync(join(root, "evil-bare", "hooks", "post-index-change"), "#!/bin/sh\ntouch pwned\n");
    chmodSync(join(root, "evil-bare", "hooks", "post-index-change"), 0o755);
    // scripts an earlier lease left behind, built so that no single call named longrun's files
    writeFileSync(join(root, "evil.sh"), "rm -rf .lo" + "ngrun\n");
    chmodSync(join(root, "evil.sh"), 0o755);
    writeFileSync(join(root, "list-of-dot.txt"), ".\n");
    // a project's own script, with variables and loops, and one that computes a protected name
    writeFileSync(join(root, "build.sh"), '#!/bin/sh\nset -e\nDIR=$(cd "$(dirname "$0")" && pwd)\nfor f in "$DIR"/src/*.ts; do echo "$f"; done\nrm -rf "$DIR/build"\npython3 -c \'print(1)\'\n');
    chmodSync(join(root, "build.sh"), 0o755);
    writeFileSync(join(root, "evil-computed.sh"), '#!/bin/sh\nX=$(pwd)\nrm -rf "$X"/.lo"ng"run\n');
    chmodSync(join(root, "evil-computed.sh"), 0o755);
    writeFileSync(join(root, "ok.sh"), "echo fine\n");
    chmodSync(join(root, "ok.sh"), 0o755);
    writeFileSync(join(root, "evil.py"), "import shutil\nshutil.rmtree('.lo" + "ngrun')\n");
    mkdirSync(join(root, "evil-npm"));
    writeFileSync(join(root, "evil-npm", "package.json"), JSON.stringify({ scripts: { test: "cat ../.lo" + "ngrun/http.json", build: "tsc && rm ../memory.db" } }));
    mkdirSync(join(root, "evil-make"));
    writeFileSync(join(root, "evil-make", "Makefile"), "all:\n\trm -rf ../.lo" + "ngrun\n");
    // a directory with a link into .longrun/ (grep -R follows it, grep -r does not), and another root inside
    mkdirSync(join(root, "tree-with-link"));
    writeFileSync(join(root, "tree-with-link", "x.txt"), "token\n");
    symlinkSync(join(root, ".longrun"), join(root, "tree-with-link", "state"));
    mkdirSync(join(root, "nested", ".longrun"), { recursive: true });
    writeFileSync(join(root, "nested", "memory.db"), "");
    await evilRepo(join(root, "evil-hook"), (d) => {
      writeFileSync(join(d, ".git", "hooks", "post-index-change"), "#!/bin/sh\ntouch pwned\n");
      chmodSync(join(d, ".git", "hooks", "post-index-change"), 0o755);
    });
  });
  after(() => removeDir(root));

  test(`the corpus holds at least 300 hostile calls (${READ_ONLY_DENIED.length + ALWAYS_DENIED.length + MALFORMED.length})`, () => {
    assert.ok(READ_ONLY_DENIED.length + ALWAYS_DENIED.length + MALFORMED.length >= 300);
  });

  test("in a read-only turn every hostile call is denied", { timeout: 300_000 }, async () => {
    const calls = [...READ_ONLY_DENIED, ...ALWAYS_DENIED];
    const answers = await pool(calls, (c) => send(root, payload(root, c)));
    const wrong = calls.map((c, i) => [c, decisionOf(answers[i]!)] as const).filter(([, d]) => d !== "deny");
    assert.deepEqual(wrong, [], `not denied:\n${wrong.map(([c, d]) => `${d}: ${JSON.stringify(c)}`).join("\n")}`);
  });

  test("malformed payloads are denied", { timeout: 60_000 }, async () => {
    const answers = await pool(MALFORMED, (m) => send(root, m));
    const wrong = MALFORMED.filter((_, i) => decisionOf(answers[i]!) !== "deny");
    assert.deepEqual(wrong, []);
  });

  describe("under the user's unscoped lease", () => {
    before(() => prompt(root, "Refactor the parser\n/approve do the refactor"));

    test("every call that reaches protected files, runs a host command or forges an approval is denied", { timeout: 300_000 }, async () => {
      const answers = await pool(ALWAYS_DENIED, (c) => send(root, payload(root, c)));
      const wrong = ALWAYS_DENIED.map((c, i) => [c, decisionOf(answers[i]!), answers[i]!.stdout] as const).filter(([, d]) => d !== "deny");
      assert.deepEqual(wrong, [], `not denied under the lease:\n${wrong.map(([c, d]) => `${d}: ${JSON.stringify(c)}`).join("\n")}`);
    });

    test("ordinary work passes with no decision, so Claude Code's own prompts still apply", { timeout: 120_000 }, async () => {
      const answers = await pool(LEASE_PASSES, (c) => send(root, payload(root, c)));
      const wrong = LEASE_PASSES.map((c, i) => [c, decisionOf(answers[i]!), answers[i]!.stdout + answers[i]!.stderr] as const).filter(([, d]) => d !== "none");
      assert.deepEqual(wrong, [], wrong.map(([c, d, o]) => `${d}: ${JSON.stringify(c)} ${o}`).join("\n"));
    });

    test("no answer to anything in the corpus is ever allow", { timeout: 300_000 }, async () => {
      const calls = [...READ_ONLY_DENIED, ...LEASE_PASSES];
      const answers = await pool(calls, (c) => send(root, payload(root, c)));
      assert.deepEqual(answers.map(decisionOf).filter((d) => d === "allow"), []);
      assert.ok(answers.every((a) => !a.stdout.includes('"allow"')));
    });
  });
});
