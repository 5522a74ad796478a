/** Resources (the current task, its last checkpoint) and the "resume this task" prompt, over the SDK client and the binary. */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { type Call, getPrompt } from "../../src/mcp/resources.ts";
import { selectTools } from "../../src/mcp/tool_sets.ts";
import { Dispatcher } from "../../src/rpc/dispatcher.ts";
import { allMethods } from "../../src/rpc/methods/index.ts";
import { RootRegistry } from "../../src/root/registry.ts";
import { removeDir, tempDir } from "../support/helpers.ts";
import { type Mcp, RPC_METHOD_NAME, startMcp } from "./helpers.ts";

describe("MCP resources and prompts (SDK client, compiled binary)", () => {
  let root = "";
  let mcp: Mcp;
  beforeEach(async () => {
    root = tempDir();
    mcp = await startMcp(root);
  });
  afterEach(async () => {
    await mcp.close();
    removeDir(root);
  });
  const read = async (uri: string) => {
    const r = await mcp.client.readResource({ uri });
    assert.equal(r.contents.length, 1);
    return (r.contents[0] as { text: string; mimeType: string }).text;
  };
  const prompt = async () => {
    const r = await mcp.client.getPrompt({ name: "resume_task" });
    assert.equal(r.messages.length, 1);
    assert.equal(r.messages[0]!.role, "user");
    const text = (r.messages[0]!.content as { text: string }).text;
    assert.doesNotMatch(text, RPC_METHOD_NAME);
    return text;
  };

  test("the current task and the last checkpoint are resources; reading them changes nothing", async () => {
    const uris = (await mcp.client.listResources()).resources.map((r) => r.uri);
    assert.deepEqual(uris, ["longrun://task/current", "longrun://checkpoint/last"]);
    assert.deepEqual((await mcp.client.listResourceTemplates()).resourceTemplates, []);
    assert.equal(JSON.parse(await read("longrun://task/current")).task, null);
    assert.match(await read("longrun://checkpoint/last"), /no task yet/i);

    const started = await mcp.ok("task_start", { description: "Port the parser to Rust, keep the API" });
    assert.match(await read("longrun://checkpoint/last"), /no saved checkpoint yet/);
    await mcp.ok("task_checkpoint", { summary: "lexer ported", next_step: "port the parser", kind: "progress" });
    const task = JSON.parse(await read("longrun://task/current")).task;
    assert.equal(task.task_id, started.task.task_id);
    assert.equal(task.description, "Port the parser to Rust, keep the API");
    const checkpoint = await read("longrun://checkpoint/last");
    assert.match(checkpoint, /lexer ported/);
    assert.match(checkpoint, /port the parser/);
    assert.doesNotMatch(checkpoint, /longrun-state/, "the machine line is for longrun, not the reader");
    const after = (await mcp.ok("task_status")).task;
    assert.equal(after.version, task.version, "reading resources changed nothing");
    assert.equal(after.turn_index, task.turn_index);

    const unknown = await mcp.client.readResource({ uri: "longrun://nope" }).catch((e) => e);
    assert.equal(unknown.code, -32002);
  });

  test("the resume prompt: no task, an open task with its checkpoint and the steps by MCP tool name, a finished task", async () => {
    const prompts = (await mcp.client.listPrompts()).prompts;
    assert.deepEqual(prompts.map((p) => [p.name, p.title]), [["resume_task", "Resume this task"]]);
    assert.match(await prompt(), /no task in this project yet.*task_start/s);

    await mcp.ok("task_start", { description: "Make the CLI start faster" });
    await mcp.ok("task_checkpoint", { summary: "startup profiled: config parsing is slow", next_step: "cache the parsed config" });
    const text = await prompt();
    assert.match(text, /Make the CLI start faster/, "the user's words, verbatim");
    assert.match(text, /Status: paused/);
    assert.match(text, /next step: cache the parsed config/);
    assert.match(text, /config parsing is slow/);
    assert.match(text, /1\. Call task_resume/);
    // no Claude Code hooks in this root: the person's command (and the page) grant
    assert.match(text, /writes_require.*longrun grant/);
    assert.equal((await mcp.ok("task_status")).task.status, "paused", "getting the prompt changed nothing");

    await mcp.ok("task_resume");
    await mcp.ok("task_finish", { summary: "done" });
    assert.match(await prompt(), /is completed; there is nothing to resume/);

    const unknown = await mcp.client.getPrompt({ name: "nope" }).catch((e) => e);
    assert.equal(unknown.code, -32602);
  });
});

describe("the resume prompt, by the task's status (in-process, real dispatcher and root)", () => {
  test("blocked: resume, then move it back once unblocked; waiting for verification: ask the user, change nothing", async () => {
    const root = tempDir();
    const roots = new RootRegistry({ defaultRoot: root, allow: [root] });
    const dispatcher = new Dispatcher({ methods: allMethods(), roots });
    let id = 1;
    const call: Call = async (method, params = {}) => (await dispatcher.handleMessage({ jsonrpc: "2.0", id: id++, method, params }, { side: "agent", via: "test" })) as never;
    const text = async (set: string) => {
      const w = { offered: new Set(selectTools(set).map((t) => t.name)), approve: "/approve", lang: "en" as const };
      return ((await getPrompt("resume_task", call, w)).messages[0]!.content as { text: string }).text;
    };
    try {
      await call("task.start", { description: "d" });
      await call("task.transition", { to: "blocked", reason: "waiting for the API key" });
      assert.match(await text("all"), /Status: blocked[\s\S]*call task_transition with to: "in_progress"/);
      assert.match(await text("default"), /It is blocked: ask the user/);
      await call("task.transition", { to: "in_progress", reason: "unblocked" });
      await call("task.transition", { to: "waiting_verification", reason: "done" });
      assert.match(await text("default"), /1\. The task waits for the user's verification/);
    } finally {
      await roots.closeAll();
      removeDir(root);
    }
  });
});
