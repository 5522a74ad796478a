/**
 * The tool list as a model reads it: the default set's tools/list (from the real binary) against
 * a golden file reviewed in the diff, its size in tokens (gpt-tokenizer), every parameter
 * described with an example, no internal jargon; each set's selection, and no spelling of
 * `--tools` that reaches a host-side method.
 *
 * Regenerate the golden file after a deliberate change: LONGRUN_UPDATE_GOLDEN=1 bun test tests/mcp/tool_list.test.ts
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { toJsonSchema } from "@valibot/to-json-schema";
import { encode as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { encode as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { listed, selectTools, SET_NAMES, ToolSetError, TOOLS } from "../../src/mcp/tool_sets.ts";
import { allMethods } from "../../src/rpc/methods/index.ts";
import { REPO, removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";
import { assertValid, startMcp } from "./helpers.ts";

const GOLDEN = join(REPO, "tests", "mcp", "golden", "default_tools.json");
/** The default set's tools/list, measured as the JSON a client receives, must stay under this. */
const TOKEN_BUDGET = 1_500;
const METHODS = new Map(allMethods().map((m) => [m.name, m]));
const HOST_TOOLS = allMethods().filter((m) => m.side === "host").map((m) => m.name.replace(/\./g, "_"));

async function listedBy(args: string[]) {
  const root = tempDir();
  const mcp = await startMcp(root, args);
  try {
    return (await mcp.client.listTools()).tools;
  } finally {
    await mcp.close();
    removeDir(root);
  }
}

describe("the MCP tool list", () => {
  test("the default set's tools/list matches the reviewed golden file", async () => {
    const tools = await listedBy([]);
    const text = JSON.stringify(tools, null, 2) + "\n";
    if (process.env.LONGRUN_UPDATE_GOLDEN === "1") writeFileSync(GOLDEN, text);
    assert.equal(text, readFileSync(GOLDEN, "utf8"), "the default tool list changed: review it, then regenerate with LONGRUN_UPDATE_GOLDEN=1 (CONTRIBUTING.md)");
  });

  test(`the default set's definitions are under ${TOKEN_BUDGET} tokens (o200k and cl100k), the others measured`, async () => {
    const sizes: string[] = [];
    for (const set of SET_NAMES) {
      const json = JSON.stringify({ tools: await listedBy(["--tools", set]) });
      const tokens = { o200k: o200k(json).length, cl100k: cl100k(json).length };
      sizes.push(`${set}: ${json.length} chars, ${tokens.o200k} tokens (o200k), ${tokens.cl100k} (cl100k)`);
      if (set === "default") {
        assert.ok(tokens.o200k < TOKEN_BUDGET, `default set: ${tokens.o200k} o200k tokens`);
        assert.ok(tokens.cl100k < TOKEN_BUDGET, `default set: ${tokens.cl100k} cl100k tokens`);
      }
    }
    process.stderr.write(`MCP tool lists: ${sizes.join("; ")}\n`);
  });

  test("every parameter of every tool is described with an example, and no description uses internal jargon", () => {
    for (const t of TOOLS) {
      const tool = listed(t, true);
      const texts = [tool.description];
      for (const [name, schema] of Object.entries(tool.inputSchema.properties as Record<string, { description?: string }>)) {
        assert.ok(schema.description, `${t.name}.${name} has a description`);
        assert.match(schema.description, /e\.g\. \S/, `${t.name}.${name}'s description has an example`);
        texts.push(schema.description);
      }
      // a run's fencing epoch is a parameter a model must send: said in plain words where it is asked for
      const epoch = (tool.inputSchema.properties as Record<string, { description: string }>).epoch;
      if (epoch) assert.match(epoch.description, /ownership number/, t.name);
      for (const text of texts) {
        assert.doesNotMatch(text, /\bI[1-4]\b|machine line|JSON-RPC|\blease\b|\bthe host\b|fencing/, `${t.name}: ${text}`);
        assert.doesNotMatch(text, /\b(task|writes|turn|memory|run|receipt|budget|adjust|artifact|context|system)\.[a-z_]+\b/, `${t.name} names a JSON-RPC method: ${text}`);
      }
    }
  });

  test("each tool maps onto an agent-side method, takes only params the method takes, and requires what it requires", () => {
    for (const t of TOOLS) {
      const m = METHODS.get(t.method);
      assert.ok(m, `${t.name}: ${t.method} exists`);
      assert.equal(m.side, "agent", `${t.name} maps to an agent-side method`);
      const rpc = toJsonSchema(m.params, { errorMode: "ignore" }) as { properties: Record<string, unknown>; required?: string[] };
      const own = (m.params as unknown as { entries: Record<string, unknown> }).entries;
      for (const [p, entry] of Object.entries(t.input.schema.entries)) assert.equal(entry, own[p], `${t.name}.${p} is ${t.method}'s own param schema`);
      const input = listed(t, false).inputSchema as unknown as { properties: Record<string, unknown>; required?: string[] };
      const required = new Set(input.required ?? []);
      for (const r of rpc.required ?? []) assert.ok(required.has(r), `${t.name} requires ${r}, as ${t.method} does`);
      for (const r of required) assert.ok(r in input.properties, `${t.name} requires a param it lists: ${r}`);
      if (t.hints.readOnly) assert.equal(m.readOnly, true, `${t.name} says read-only, ${t.method} changes something`);
      if (!m.readOnly) assert.equal(t.hints.readOnly, false, `${t.name}: ${t.method} changes something`);
      assert.equal(t.output.type, "object", `${t.name}'s outputSchema is an object schema`);
    }
    assert.deepEqual(
      [...METHODS.values()].filter((m) => m.side === "agent" && !TOOLS.some((t) => t.method === m.name)).map((m) => m.name),
      [],
      "every agent-side method has a tool (in the all set)",
    );
  });

  test("the output validator rejects what does not match (so the per-tool checks can fail)", () => {
    const schema = listed(TOOLS.find((t) => t.name === "task_checkpoint")!, false).outputSchema;
    assert.throws(() => assertValid(schema, { text: "x", memory_id: 5, task: {} }, "a wrong type"), /memory_id|must be string/);
    assert.throws(() => assertValid(schema, { text: "x", task: {} }, "a missing field"), /memory_id/);
  });

  test("sets: default, research, all and comma lists select in catalogue order; unknown names are refused naming what exists", () => {
    const names = (spec?: string) => selectTools(spec).map((t) => t.name);
    assert.deepEqual(names(), names("default"));
    assert.equal(names("all").length, TOOLS.length);
    for (const n of names("default")) assert.ok(names("research").includes(n), `research includes ${n}`);
    assert.deepEqual(names("task_transition,default").slice(-1), ["memory_save"], "catalogue order, not argument order");
    assert.ok(names("default,task_transition").includes("task_transition"));
    assert.deepEqual(names("writes_require, memory_get"), ["writes_require", "memory_get"]);
    for (const bad of ["bogus", "default,bogus", "writes.require"]) {
      assert.throws(() => selectTools(bad), (e: unknown) => e instanceof ToolSetError && /sets are default, research, all; tools are task_status/.test((e as Error).message));
    }
  });

  test("no set and no tool name reaches a host-side method, --tools all included", () => {
    assert.ok(HOST_TOOLS.includes("writes_enable") && HOST_TOOLS.includes("turn_begin"));
    for (const spec of [...SET_NAMES, SET_NAMES.join(","), ...HOST_TOOLS, ...HOST_TOOLS.map((h) => `all,${h}`)]) {
      let tools: ReturnType<typeof selectTools> = [];
      try {
        tools = selectTools(spec);
      } catch (e) {
        assert.ok(e instanceof ToolSetError, spec);
        continue;
      }
      for (const t of tools) assert.equal(METHODS.get(t.method)!.side, "agent", `${spec}: ${t.name}`);
      for (const h of HOST_TOOLS) assert.equal(tools.some((t) => t.name === h), false, `${spec} offers ${h}`);
    }
  });

  test("the binary: --tools all offers no host tool and refuses to call one; a host tool or an unknown name as --tools stops the start", async () => {
    requireBinary();
    const root = tempDir();
    const mcp = await startMcp(root, ["--tools", "all"]);
    try {
      assert.equal(mcp.tools.size, TOOLS.length);
      for (const h of HOST_TOOLS) {
        assert.equal(mcp.tools.has(h), false, h);
        const r = await mcp.protocolError(h, { reason: "self-granted" });
        assert.equal(r.code, -32602, h);
      }
      for (const spec of ["writes_enable", "all,turn_begin", "bogus"]) {
        const r = await run([BINARY, "mcp", "--root", root, "--tools", spec]);
        assert.equal(r.code, 2, `${spec}: ${r.stderr}`);
        assert.equal(r.stdout, "");
        assert.match(r.stderr, /unknown tool set or tool .*sets are default, research, all; tools are task_status, /);
      }
      const misplaced = await run([BINARY, "serve", "--root", root, "--tools", "all"]);
      assert.equal(misplaced.code, 2);
      assert.match(misplaced.stderr, /--tools is an option of longrun mcp/);
    } finally {
      await mcp.close();
      removeDir(root);
    }
  });
});
