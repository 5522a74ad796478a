/**
 * Live updates as server-sent events, for the status page and for the root's event log
 * (`GET /v1/events`, src/http/app.ts): each stream polls every few hundred milliseconds. The
 * page's stream reads the snapshot and sends it when it changed (another process, a
 * `longrun serve` on the same root, say, changes state this server is never told about). A
 * comment line keeps an idle stream alive; a stream ends after a while (the page reconnects), when
 * the page goes away, or when the server stops.
 */
import type { Side } from "../../rpc/method.ts";

/**
 * Bounds: streams open at once per side (the agent's streams never keep the host's page from its
 * own), how often an idle stream says it is alive, how long one lives.
 */
export const STREAM_LIMITS = { open_per_side: 16, keepalive_ms: 5_000, lifetime_ms: 10 * 60_000 } as const;

export class EventStreams {
  readonly #pollMs: number;
  readonly #open = new Map<() => void, Side>();

  constructor(pollMs: number) {
    this.#pollMs = pollMs;
  }

  /**
   * A `text/event-stream` response that sends what `next()` gives each time it is called (every
   * poll; "" when there is nothing new; `snapshots(read)` makes one for a whole state), or null
   * when too many streams of `side` are open.
   */
  open(signal: AbortSignal, side: Side, next: () => Promise<string>): Response | null {
    let mine = 0;
    for (const s of this.#open.values()) if (s === side) mine++;
    if (mine >= STREAM_LIMITS.open_per_side) return null;
    const encoder = new TextEncoder();
    let stop = () => {};
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        let done = false;
        let timer: ReturnType<typeof setTimeout> | undefined;
        let wrote = Date.now();
        const started = Date.now();
        stop = () => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          this.#open.delete(stop);
          signal.removeEventListener("abort", stop);
          try {
            controller.close();
          } catch {
            // already closed by the reader going away
          }
        };
        this.#open.set(stop, side);
        signal.addEventListener("abort", stop);
        const send = (text: string) => {
          controller.enqueue(encoder.encode(text));
          wrote = Date.now();
        };
        const tick = async () => {
          if (done) return;
          try {
            const frames = await next();
            if (done) return;
            if (frames) {
              send(frames);
            } else if (Date.now() - wrote >= STREAM_LIMITS.keepalive_ms) {
              send(": alive\n\n");
            }
          } catch {
            return stop(); // the reader is gone
          }
          if (Date.now() - started >= STREAM_LIMITS.lifetime_ms) return stop();
          timer = setTimeout(tick, this.#pollMs);
        };
        send("retry: 1000\n\n");
        void tick();
      },
      cancel: () => stop(),
    });
    return new Response(body, {
      status: 200,
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" },
    });
  }

  /** How many streams are open now. */
  get size(): number {
    return this.#open.size;
  }

  closeAll(): void {
    for (const stop of [...this.#open.keys()]) stop();
  }
}

/** `next` for `open`: `event: state` with `read()`'s JSON when it changed (`event: problem` when a read throws). */
export function snapshots(read: () => Promise<unknown>): () => Promise<string> {
  let last = "";
  return async () => {
    let frame: string;
    try {
      frame = `event: state\ndata: ${JSON.stringify(await read())}\n\n`;
    } catch (e) {
      frame = `event: problem\ndata: ${JSON.stringify({ message: e instanceof Error ? e.message : String(e) })}\n\n`;
    }
    if (frame === last) return "";
    last = frame;
    return frame;
  };
}
