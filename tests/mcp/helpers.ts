/** The MCP SDK's own client over a real `longrun mcp` child process, and a real JSON Schema validator for outputs. */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { REPO } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";

export interface Mcp {
  client: Client;
  tools: Map<string, Tool>;
  /** Calls a tool; a success is checked against the tool's outputSchema here (as well as by the SDK client). */
  call(name: string, args?: Record<string, unknown>): Promise<Result>;
  /** Calls a tool that must succeed; its structured content. */
  ok(name: string, args?: Record<string, unknown>): Promise<any>;
  /** Calls a tool that must be refused as a tool error; the text and the error details from `_meta`. */
  refused(name: string, args?: Record<string, unknown>): Promise<{ text: string; code: number; data: Record<string, any> }>;
  /** Calls a tool that must fail as a JSON-RPC error; its code and message. */
  protocolError(name: string, args?: unknown): Promise<{ code: number; message: string }>;
  close(): Promise<void>;
}

export type Result = CallToolResult & { structuredContent?: any };

const validator = new AjvJsonSchemaValidator();

/** Asserts that `value` validates against `schema` (a real JSON Schema validator: Ajv). */
export function assertValid(schema: Record<string, unknown>, value: unknown, what: string): void {
  const check = validator.getValidator(schema as never)(value);
  assert.ok(check.valid, `${what}: ${check.valid ? "" : check.errorMessage}\n${JSON.stringify(value).slice(0, 600)}`);
}

/** `longrun mcp --root ROOT …args` (the compiled binary) with the SDK client connected to it. */
export async function startMcp(root: string, args: string[] = []): Promise<Mcp> {
  requireBinary();
  const client = new Client({ name: "longrun-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: BINARY, args: ["mcp", "--root", root, ...args], cwd: REPO, stderr: "pipe" }));
  const tools = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = (await client.callTool({ name, arguments: args })) as Result;
    const tool = tools.get(name);
    if (!r.isError && tool?.outputSchema) assertValid(tool.outputSchema, r.structuredContent, `${name}'s structured content against its outputSchema`);
    return r;
  };
  return {
    client,
    tools,
    call,
    async ok(name, args) {
      const r = await call(name, args);
      assert.notEqual(r.isError, true, `${name} failed: ${JSON.stringify(r.content)}`);
      assert.deepEqual(JSON.parse((r.content[0] as { text: string }).text), r.structuredContent, `${name}: the text block is the structured content as JSON`);
      return r.structuredContent;
    },
    async refused(name, args) {
      const r = await call(name, args);
      assert.equal(r.isError, true, `${name} was expected to be refused: ${JSON.stringify(r.structuredContent)}`);
      assert.equal(r.structuredContent, undefined, "a refusal has no structured content (it would not match the outputSchema)");
      const meta = (r._meta as Record<string, any> | undefined)?.["longrun/error"];
      assert.ok(meta, "a refusal carries its details in _meta[\"longrun/error\"]");
      const text = (r.content[0] as { text: string }).text;
      assert.equal(meta.message, text);
      return { text, code: meta.code, data: meta.data };
    },
    async protocolError(name, args) {
      try {
        const r = await client.callTool({ name, arguments: args as Record<string, unknown> });
        assert.fail(`${name} was expected to fail as a JSON-RPC error, got ${JSON.stringify(r)}`);
      } catch (e) {
        const err = e as { code?: number; message: string };
        if (typeof err.code !== "number") throw e;
        return { code: err.code, message: err.message };
      }
    },
    async close() {
      await client.close();
    },
  };
}

/** JSON-RPC method names (`task.start`), which an MCP agent cannot call: none may appear in what it reads. */
export const RPC_METHOD_NAME = /\b(task|writes|turn|memory|run|receipt|budget|adjust|artifact|context|system)\.(?!db\b)[a-z_]+\b/;
