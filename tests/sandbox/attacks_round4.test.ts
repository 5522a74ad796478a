/**
 * Round 4 of attacks on `longrun sandbox` and the hook, through the binary: files a lease lets the
 * agent leave in the root (bunfig.toml, .env) are read by the Bun runtime of the compiled longrun
 * when it starts there, before any boundary exists. Skipped, visibly, only where bubblewrap is not
 * installed.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { findBwrap } from "../../src/sandbox/status.ts";
import { removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";
import { skipped } from "../support/skips.ts";

const skip = skipped("tests/sandbox/attacks_round4", findBwrap(process.env.PATH) === null ? "bubblewrap not installed" : false);
const made: string[] = [];

/** A longrun root (laid out by `serve`) with a host token in .longrun/http.json. */
async function makeRoot(): Promise<string> {
  const dir = tempDir("longrun-r4-");
  made.push(dir);
  const r = await run([BINARY, "serve", "--root", dir], { input: '{"jsonrpc":"2.0","id":1,"method":"task.start","params":{"description":"r4"}}\n' });
  assert.equal(r.code, 0, r.stderr);
  writeFileSync(join(dir, ".longrun", "http.json"), JSON.stringify({ host_token: "R4_SECRET_TOKEN" }));
  return dir;
}

/** What a lease lets the agent write in the root: a Bun preload that records where it ran and what it could read. */
function plantPreload(root: string, out: string): void {
  writeFileSync(
    join(root, "setup.js"),
    `const fs = require("fs");\nlet t = ""; try { t = fs.readFileSync(${JSON.stringify(join(root, ".longrun", "http.json"))}, "utf8"); } catch (e) { t = "unreadable"; }\nfs.appendFileSync(${JSON.stringify(out)}, process.argv.slice(2, 4).join(" ") + " " + t + "\\n");\n`,
  );
  writeFileSync(join(root, "bunfig.toml"), 'preload = ["./setup.js"]\n');
}

describe("longrun sandbox and hook, round 4", { skip }, () => {
  let outside: string;
  before(() => {
    requireBinary();
    outside = tempDir("longrun-r4-out-");
    made.push(outside);
  });
  after(() => {
    for (const d of made) removeDir(d);
  });

  test("a bunfig.toml preload in the root runs nothing when longrun sandbox starts there (it would run outside the boundary)", async () => {
    const root = await makeRoot();
    const out = join(outside, "sandbox-preload");
    plantPreload(root, out);
    const r = await run([BINARY, "sandbox", "--mode", "read", "--root", root, "--", "bash", "-c", "echo inside"], { cwd: root });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(out) ? readFileSync(out, "utf8") : "", "", "the agent's preload ran in longrun's outer process");
  });

  test("a bunfig.toml preload in the root runs nothing in the hook (it would run unsandboxed, with the host token readable)", async () => {
    const root = await makeRoot();
    const out = join(outside, "hook-preload");
    plantPreload(root, out);
    const r = await run([BINARY, "hook", "claude", "PreToolUse", "--root", root], { cwd: root, input: JSON.stringify({ hook_event_name: "PreToolUse", cwd: root, session_id: "s1", tool_name: "Read", tool_input: { file_path: join(root, "setup.js") } }) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(out) ? readFileSync(out, "utf8") : "", "", "the agent's preload ran in the hook");
  });

  test("a .env in the root saying SANDBOX_RUNTIME=1 does not trade bubblewrap for Landlock outside Claude Code's sandbox (Unix sockets, host pids)", async () => {
    const root = await makeRoot();
    writeFileSync(join(root, ".env"), "SANDBOX_RUNTIME=1\n");
    const sock = join(outside, "host.sock");
    let connections = 0;
    const server: Server = createServer((s) => {
      connections++;
      s.end("HOST\n");
    });
    await new Promise<void>((res) => server.listen(sock, res));
    try {
      const probe = `python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect("${sock}"); print("CONNECTED", s.recv(10))' 2>&1; echo "runtime=$SANDBOX_RUNTIME"`;
      const r = await run([BINARY, "sandbox", "--mode", "read", "--root", root, "--", "bash", "-c", probe], { cwd: root });
      assert.doesNotMatch(r.stdout, /CONNECTED/, r.stdout + r.stderr);
      assert.equal(connections, 0, "a Unix socket outside the boundary was reached");
    } finally {
      server.close();
    }
  });

  test("the hook's own git add --dry-run (the check of a git add) runs no clean filter of a repository the agent configured", async () => {
    const root = await makeRoot();
    const out = join(outside, "hook-filter");
    // what a lease lets the agent leave: a nested repository whose config names a filter for every file
    const sub = join(root, "sub");
    mkdirSync(sub);
    execFileSync("git", ["init", "-q", sub]);
    execFileSync("git", ["-C", sub, "config", "filter.tidy.clean", `echo ran >> ${out}; cat`]);
    writeFileSync(join(sub, ".gitattributes"), "* filter=tidy\n");
    writeFileSync(join(sub, "a.txt"), "hello\n");
    const r = await run([BINARY, "hook", "claude", "PreToolUse", "--root", root], { cwd: root, input: JSON.stringify({ hook_event_name: "PreToolUse", cwd: root, session_id: "s1", tool_name: "Bash", tool_input: { command: "git -C sub add a.txt" } }) });
    assert.ok(r.code === 0 || r.code === 2, r.stderr);
    assert.equal(existsSync(out) ? readFileSync(out, "utf8") : "", "", "the agent's filter ran in the hook, outside every boundary");
  });

  test("a .env in the root naming another task store (LONGRUN_STORE) does not move where the hook reads the lease", async () => {
    const root = await makeRoot();
    writeFileSync(join(root, ".env"), "LONGRUN_STORE=http://127.0.0.1:9\nLONGRUN_PROJECT=agentstore\n");
    const r = await run([BINARY, "hook", "claude", "PreToolUse", "--root", root], { cwd: root, input: JSON.stringify({ hook_event_name: "PreToolUse", cwd: root, session_id: "s1", tool_name: "Write", tool_input: { file_path: join(root, "x.txt"), content: "x" } }) });
    assert.doesNotMatch(r.stdout + r.stderr, /agentstore/, "the hook read its state from the store the agent's .env named");
    assert.match(r.stdout, /needs a write lease/, r.stdout + r.stderr);
  });

  test("ReadMcpResourceTool naming longrun's token file is refused (it reads through any MCP server, outside the sandbox)", async () => {
    const root = await makeRoot();
    const r = await run([BINARY, "hook", "claude", "PreToolUse", "--root", root], { cwd: root, input: JSON.stringify({ hook_event_name: "PreToolUse", cwd: root, session_id: "s1", tool_name: "ReadMcpResourceTool", tool_input: { server: "files", uri: `file://${join(root, ".longrun", "http.json")}` } }) });
    const denied = r.code === 2 || JSON.parse(r.stdout || "null")?.hookSpecificOutput?.permissionDecision === "deny";
    assert.ok(denied, `passed: ${r.stdout}${r.stderr}`);
  });
});
