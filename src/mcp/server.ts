/**
 * longrun as an MCP server, built on the official SDK: the agent-side methods as tools (names
 * with `_` for `.`, since tool names may not contain dots), JSON Schemas from the same valibot
 * schemas, honest annotations, results as structured content. Host-side methods are not offered
 * at all: an agent reaching longrun over MCP can ask for a lease (writes_request), never grant one.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { toJsonSchema } from "@valibot/to-json-schema";
import type { Dispatcher } from "../rpc/dispatcher.ts";
import type { Caller, Method } from "../rpc/method.ts";
import { VERSION } from "../version.ts";

export function toolName(method: string): string {
  return method.replace(/\./g, "_");
}

export interface McpOptions {
  dispatcher: Dispatcher;
  caller: Caller;
}

interface Tool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: Record<string, unknown>;
  method: string;
}

function toolsOf(methods: Method[]): Tool[] {
  return methods
    .filter((m) => m.side === "agent")
    .map((m) => ({
      name: toolName(m.name),
      method: m.name,
      description: `${m.summary} (longrun ${m.name})`,
      inputSchema: toJsonSchema(m.params, { errorMode: "ignore" }) as Record<string, unknown>,
      annotations: {
        title: m.name,
        readOnlyHint: m.readOnly,
        destructiveHint: false,
        idempotentHint: m.readOnly,
        openWorldHint: false,
      },
    }));
}

/** A new MCP server over the dispatcher (connect it to a transport to use it). */
export function createMcpServer(options: McpOptions): Server {
  const tools = toolsOf(options.dispatcher.methods());
  const byName = new Map(tools.map((t) => [t.name, t]));
  const server = new Server(
    { name: "longrun", version: VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        "longrun keeps a task's state, a single-turn write lease and project memory. Call writes_require " +
        "before every write; if it is refused, ask the user, or call writes_request (a request, never a grant).",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map(({ method: _m, ...t }) => t),
  }));
  let next = 1;
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const tool = byName.get(req.params.name);
    if (!tool) {
      return {
        isError: true,
        content: [{ type: "text" as const, text: `Unknown tool ${JSON.stringify(req.params.name)}; tools/list shows what exists` }],
      };
    }
    const answer = await options.dispatcher.handleMessage(
      { jsonrpc: "2.0", id: next++, method: tool.method, params: req.params.arguments ?? {} },
      options.caller,
    );
    const one = answer as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };
    if (one.error) {
      return {
        isError: true,
        content: [{ type: "text" as const, text: one.error.message }],
        structuredContent: { error: one.error },
      };
    }
    const result = (one.result ?? {}) as Record<string, unknown>;
    return { content: [{ type: "text" as const, text: JSON.stringify(result) }], structuredContent: result };
  });
  return server;
}
