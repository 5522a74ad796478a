/**
 * What the read-only rule lets through is proven harmless by running it, not by reading it: every
 * command of READ_ONLY_PASSES is first passed by the binary's gate in a read-only turn, then run
 * with sh in a scratch project (a git repository with files, and files named like options), as an
 * unprivileged user when the tests run as root; afterwards every file must be as it was.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";
import { READ_ONLY_PASSES } from "./corpus.ts";
import { sandboxedCommand } from "../../src/hooks/wrap.ts";
import { passed, rewritten } from "../support/hook_run.ts";

/** Every entry under `dir` with its kind, mode, size and content hash (git's index aside: see below). */
function snapshot(dir: string, base = dir, out = new Map<string, string>()): Map<string, string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const rel = path.slice(base.length + 1);
    // `git status` may refresh the index's stat cache (an optional lock); it is git's cache, not the project
    if (rel === ".git/index") continue;
    const st = lstatSync(path);
    if (st.isSymbolicLink()) out.set(rel, `link ${readlinkSync(path)}`);
    else if (st.isDirectory()) {
      out.set(rel, `dir ${st.mode}`);
      snapshot(path, base, out);
    } else out.set(rel, `file ${st.mode} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`);
  }
  return out;
}

const asRoot = typeof process.getuid === "function" && process.getuid() === 0;

describe("commands the read-only rule passes change nothing when run", () => {
  let project = "";
  before(async () => {
    requireBinary();
    project = tempDir("longrun-harmless-");
    chmodSync(project, 0o755);
    writeFileSync(join(project, "a.txt"), "hello\nworld\nhello\n");
    writeFileSync(join(project, "b.txt"), "hello\nthere\n");
    mkdirSync(join(project, "src"));
    writeFileSync(join(project, "src", "a.txt"), "x\n");
    writeFileSync(join(project, "--output=pwned"), "");
    writeFileSync(join(project, "-o"), "");
    const git = (...args: string[]) => run(["git", "-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: project });
    await git("init", "-q");
    await git("add", "a.txt", "b.txt", "src");
    await git("commit", "-qm", "init");
    // the unprivileged user owns the project, so a write it attempted would succeed and show
    if (asRoot) await run(["chown", "-R", "65534:65534", project]);
    // a real task in a read-only turn
    for (const prompt of ["Read the code\n/approve start", "just look"]) {
      const r = await run([BINARY, "hook", "claude", "UserPromptSubmit", "--root", project], { input: JSON.stringify({ prompt, cwd: project }) });
      assert.equal(r.code, 0, r.stderr);
    }
  });
  after(() => removeDir(project));

  for (const command of READ_ONLY_PASSES) {
    test(`${JSON.stringify(command)} passes the gate and leaves every file as it was`, async () => {
      const gate = await run([BINARY, "hook", "claude", "PreToolUse", "--root", project], {
        input: JSON.stringify({ hook_event_name: "PreToolUse", cwd: project, tool_name: "Bash", tool_input: { command } }),
      });
      assert.equal(gate.code, 0, gate.stderr);
      const out = gate.stdout.trim() ? JSON.parse(gate.stdout) : null;
      assert.ok(passed({ out, code: gate.code }), `the gate passes it: ${gate.stdout}`);
      assert.equal(rewritten({ out }), sandboxedCommand(command, "read", project, BINARY), "to run inside the read-only OS boundary");
      const before = snapshot(project);
      const argv = asRoot ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", command] : ["sh", "-c", command];
      await run(argv, { cwd: project, env: { HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" } });
      assert.deepEqual(snapshot(project), before);
    });
  }
});
