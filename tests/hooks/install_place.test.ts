/**
 * `hook install` from a place that does not last (a pip virtual environment, a temporary or a
 * build directory) writes a lasting copy's path into Claude Code's settings, never the place
 * itself: the venv deleted, the installed hook still answers. Through the binary; the lasting path,
 * the atomic copy and which program the hooks run in process: tests/hooks/install_place_rules.test.ts.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { eventRow } from "../../src/hooks/events.ts";
import { osSandboxFacts, osSandboxMissing } from "../../src/hooks/os_sandbox.ts";
import { VERSION } from "../../src/version.ts";
import { removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";

const missingHere = osSandboxMissing(osSandboxFacts());
const without = missingHere.length ? ["--without-os-sandbox"] : [];

/** Runs a hook command as Claude Code does (through a shell), with its event's sample input. */
function runHookCommand(command: string, input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe("the program the hooks run lasts", () => {
  let dir = "";
  beforeEach(() => (dir = tempDir()));
  afterEach(() => removeDir(dir));

  test("installed from a pip virtual environment, the settings name a lasting copy: the venv deleted, the hook still answers", async () => {
    requireBinary();
    const venvBin = join(dir, "venv", "lib", "python3.12", "site-packages", "longrun", "bin");
    mkdirSync(venvBin, { recursive: true });
    const fromVenv = join(venvBin, "longrun");
    copyFileSync(BINARY, fromVenv);
    chmodSync(fromVenv, 0o755);
    const root = join(dir, "project");
    mkdirSync(root);
    const data = join(dir, "data");
    const r = await run([fromVenv, "hook", "install", "claude", "--root", root, ...without], { env: { XDG_DATA_HOME: data } });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const copy = join(data, "longrun", "bin", VERSION, "longrun");
    const warnings = r.stderr.split("\n").filter((l) => l.includes("lies in"));
    assert.equal(warnings.length, 1, r.stderr);
    assert.match(warnings[0]!, /^longrun: warning: .*site-packages\/longrun\/bin\/longrun lies in a (temporary directory|Python virtual environment); the hooks run a copy of it, /);
    assert.ok(warnings[0]!.includes(copy), warnings[0]!);
    assert.equal(statSync(copy).mode & 0o777, 0o755);

    const settingsText = readFileSync(join(root, ".claude", "settings.local.json"), "utf8");
    assert.equal(settingsText.includes("site-packages"), false, "the venv's path is nowhere in the settings");
    const settings = JSON.parse(settingsText);
    const gate = String(settings.hooks.PreToolUse[0].hooks[0].command);
    assert.equal(gate, `${copy} hook claude PreToolUse --root ${root}`);
    assert.ok(settings.sandbox.filesystem.denyWrite.includes(copy), "the copy is longrun's protected executable");

    rmSync(join(dir, "venv"), { recursive: true, force: true });
    const answer = await runHookCommand(gate, JSON.stringify({ ...eventRow("PreToolUse").sample, cwd: root }));
    assert.equal(answer.code, 0, answer.stderr);
    assert.equal(JSON.parse(answer.stdout).hookSpecificOutput.permissionDecision, "deny", "the gate answers: a write with no task is refused");
  });

  test("when the copy cannot be made, install refuses in one line with the way out and writes no settings", async () => {
    requireBinary();
    const tmpBin = join(dir, "bin");
    mkdirSync(tmpBin);
    const exe = join(tmpBin, "longrun");
    copyFileSync(BINARY, exe);
    chmodSync(exe, 0o755);
    const root = join(dir, "project");
    mkdirSync(root);
    const notADir = join(dir, "data");
    writeFileSync(notADir, "a file where the data directory would be");
    const r = await run([exe, "hook", "install", "claude", "--root", root, ...without], { env: { XDG_DATA_HOME: notADir } });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /lies in a temporary directory, so the hooks must not run it .* could not be copied to .*: put longrun in a lasting place .* or set XDG_DATA_HOME/);
    assert.equal(existsSync(join(root, ".claude", "settings.local.json")), false);
  });
});
