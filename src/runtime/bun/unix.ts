/**
 * One request and one answer over a unix socket, on Bun (`Bun.connect` / `Bun.listen`): the
 * resident gate's transport (src/hooks/gate_client.ts, src/hooks/gate_server.ts). A request is one
 * line of text, the answer one line; either side closes after it.
 */
import type { UnixListener, UnixServeOptions } from "../types.ts";

type Writable = { write(d: Uint8Array): number; flush(): void; end(): void };

/** Writes what the socket takes now and keeps the rest for its `drain`; `then` runs once all is written. */
class Outbox {
  #rest: Uint8Array = new Uint8Array(0);
  #then: (() => void) | null = null;
  send(s: Writable, text: string, then: (() => void) | null = null): void {
    this.#rest = new TextEncoder().encode(text);
    this.#then = then;
    this.drain(s);
  }
  drain(s: Writable): void {
    if (this.#rest.length === 0) return;
    const n = s.write(this.#rest);
    this.#rest = this.#rest.subarray(Math.max(0, n));
    s.flush();
    if (this.#rest.length === 0 && this.#then) this.#then();
  }
}

/**
 * Sends `line` (one line, no newline in it) to the socket at `path` and resolves with the answer's
 * line, or null when there is none within `timeoutMs` (no socket, refused, closed early, too long).
 */
export function unixRequest(path: string, line: string, timeoutMs: number, maxAnswerBytes: number): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (v: string | null, socket?: { end(): void }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket?.end();
      resolve(v);
    };
    const timer = setTimeout(() => finish(null, held ?? undefined), timeoutMs);
    let held: { end(): void } | null = null;
    const out = new Outbox();
    Bun.connect({
      unix: path,
      socket: {
        open(s) {
          held = s;
          out.send(s, line + "\n");
        },
        drain(s) {
          out.drain(s);
        },
        data(s, d) {
          size += d.length;
          if (size > maxAnswerBytes) return finish(null, s);
          chunks.push(d);
          const nl = d.indexOf(10);
          if (nl >= 0) {
            const all = Buffer.concat(chunks);
            finish(all.subarray(0, all.indexOf(10)).toString("utf8"), s);
          }
        },
        close() {
          finish(null);
        },
        error() {
          finish(null);
        },
        connectError() {
          finish(null);
        },
      },
    }).catch(() => finish(null));
  });
}

/**
 * Listens on `path` (which must not exist) and answers each connection's one line with
 * `o.answer(line)`; a connection that sends no full line within `o.readTimeoutMs`, or more than
 * `o.maxRequestBytes`, is closed unanswered.
 */
export function listenUnix(path: string, o: UnixServeOptions): UnixListener {
  type Conn = { chunks: Buffer[]; size: number; timer: ReturnType<typeof setTimeout> | null; answered: boolean; out: Outbox };
  const server = Bun.listen<Conn>({
    unix: path,
    socket: {
      open(s) {
        s.data = { chunks: [], size: 0, answered: false, out: new Outbox(), timer: setTimeout(() => s.end(), o.readTimeoutMs) };
      },
      data(s, d) {
        const c = s.data;
        if (c.answered) return;
        c.size += d.length;
        if (c.size > o.maxRequestBytes) {
          c.answered = true;
          s.end();
          return;
        }
        c.chunks.push(d);
        if (d.indexOf(10) < 0) return;
        c.answered = true;
        if (c.timer) clearTimeout(c.timer);
        const all = Buffer.concat(c.chunks);
        c.chunks = [];
        const line = all.subarray(0, all.indexOf(10)).toString("utf8");
        o.answer(line).then(
          (reply) => c.out.send(s, reply + "\n", () => s.end()),
          () => s.end(),
        );
      },
      drain(s) {
        s.data.out.drain(s);
      },
      close(s) {
        if (s.data?.timer) clearTimeout(s.data.timer);
      },
      error(s) {
        s.end();
      },
    },
  });
  return { stop: () => server.stop(true) };
}
