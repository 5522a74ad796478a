/**
 * The table of Claude Code's tools, in-process: every tool the real 2.1.328 CLI offers is in it,
 * each row's own example is decided as the row says in a read-only turn, and anything the table
 * does not name is refused.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { toolContext } from "../../src/hooks/claude.ts";
import { defaultHookConfig } from "../../src/hooks/config.ts";
import { TOOLS } from "../../src/hooks/tool_table.ts";
import { decideTool, type ToolContext } from "../../src/hooks/tools.ts";
import { REPO, removeDir, tempDir } from "../support/helpers.ts";

const root = tempDir();
mkdirSync(join(root, ".longrun"));
writeFileSync(join(root, "memory.db"), "");
after(() => removeDir(root));

/** The context the Claude Code hook builds (src/hooks/claude.ts's own), with settings changed. */
function ctx(extra: Partial<ToolContext> = {}): ToolContext {
  return { ...toolContext({ cwd: root }, root, defaultHookConfig()), ...extra };
}

const call = (tool_name: string, tool_input: Record<string, unknown>) => ({ hook_event_name: "PreToolUse", tool_name, tool_input });

describe("the table of Claude Code's tools", () => {
  test("names every tool the real Claude Code 2.1.328 offers (its requests and its init event)", () => {
    const fixture = JSON.parse(readFileSync(join(REPO, "tests", "claude_code", "fixtures", "tools-2.1.328.json"), "utf8"));
    const offered = new Set<string>([...fixture.default_request, ...fixture.deferred, ...fixture.init_tools, ...Object.values(fixture.only_with_flags as Record<string, string[]>).flat()]);
    const missing = [...offered].filter((t) => !Object.hasOwn(TOOLS, t));
    assert.deepEqual(missing, [], "a tool the CLI offers has no row: decide what it may do");
  });

  test("each row's example is decided as the row says in a read-only turn", async () => {
    for (const [tool, rule] of Object.entries(TOOLS)) {
      if (!rule.example) continue;
      const d = await decideTool(call(tool, rule.example), ctx());
      const want = rule.kind === "write" ? "lease" : rule.kind === "deny" ? "deny" : "pass";
      assert.equal(d.kind, want, `${tool}: ${JSON.stringify(d)}`);
    }
  });

  test("a tool the table does not name is refused, and the refusal says how a user allows it", async () => {
    for (const tool of ["mcp__github__create_issue", "NewTool2027", "constructor", "__proto__", "Bash2"]) {
      const d = await decideTool(call(tool, {}), ctx());
      assert.equal(d.kind, "deny", tool);
      if (d.kind === "deny") assert.match(d.reason, /lease_tools/);
    }
  });

  test("a tool the user names in lease_tools needs the lease and never reaches a protected path", async () => {
    const c = ctx({ leaseTools: ["mcp__github__create_issue"] });
    assert.equal((await decideTool(call("mcp__github__create_issue", { title: "x" }), c)).kind, "lease");
    assert.equal((await decideTool(call("mcp__github__create_issue", { path: join(root, ".longrun", "http.json") }), c)).kind, "deny");
  });

  test("longrun's own MCP tools pass (longrun authorizes them itself)", async () => {
    assert.equal((await decideTool(call("mcp__longrun__task_status", {}), ctx())).kind, "pass");
  });

  test("tools that schedule prompts, message other agents or leave the root are refused in every mode", async () => {
    for (const tool of ["CronCreate", "ScheduleWakeup", "RemoteTrigger", "SendMessage", "Workflow", "TeamCreate", "EnterWorktree", "PowerShell", "DeferredToolPlaceholder"]) {
      assert.equal((await decideTool(call(tool, { prompt: "hi", command: "ls" }), ctx())).kind, "deny", tool);
    }
  });

  test("a field that is a way out of a row is refused: a subagent in a worktree, a Monitor on a socket, leaving the sandbox", async () => {
    assert.equal((await decideTool(call("Agent", { description: "d", prompt: "p", isolation: "worktree" }), ctx())).kind, "deny");
    assert.equal((await decideTool(call("Monitor", { command: "true", ws: "ws://127.0.0.1:1" }), ctx())).kind, "deny");
    assert.equal((await decideTool(call("Bash", { command: "ls", dangerouslyDisableSandbox: true }), ctx())).kind, "deny");
  });

  test("Monitor's command is a shell command: read by the parser, and one that writes is refused (it outlives the call)", async () => {
    const d = await decideTool(call("Monitor", { command: "rm -rf .longru?" }), ctx());
    assert.equal(d.kind, "deny");
    const bg = await decideTool(call("Bash", { command: "touch x", run_in_background: true }), ctx());
    assert.equal(bg.kind, "deny");
    if (bg.kind === "deny") assert.match(bg.reason, /background/);
  });

  test("a read-only shell command passes with what to run inside the boundary", async () => {
    const d = await decideTool(call("Bash", { command: "git status" }), ctx());
    assert.equal(d.kind, "pass");
    if (d.kind === "pass") assert.deepEqual(d.shell, { field: "command", command: "git status", background: false });
  });

  test("a search pattern is checked joined to the path it searches", async () => {
    assert.equal((await decideTool(call("Glob", { path: "/proc", pattern: "*/cwd/*" }), ctx())).kind, "deny");
    assert.equal((await decideTool(call("Grep", { pattern: "x", path: root, glob: ".lo*/**" }), ctx())).kind, "deny");
    assert.equal((await decideTool(call("Glob", { path: join(root, "src"), pattern: "**/*.ts" }), ctx())).kind, "pass");
  });
});
