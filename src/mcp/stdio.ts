/**
 * MCP over stdio, one JSON-RPC message per line, where every line gets an answer or is a valid
 * message. The SDK's own stdio transport drops a line it cannot parse without a reply (and closes
 * the connection on a line over its buffer); this one answers -32700 for a line that is not JSON
 * (or not UTF-8), -32600 for JSON that is not a JSON-RPC message or is over the size limit, and
 * goes on reading. Framing is the protocol's size-capped `LineFramer`. At end of input it answers
 * the requests still in flight before it reports the connection closed (the SDK abandons requests
 * in flight at close), so `printf '…' | longrun mcp` gets every answer.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { LIMITS } from "../core/limits.ts";
import { type Frame, jsonDepth, LineFramer } from "../rpc/framing.ts";
import { INVALID_REQUEST, PARSE_ERROR } from "../rpc/errors.ts";

export interface ByteInput {
  on(event: "data", fn: (chunk: Uint8Array | string) => void): unknown;
  on(event: "end", fn: () => void): unknown;
  on(event: "error", fn: (e: Error) => void): unknown;
  // deno-lint-ignore no-explicit-any
  off(event: string, fn: (...args: any[]) => void): unknown;
  pause(): unknown;
}

export interface TextOutput {
  write(data: string, cb?: (err?: Error | null) => void): boolean;
}

type Id = string | number | null;

/** How long answers still in flight at end of input may take before the connection closes anyway. */
const DRAIN_MS = 30_000;

function idOf(value: unknown): Id {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)) ? id : null;
}

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #input: ByteInput;
  readonly #output: TextOutput;
  readonly #framer = new LineFramer(LIMITS.line_bytes);
  readonly #encoder = new TextEncoder();
  #closed = false;
  #ended = false;
  /** The last write's completion: close waits for it, so the last answer is out before the process exits. */
  #lastWrite: Promise<void> = Promise.resolve();
  /** Ids of requests received and not answered yet. */
  readonly #inFlight = new Set<string | number>();

  constructor(input: ByteInput, output: TextOutput) {
    this.#input = input;
    this.#output = output;
  }

  readonly #onData = (chunk: Uint8Array | string) => {
    this.#frames(this.#framer.push(typeof chunk === "string" ? this.#encoder.encode(chunk) : chunk));
  };
  readonly #onEnd = () => {
    this.#frames(this.#framer.end());
    this.#ended = true;
    if (this.#inFlight.size === 0) void this.close();
    else (setTimeout(() => void this.close(), DRAIN_MS) as { unref?: () => void }).unref?.();
  };
  readonly #onError = (e: Error) => this.onerror?.(e);

  async start(): Promise<void> {
    this.#input.on("data", this.#onData);
    this.#input.on("end", this.#onEnd);
    this.#input.on("error", this.#onError);
  }

  #frames(frames: Frame[]): void {
    for (const f of frames) {
      if (f.kind === "bad_utf8") this.#refuse(null, PARSE_ERROR, "Parse error: the line is not valid UTF-8; send one UTF-8 JSON-RPC message per line");
      else if (f.kind === "too_long") this.#refuse(null, INVALID_REQUEST, `Invalid Request: the line is ${f.bytes} bytes, the limit is ${f.limit}; it was discarded`);
      else this.#line(f.text);
    }
  }

  #line(text: string): void {
    if (jsonDepth(text, LIMITS.json_depth) > LIMITS.json_depth) {
      this.#refuse(null, INVALID_REQUEST, `Invalid Request: the message nests deeper than ${LIMITS.json_depth} levels`);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      this.#refuse(null, PARSE_ERROR, `Parse error: the line is not valid JSON (${(e as Error).message}); send one JSON-RPC message per line`);
      return;
    }
    if (Array.isArray(value)) {
      this.#refuse(null, INVALID_REQUEST, "Invalid Request: MCP has no batches; send one JSON-RPC message per line");
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      this.#refuse(
        idOf(value),
        INVALID_REQUEST,
        'Invalid Request: not a JSON-RPC 2.0 message; need "jsonrpc": "2.0", a string "method" (and a string or integer "id" for a request), or a response to one of ours',
      );
      return;
    }
    const message = parsed.data as { id?: string | number; method?: string; params?: { requestId?: string | number } };
    if (message.method !== undefined && message.id !== undefined) this.#inFlight.add(message.id);
    // a cancelled request gets no answer (the SDK stops its handler)
    if (message.method === "notifications/cancelled" && message.params?.requestId !== undefined) this.#answered(message.params.requestId);
    this.onmessage?.(parsed.data);
  }

  #answered(id: string | number): void {
    this.#inFlight.delete(id);
    if (this.#ended && this.#inFlight.size === 0) queueMicrotask(() => void this.close());
  }

  #refuse(id: Id, code: number, message: string): void {
    const kind = code === PARSE_ERROR ? "parse_error" : "invalid_request";
    // id null is JSON-RPC's answer to a message whose id could not be read; the SDK's type wants one
    void this.send({ jsonrpc: "2.0", id, error: { code, message, data: { kind } } } as unknown as JSONRPCMessage);
  }

  send(message: JSONRPCMessage): Promise<void> {
    const sent = new Promise<void>((resolve) => {
      this.#output.write(JSON.stringify(message) + "\n", () => resolve());
    });
    this.#lastWrite = sent;
    const m = message as { id?: string | number | null; method?: string };
    if (m.method === undefined && m.id !== undefined && m.id !== null) this.#answered(m.id);
    return sent;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#input.off("data", this.#onData);
    this.#input.off("end", this.#onEnd);
    this.#input.off("error", this.#onError);
    this.#input.pause();
    await this.#lastWrite;
    this.onclose?.();
  }
}
