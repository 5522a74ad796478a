/**
 * `longrun serve`: JSON-RPC 2.0 over stdin/stdout, one message per line. Requests are handled as
 * they arrive (a slow memory search never holds up a gate check); calls that touch one root's
 * state run in arrival order. stdout carries protocol only. At end of input, or on SIGTERM, it
 * stops reading, lets in-flight requests finish and answer, then returns.
 */
import { LimitExceededError } from "../core/errors.ts";
import { LIMITS } from "../core/limits.ts";
import type { Dispatcher } from "../rpc/dispatcher.ts";
import { errorResponse } from "../rpc/dispatcher.ts";
import { PARSE_ERROR, toErrorObject } from "../rpc/errors.ts";
import { LineFramer } from "../rpc/framing.ts";
import type { Caller } from "../rpc/method.ts";

export interface ByteSource {
  on(event: "data", fn: (chunk: Uint8Array | string) => void): unknown;
  on(event: "end", fn: () => void): unknown;
  on(event: "error", fn: (e: Error) => void): unknown;
  pause(): unknown;
}

export interface LineSink {
  write(data: string, cb?: (err?: Error | null) => void): boolean;
}

export interface StdioServerOptions {
  dispatcher: Dispatcher;
  input: ByteSource;
  output: LineSink;
  caller?: Caller;
  log?: (line: string) => void;
  /** Aborted to stop reading early (SIGTERM): in-flight requests still finish and answer. */
  stop?: AbortSignal;
}

export async function serveStdio(options: StdioServerOptions): Promise<void> {
  const { dispatcher, input, output } = options;
  const caller = options.caller ?? { side: "host", via: "stdio" };
  const log = options.log ?? (() => {});
  const framer = new LineFramer(LIMITS.line_bytes);
  const inFlight = new Set<Promise<void>>();
  let lastWrite: Promise<void> = Promise.resolve();

  // Writes go out at once (the stream keeps their order); the last one's callback tells when all are flushed.
  const send = (text: string) => {
    lastWrite = new Promise<void>((resolve) => output.write(text + "\n", () => resolve()));
  };

  const handle = (line: string) => {
    const p: Promise<void> = dispatcher.handleText(line, caller).then(
      (answer) => {
        inFlight.delete(p);
        if (answer !== null) send(answer);
      },
      (e) => {
        inFlight.delete(p);
        log(`longrun: unexpected dispatcher failure: ${(e as Error).stack ?? e}`);
      },
    );
    inFlight.add(p);
  };

  const feed = (frames: ReturnType<LineFramer["push"]>) => {
    for (const f of frames) {
      if (f.kind === "line") handle(f.text);
      else if (f.kind === "too_long") {
        send(JSON.stringify(errorResponse(null, toErrorObject(new LimitExceededError("line", f.limit, f.bytes, "bytes")))));
      } else {
        send(JSON.stringify(errorResponse(null, {
          code: PARSE_ERROR,
          message: "Parse error: the line is not valid UTF-8; send UTF-8 encoded JSON",
          data: { kind: "parse_error" },
        })));
      }
    }
  };

  const encoder = new TextEncoder();
  await new Promise<void>((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      feed(framer.end());
      resolve();
    };
    input.on("data", (chunk) => {
      if (!done) feed(framer.push(typeof chunk === "string" ? encoder.encode(chunk) : chunk));
    });
    input.on("end", finish);
    input.on("error", (e) => {
      log(`longrun: input error: ${e.message}`);
      finish();
    });
    const onStop = () => {
      input.pause();
      finish();
    };
    if (options.stop?.aborted) onStop();
    else options.stop?.addEventListener("abort", onStop, { once: true });
  });
  while (inFlight.size) await Promise.all([...inFlight]);
  await lastWrite;
}
