/** What the fuzz found, one test each, through the compiled binary. */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { decision, hook } from "../support/hook_run.ts";
import { Server, TARGETS } from "../support/server.ts";

async function readOnlyTurn(root: string): Promise<void> {
  await hook(root, "UserPromptSubmit", { prompt: "Refactor the parser\n/approve start" });
  await hook(root, "UserPromptSubmit", { prompt: "look around first" });
}

test("a call that names no path, from a working directory inside .longrun/, is denied (Grep would read the token file)", async () => {
  const root = tempDir();
  try {
    await readOnlyTurn(root);
    for (const tool_input of [{ pattern: "token" }, { pattern: "*" }]) {
      for (const tool_name of ["Grep", "Glob"]) {
        const r = await hook(root, "PreToolUse", { tool_name, tool_input, cwd: join(root, ".longrun"), tool_use_id: "t" });
        assert.equal(decision(r), "deny", `${tool_name} ${JSON.stringify(tool_input)}`);
      }
    }
    const ls = await hook(root, "PreToolUse", { tool_name: "Bash", tool_input: { command: "ls -la" }, cwd: join(root, ".longrun"), tool_use_id: "t" });
    assert.equal(decision(ls), "deny");
    const fromRoot = await hook(root, "PreToolUse", { tool_name: "Grep", tool_input: { pattern: "x" }, cwd: root, tool_use_id: "t" });
    assert.notEqual(decision(fromRoot), "deny", "from the project directory a plain Grep still passes");
  } finally {
    removeDir(root);
  }
});

test("a Read without file_path is malformed, and malformed is denied", async () => {
  const root = tempDir();
  try {
    await readOnlyTurn(root);
    for (const tool_input of [{}, undefined]) {
      const r = await hook(root, "PreToolUse", { tool_name: "Read", ...(tool_input ? { tool_input } : {}), tool_use_id: "t" });
      assert.equal(decision(r), "deny");
    }
  } finally {
    removeDir(root);
  }
});

test("a Stop hook whose transcript_path is a FIFO answers at once instead of blocking past its deadline", async () => {
  const root = tempDir();
  try {
    await hook(root, "UserPromptSubmit", { prompt: "t\n/approve go" });
    const fifo = join(root, "t.fifo");
    execFileSync("mkfifo", [fifo]);
    const r = await hook(root, "Stop", { transcript_path: fifo, stop_hook_active: false });
    assert.equal(r.code, 0, r.stderr);
  } finally {
    removeDir(root);
  }
});

test("artifact.put with two attachments of the same name is invalid_params, not internal, and writes nothing", async () => {
  const root = tempDir();
  const s = new Server(TARGETS[0]!, ["serve", "--root", root]);
  try {
    await s.result("task.start", { description: "d" });
    const e = await s.error("artifact.put", { name: "report", kind: "draft", content: "x", attachments: [{ name: "a", content: "1" }, { name: "a", content: "2" }] });
    assert.equal(e.data.kind, "invalid_params");
    assert.match(e.message, /attachment names must differ/);
    assert.equal((await s.result("artifact.list", {})).artifacts.length, 0);
  } finally {
    await s.close();
    removeDir(root);
  }
});
