/**
 * A scripted Anthropic Messages API on 127.0.0.1, for driving the real Claude Code CLI in tests.
 *
 * The "model" is a script: a list of steps, each one model turn, either tool calls or final text.
 * The server decides which step to answer from the conversation it is sent, not from how many
 * requests came: every tool_use id it hands out names the step (`toolu_lr<run>s<step>c<i>`), and the
 * next step is the one after the highest step whose tool_result the conversation carries (or has
 * carried: a compaction does not send the script back). A
 * client that retries, or sends the same conversation twice, gets the same answer again; tool
 * results from an earlier turn of a continued conversation (another server, another run id) do
 * not count. After the last step the model says DONE_TEXT and ends the turn.
 *
 * Requests that are not the main loop (no `tools` in the body: title, summary, topic and other
 * helper requests) get a short text answer; a compaction's summary request (it carries the tools,
 * and ends with the client's "create a detailed summary" instruction) gets COMPACT_SUMMARY and
 * takes no step; `POST /v1/messages/count_tokens` gets a count. Every
 * request is recorded (method, path, body), and every tool_result the model receives is kept once,
 * in order, with the call it answers.
 *
 * node:http only, so it runs under the Bun and the Deno test runners alike.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ToolCall {
  tool: string;
  input: Record<string, unknown>;
}
/** One model turn: one tool call, several (sent in one message), or final text. */
export type Step = ToolCall | ToolCall[] | { text: string };

export interface RecordedRequest {
  method: string;
  path: string;
  body: Record<string, unknown> | null;
  /** The main loop (the body has tools), a compaction (the summary request), a helper request, token counting, or anything else. */
  kind: "main" | "compact" | "side" | "count_tokens" | "other";
  /** For main requests: the step answered (steps.length when the script was done). */
  step?: number;
}

export interface ToolResult {
  tool_use_id: string;
  /** The call this result answers, as the script made it. */
  tool: string;
  input: Record<string, unknown>;
  step: number;
  /** The call's place in its step (0 for a single call). */
  call: number;
  /** The result's text (text blocks joined with newlines; other blocks as JSON). */
  content: string;
  is_error: boolean;
}

export const DONE_TEXT = "Done (the script has no more steps).";
export const SIDE_TEXT = "Scripted answer";
export const COMPACT_SUMMARY = "The user and the assistant ran a scripted conversation.";

/** Whether the last user message is Claude Code's compaction instruction. */
export function isCompaction(body: Record<string, unknown>): boolean {
  const messages = Array.isArray(body.messages) ? (body.messages as Message[]) : [];
  const last = messages.at(-1);
  if (!last || last.role !== "user") return false;
  const text = typeof last.content === "string" ? last.content : blocksOf(last).map((b) => (typeof b.text === "string" ? b.text : "")).join("\n");
  return /create a detailed summary of the conversation/i.test(text) && /<summary>/.test(text);
}

type Block = Record<string, unknown>;
type Message = { role?: string; content?: unknown };

function blocksOf(m: Message): Block[] {
  return Array.isArray(m.content) ? (m.content as Block[]).filter((b) => b && typeof b === "object") : [];
}

export function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined ? "" : JSON.stringify(content);
  return content.map((b: Block) => (b?.type === "text" && typeof b.text === "string" ? b.text : JSON.stringify(b))).join("\n");
}

export class MessagesServer {
  readonly requests: RecordedRequest[] = [];
  readonly toolResults: ToolResult[] = [];
  readonly #seen = new Set<string>();
  readonly #calls = new Map<string, { tool: string; input: Record<string, unknown>; step: number; call: number }>();
  readonly #run = Math.random().toString(36).slice(2, 10);
  #server: Server | null = null;
  #progress = 0;
  port = 0;

  constructor(
    readonly steps: Step[],
    /** Answers a helper request (one without tools); default SIDE_TEXT. */
    readonly sideAnswer: (body: Record<string, unknown>) => string = () => SIDE_TEXT,
    /** The input_tokens each main-loop answer reports (a large number makes the client compact automatically). */
    readonly inputTokens = 10,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The main-loop requests' bodies, in order. */
  get mainRequests(): Record<string, unknown>[] {
    return this.requests.filter((r) => r.kind === "main").map((r) => r.body!);
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      this.#handle(req, res).catch((e) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: String(e) } }));
      });
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    const s = this.#server;
    this.#server = null;
    if (!s) return;
    (s as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    let body: Record<string, unknown> | null = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = null;
    }
    const path = (req.url ?? "/").split("?")[0]!;
    const method = req.method ?? "GET";
    if (method === "POST" && path === "/v1/messages/count_tokens") {
      this.requests.push({ method, path, body, kind: "count_tokens" });
      return json(res, 200, { input_tokens: Math.max(1, Math.ceil(raw.length / 4)) });
    }
    if (method === "POST" && path === "/v1/messages" && body) {
      const tools = Array.isArray(body.tools) ? body.tools : [];
      if (tools.length === 0) {
        this.requests.push({ method, path, body, kind: "side" });
        return this.#answer(res, body, [{ type: "text", text: this.sideAnswer(body) }], "end_turn");
      }
      const step = this.#collect(body);
      if (isCompaction(body)) {
        this.requests.push({ method, path, body, kind: "compact" });
        return this.#answer(res, body, [{ type: "text", text: `<analysis>scripted</analysis>\n<summary>${COMPACT_SUMMARY}</summary>` }], "end_turn");
      }
      this.requests.push({ method, path, body, kind: "main", step });
      const s = this.steps[step];
      if (s === undefined) return this.#answer(res, body, [{ type: "text", text: DONE_TEXT }], "end_turn");
      if (!Array.isArray(s) && "text" in s) return this.#answer(res, body, [{ type: "text", text: s.text }], "end_turn");
      const calls = Array.isArray(s) ? s : [s];
      const blocks = calls.map((c, i) => {
        const id = `toolu_lr${this.#run}s${step}c${i}`;
        this.#calls.set(id, { tool: c.tool, input: c.input, step, call: i });
        return { type: "tool_use", id, name: c.tool, input: c.input };
      });
      return this.#answer(res, body, blocks, "tool_use");
    }
    this.requests.push({ method, path, body, kind: "other" });
    json(res, 404, { type: "error", error: { type: "not_found_error", message: `scripted server: no route ${method} ${path}` } });
  }

  /**
   * Keeps the new tool_results of this run, and returns the step to answer: the one after the
   * highest step answered in this conversation or, after a compaction took the results out of
   * it, before (the script never goes back).
   */
  #collect(body: Record<string, unknown>): number {
    const messages = Array.isArray(body.messages) ? (body.messages as Message[]) : [];
    let next = this.#progress;
    for (const m of messages) {
      if (m.role !== "user") continue;
      for (const b of blocksOf(m)) {
        if (b.type !== "tool_result" || typeof b.tool_use_id !== "string") continue;
        const call = this.#calls.get(b.tool_use_id);
        if (!call) continue; // not this run's (an earlier turn, or a call the script did not make)
        next = Math.max(next, call.step + 1);
        if (this.#seen.has(b.tool_use_id)) continue;
        this.#seen.add(b.tool_use_id);
        this.toolResults.push({ tool_use_id: b.tool_use_id, tool: call.tool, input: call.input, step: call.step, call: call.call, content: resultText(b.content), is_error: b.is_error === true });
      }
    }
    this.#progress = next;
    return next;
  }

  #answer(res: ServerResponse, body: Record<string, unknown>, content: Block[], stopReason: string): void {
    const model = typeof body.model === "string" ? body.model : "claude-scripted";
    const id = `msg_lr${this.#run}${this.requests.length}`;
    const main = this.requests.at(-1)?.kind === "main";
    const usage = { input_tokens: main ? this.inputTokens : 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    if (body.stream !== true) {
      return json(res, 200, { id, type: "message", role: "assistant", model, content, stop_reason: stopReason, stop_sequence: null, usage });
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "request-id": `req_${id}` });
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...(data as object) })}\n\n`);
    send("message_start", { message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
    content.forEach((b, index) => {
      if (b.type === "text") {
        send("content_block_start", { index, content_block: { type: "text", text: "" } });
        send("content_block_delta", { index, delta: { type: "text_delta", text: b.text } });
      } else {
        send("content_block_start", { index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } });
        const js = JSON.stringify(b.input);
        const cut = Math.floor(js.length / 2); // two deltas: the client must join partial JSON
        send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: js.slice(0, cut) } });
        send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: js.slice(cut) } });
      }
      send("content_block_stop", { index });
    });
    send("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
    send("message_stop", {});
    res.end();
  }
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}
