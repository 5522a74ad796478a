/** `longrun hook install claude` and `uninstall`, as a user runs them, checked in the files they write. */
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, test } from "node:test";
import { protectedPaths } from "../../src/hooks/install_settings.ts";
import { onPath, osSandboxFacts, osSandboxMissing, stableExePath } from "../../src/hooks/os_sandbox.ts";
import { removeDir, run as runChild, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";

/** dist/longrun lies in a build directory, so install copies it to a lasting place: this suite's own (XDG_DATA_HOME). */
let data = "";
before(() => (data = tempDir("longrun-test-data-")));
after(() => removeDir(data));
const run = (argv: string[], o: { env?: Record<string, string> } = {}) => runChild(argv, { ...o, env: { XDG_DATA_HOME: data, ...o.env } });
/** The program the hooks run: dist/longrun's lasting copy. */
const installed = () => stableExePath({ XDG_DATA_HOME: data });

const settingsOf = (root: string) => JSON.parse(readFileSync(join(root, ".claude", "settings.local.json"), "utf8"));

/** Whether Claude Code's sandbox can run on this machine (Linux: bwrap that works, and socat). */
const missingHere = osSandboxMissing(osSandboxFacts());
/** Tests that need the real sandbox's prerequisites skip without them, except in CI (which installs them). */
const NEEDS_SANDBOX = { skip: missingHere.length > 0 && process.env.CI !== "true" ? `Claude Code's sandbox cannot run here (${missingHere.join("; ")}): apt-get install bubblewrap socat` : false };
/** `hook install claude --root ROOT`, accepting best effort only where this machine has no sandbox. */
const install = (root: string) => [BINARY, "hook", "install", "claude", "--root", root, ...(missingHere.length ? ["--without-os-sandbox"] : [])];

/** A PATH directory holding only `socat` (when this machine has it) and, if given, a `bwrap` script. */
function pathWithout(dir: string, bwrapScript?: string): string {
  mkdirSync(dir, { recursive: true });
  const socat = onPath("socat");
  if (socat) symlinkSync(socat, join(dir, "socat"));
  if (bwrapScript) {
    writeFileSync(join(dir, "bwrap"), bwrapScript);
    chmodSync(join(dir, "bwrap"), 0o755);
  }
  return dir;
}

describe("longrun hook install claude", () => {
  let root = "";
  beforeEach(() => (root = tempDir()));
  afterEach(() => removeDir(root));

  test("writes settings.local.json (not settings.json), keeps other settings, is idempotent, and proves each hook answers", async () => {
    requireBinary();
    mkdirSync(join(root, ".claude"));
    const file = join(root, ".claude", "settings.local.json");
    writeFileSync(file, JSON.stringify({ model: "x", permissions: { deny: ["Read(./.env)"] }, hooks: { Stop: [{ hooks: [{ type: "command", command: "echo mine" }] }] }, sandbox: { filesystem: { denyRead: ["~/.ssh"] } } }));
    const first = await run(install(root));
    assert.equal(first.code, 0, first.stdout + first.stderr);
    for (const e of ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "PreCompact"]) assert.match(first.stdout, new RegExp(`ok\\s+${e}`));
    const once = readFileSync(file, "utf8");
    const second = await run(install(root));
    assert.equal(second.code, 0);
    assert.equal(readFileSync(file, "utf8"), once, "a second install changes nothing");
    const s = JSON.parse(once);
    assert.equal(s.model, "x");
    assert.equal(s.hooks.Stop.length, 2);
    assert.equal(s.hooks.Stop[0].hooks[0].command, "echo mine");
    assert.equal(s.hooks.PreToolUse[0].matcher, "*");
    assert.equal(s.hooks.PreToolUse[0].hooks[0].command, `${installed()} hook claude PreToolUse --root ${root}`);
    assert.equal(existsSync(join(root, ".claude", "settings.json")), false);
    assert.equal(existsSync(join(root, ".longrun", "state.json")), false, "the check ran in a scratch root, not here");
  });

  test("the gating hooks block when they fail or time out, with timeouts above their own deadlines", async () => {
    requireBinary();
    assert.equal((await run(install(root))).code, 0);
    const h = settingsOf(root).hooks;
    for (const e of ["PreToolUse", "UserPromptSubmit"]) {
      assert.equal(h[e][0].hooks[0].onFailure, "block", e);
    }
    assert.equal(h.PreToolUse[0].hooks[0].timeout, 10);
    assert.equal(h.UserPromptSubmit[0].hooks[0].timeout, 30);
    assert.equal(h.Stop[0].hooks[0].onFailure, undefined, "a blocking Stop would make the model go on");
  });

  test("deny rules in the project-relative and absolute forms, and the sandbox keeps longrun's files from every Bash command", async () => {
    requireBinary();
    assert.equal((await run(install(root))).code, 0);
    const s = settingsOf(root);
    for (const r of ["Read(/.longrun/**)", "Edit(/.longrun/**)", "Read(/memory.db*)", "Read(/raw_data/**)", `Read(/${root}/.longrun/**)`, "Edit(/.claude/settings.local.json)", "Edit(~/.claude/settings.json)"]) {
      assert.ok(s.permissions.deny.includes(r), r);
    }
    assert.equal(s.sandbox.enabled, true);
    assert.equal(s.sandbox.allowUnsandboxedCommands, false, "no command may leave the sandbox");
    assert.equal(s.sandbox.autoAllowBashIfSandboxed, false, "installing longrun never makes Bash less guarded");
    for (const p of [".longrun", "memory.db", "raw_data", ".claude"]) assert.ok(s.sandbox.filesystem.denyWrite.includes(join(root, p)), p);
    for (const p of [".longrun", "memory.db", "raw_data"]) assert.ok(s.sandbox.filesystem.denyRead.includes(join(root, p)), p);
    assert.ok(s.sandbox.filesystem.denyWrite.includes(installed()), "longrun's own executable (the copy the hooks run)");
    assert.ok(existsSync(join(root, "memory.db")) && existsSync(join(root, "raw_data")), "the root is laid out, so the sandbox has paths to deny");
  });

  test("/approve becomes a command only the user can run, and longrun's files are ignored by git", async () => {
    requireBinary();
    writeFileSync(join(root, ".gitignore"), "node_modules/");
    assert.equal((await run(install(root))).code, 0);
    const cmd = readFileSync(join(root, ".claude", "commands", "approve.md"), "utf8");
    assert.match(cmd, /^---\n/);
    assert.match(cmd, /disable-model-invocation: true/);
    assert.match(cmd, /\$ARGUMENTS/);
    const ignore = readFileSync(join(root, ".gitignore"), "utf8");
    assert.match(ignore, /^node_modules\/\n# longrun/m, "appended after the user's own lines");
    for (const l of [".longrun/", "memory.db*", "raw_data/"]) assert.ok(ignore.split("\n").includes(l), l);
    await run(install(root));
    assert.equal(readFileSync(join(root, ".gitignore"), "utf8"), ignore, "not added twice");
  });

  test("a configured marker gets its own command file", async () => {
    requireBinary();
    mkdirSync(join(root, ".longrun"));
    writeFileSync(join(root, ".longrun", "hooks.json"), JSON.stringify({ approve_marker: "/ok" }));
    assert.equal((await run(install(root))).code, 0);
    assert.ok(existsSync(join(root, ".claude", "commands", "ok.md")));
  });

  test("uninstall takes out what install added and keeps the user's own settings, task and memory", async () => {
    requireBinary();
    mkdirSync(join(root, ".claude"));
    const mine = { model: "x", permissions: { deny: ["Read(./.env)"] }, hooks: { Stop: [{ hooks: [{ type: "command", command: "echo mine" }] }] }, sandbox: { enabled: true, filesystem: { denyRead: ["~/.ssh"] } } };
    writeFileSync(join(root, ".claude", "settings.local.json"), JSON.stringify(mine));
    assert.equal((await run(install(root))).code, 0);
    const r = await run([BINARY, "hook", "uninstall", "claude", "--root", root]);
    assert.equal(r.code, 0, r.stderr);
    const s = settingsOf(root);
    assert.deepEqual(s.hooks, mine.hooks);
    assert.deepEqual(s.permissions.deny, ["Read(./.env)"]);
    assert.deepEqual(s.sandbox.filesystem.denyRead, ["~/.ssh"]);
    assert.deepEqual(s.sandbox.filesystem.denyWrite, []);
    assert.equal(existsSync(join(root, ".claude", "commands", "approve.md")), false);
    assert.ok(existsSync(join(root, "memory.db")), "memory stays");
  });

  test("the sandbox is required: enabled, failIfUnavailable, no unsandboxed commands, no allowed domains, every protected path denied", NEEDS_SANDBOX, async () => {
    requireBinary();
    const r = await run(install(root));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const s = settingsOf(root).sandbox;
    assert.equal(s.enabled, true);
    assert.equal(s.failIfUnavailable, true, "Claude Code refuses to start rather than run Bash unsandboxed");
    assert.equal(s.allowUnsandboxedCommands, false);
    assert.equal(s.autoAllowBashIfSandboxed, false);
    assert.deepEqual(s.network.allowedDomains, []);
    const table = protectedPaths(root, installed());
    assert.deepEqual(s.filesystem.denyWrite, table.map((p) => p.path), "one table: PROTECTED and the executable");
    assert.deepEqual(s.filesystem.denyRead, table.filter((p) => p.read).map((p) => p.path));
    for (const p of [join(root, ".git", "hooks"), join(root, ".git", "config"), join(root, ".envrc"), join(root, ".claude")]) assert.ok(s.filesystem.denyWrite.includes(p), p);
    assert.equal(r.stderr.includes("WARNING"), false, r.stderr);
  });

  test("a user's own allowed domains are kept", NEEDS_SANDBOX, async () => {
    requireBinary();
    mkdirSync(join(root, ".claude"));
    writeFileSync(join(root, ".claude", "settings.local.json"), JSON.stringify({ sandbox: { network: { allowedDomains: ["registry.npmjs.org"] } } }));
    assert.equal((await run(install(root))).code, 0);
    assert.deepEqual(settingsOf(root).sandbox.network.allowedDomains, ["registry.npmjs.org"]);
  });

  test("without bubblewrap on PATH it refuses with one line naming what to install (exit 2) and writes nothing", async () => {
    requireBinary();
    const bin = pathWithout(join(root, "..", `${root.split("/").at(-1)}-bin`));
    try {
      const r = await run([BINARY, "hook", "install", "claude", "--root", root], { env: { PATH: bin } });
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /bwrap/);
      assert.match(r.stderr, /apt-get install bubblewrap socat/);
      assert.match(r.stderr, /--without-os-sandbox/);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.deepEqual(readdirSync(root), [], "nothing written: no .claude/, no memory.db");
    } finally {
      removeDir(bin);
    }
  });

  test("a bubblewrap that cannot create its sandbox counts as missing", async () => {
    requireBinary();
    const bin = pathWithout(join(root, "..", `${root.split("/").at(-1)}-bin`), "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
    try {
      const r = await run([BINARY, "hook", "install", "claude", "--root", root], { env: { PATH: bin } });
      if (process.platform !== "linux") return;
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /cannot create its sandbox.*No permissions to create new namespace/);
      assert.deepEqual(readdirSync(root), []);
    } finally {
      removeDir(bin);
    }
  });

  test("--without-os-sandbox installs anyway, with a loud warning that protection is best effort (and failIfUnavailable off, so Claude Code starts)", async () => {
    requireBinary();
    const bin = pathWithout(join(root, "..", `${root.split("/").at(-1)}-bin`));
    try {
      const r = await run([BINARY, "hook", "install", "claude", "--root", root, "--without-os-sandbox"], { env: { PATH: bin } });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stderr, /WARNING: installed WITHOUT the operating-system sandbox.*best effort/);
      const s = settingsOf(root);
      assert.equal(s.sandbox.enabled, true, "on as soon as bubblewrap is there");
      assert.equal(s.sandbox.failIfUnavailable, false);
      assert.equal(s.sandbox.allowUnsandboxedCommands, false);
      assert.ok(s.hooks.PreToolUse);
    } finally {
      removeDir(bin);
    }
  });

  test("--without-os-sandbox belongs to install only", async () => {
    requireBinary();
    const r = await run([BINARY, "hook", "uninstall", "claude", "--root", root, "--without-os-sandbox"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--without-os-sandbox/);
  });

  test("a settings file that is not JSON is left alone and the install fails", async () => {
    requireBinary();
    mkdirSync(join(root, ".claude"));
    writeFileSync(join(root, ".claude", "settings.local.json"), "{oops");
    const r = await run(install(root));
    assert.equal(r.code, 1);
    assert.equal(readFileSync(join(root, ".claude", "settings.local.json"), "utf8"), "{oops");
  });
});
