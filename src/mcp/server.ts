/**
 * longrun as an MCP server, built on the official SDK: a chosen set of tools written for the
 * model (src/mcp/tools_*.ts), each calling one agent-side protocol method through the shared
 * dispatcher; the current task and its last checkpoint as resources; a "resume this task"
 * prompt. Host-side methods are in no tool table: an agent reaching longrun over MCP can ask for
 * a write approval (writes_request), never grant one.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  RequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Dispatcher } from "../rpc/dispatcher.ts";
import type { ErrorObject } from "../rpc/errors.ts";
import type { Caller } from "../rpc/method.ts";
import { readersFor } from "../rpc/readers.ts";
import { VERSION } from "../version.ts";
import { checkArguments, McpProtocolError, rewriteInvalidParams } from "./args.ts";
import { type Call, getPrompt, PROMPTS, readResource, RESOURCES } from "./resources.ts";
import { askToApprove, mcpMessage, reword, type Wording } from "./errors.ts";
import type { ToolDef } from "./tool_def.ts";
import { listed, selectTools, TOOLS } from "./tool_sets.ts";

export interface McpOptions {
  dispatcher: Dispatcher;
  caller: Caller;
  /** The tools to offer (`selectTools(…)`); default: the default set. */
  tools?: ToolDef[];
  /**
   * The server answers for several roots: every tool takes a `root` argument. Otherwise every
   * call goes to the dispatcher's default root and no tool has one.
   */
  severalRoots?: boolean;
}

/** The key of the error details (code, kind, fields) in a refused call's `_meta`. */
export const ERROR_META = "longrun/error";

/**
 * tools/call with `params` unchecked by the SDK: its own check answers a malformed `arguments`
 * with a dump of schema issues; ours answers -32602 with one sentence (src/mcp/args.ts).
 */
const LooseCallToolRequest = RequestSchema.extend({ method: CallToolRequestSchema.shape.method });

/** What the client puts in front of the model once (initialize): the workflow, by the tools offered. */
function instructions(w: Wording): string {
  const has = (t: string) => w.offered.has(t);
  return [
    "longrun keeps this project's task, the user's approval to make changes, and project memory across sessions.",
    has("task_status") && "Start with task_status; for new work call task_start with the user's request, after a break task_resume.",
    has("writes_require") && `Before every change call writes_require; if it refuses, do not make the change: ${askToApprove(w)}.`,
    has("memory_search") && "Search memory_search before investigating again and keep findings with memory_save.",
    has("task_checkpoint") && "Call task_checkpoint before you stop or when the context grows long, and task_finish when the work is done.",
    has("run_start") &&
      "For a long research run: run_start; receipt_begin before each tool call and receipt_settle after; budget_charge what it cost; artifact_put each deliverable; run_finish at the end.",
  ]
    .filter(Boolean)
    .join(" ");
}

function unknownTool(name: string, offered: ReadonlySet<string>): McpProtocolError {
  const known = TOOLS.some((t) => t.name === name);
  const message = known
    ? `Tool ${JSON.stringify(name)} is not offered by this server; the user can add it by starting longrun mcp with --tools research, --tools all or --tools ${name}`
    : `Unknown tool ${JSON.stringify(name)}; this server offers ${[...offered].join(", ")}`;
  return new McpProtocolError(-32602, message, { kind: "invalid_params", tool: name });
}

/** A new MCP server over the dispatcher (connect it to a transport to use it). */
export function createMcpServer(options: McpOptions): Server {
  const tools = options.tools ?? selectTools();
  const sides = new Map(options.dispatcher.methods().map((m) => [m.name, m.side]));
  for (const t of tools) {
    // the tables hold agent-side methods only; this keeps it so whatever a table says
    if (sides.get(t.method) !== "agent") throw new Error(`MCP tool ${t.name} maps to ${t.method}, which is not an agent-side method`);
  }
  const severalRoots = options.severalRoots === true;
  const byName = new Map(tools.map((t) => [t.name, t]));
  const list = tools.map((t) => listed(t, severalRoots));
  const offered = new Set(byName.keys());
  // read again for each refusal: the project's language and grant path may change while the server runs
  const wordingFor = (root: unknown): Wording => ({ offered, ...readersFor(options.dispatcher.roots, typeof root === "string" ? root : undefined) });
  const wording = (): Wording => wordingFor(undefined);

  let next = 1;
  const call: Call = async (method, params = {}) =>
    (await options.dispatcher.handleMessage({ jsonrpc: "2.0", id: next++, method, params }, options.caller)) as {
      result?: Record<string, unknown>;
      error?: ErrorObject;
    };

  const server = new Server(
    { name: "longrun", title: "longrun", version: VERSION },
    { capabilities: { tools: {}, resources: {}, prompts: {} }, instructions: instructions({ ...wording(), lang: "en" }) },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: list }));
  Protocol.prototype.setRequestHandler.call(server, LooseCallToolRequest as never, (async (request: { params?: Record<string, unknown> }) => {
    const params = request.params ?? {};
    if (typeof params.name !== "string") {
      throw new McpProtocolError(-32602, 'Invalid params: tools/call needs "name", the tool to call (tools/list shows them)', { kind: "invalid_params" });
    }
    const tool = byName.get(params.name);
    if (!tool) throw unknownTool(params.name, offered);
    const names = severalRoots ? [...Object.keys(tool.input.schema.entries), "root"] : Object.keys(tool.input.schema.entries);
    const args = checkArguments(tool.name, params.arguments, names);
    const answer = await call(tool.method, args);
    if (answer.error) {
      const w = wordingFor(args.root);
      if (answer.error.data?.kind === "invalid_params") throw rewriteInvalidParams(tool.name, { ...answer.error, message: reword(answer.error.message, { ...w, lang: "en" }) });
      const text = mcpMessage(answer.error, w);
      return {
        isError: true,
        content: [{ type: "text", text }],
        _meta: { [ERROR_META]: { code: answer.error.code, message: text, data: answer.error.data ?? {} } },
      };
    }
    const result = answer.result ?? {};
    return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
  }) as never);
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => readResource(req.params.uri, call, wording()));
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, (req) => getPrompt(req.params.name, call, wording()));
  return server;
}
