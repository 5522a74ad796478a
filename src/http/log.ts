/**
 * The HTTP server's log on stderr: one line per request and one per event (start, stop, errors),
 * as text (`longrun: request method=POST path=/rpc …`, key=value pairs) or as JSON lines. Never a
 * token, a header or a body: a request line carries the method, the path (no query), the JSON-RPC
 * method (only names the server knows), the side, the status, the outcome, the duration and a hash
 * of the root.
 *
 * Request lines are buffered and written in batches (every 50 ms, or at 64 KiB), so the hot path
 * pays for building a string, not for a write; events flush the buffer and are written at once.
 */
import { createHash } from "node:crypto";

/**
 * Request lines waiting in the runtime's stderr stream beyond this many bytes (nobody reads
 * stderr, or too slowly) are dropped, and counted in a line written once the stream drains: the
 * server neither blocks on its log nor holds an unbounded backlog. Events are never dropped.
 */
export const MAX_BACKLOG_BYTES = 4 * 1024 * 1024;

/**
 * Characters handed to process.stderr and not written out yet. Counted here: Bun queues writes to
 * a pipe nobody reads without bound and reports no writableLength (Deno writes synchronously and
 * blocks instead); the write callback runs once the text is out.
 */
let pending = 0;
function writeStderr(text: string): void {
  const n = text.length;
  pending += n;
  process.stderr.write(text, () => void (pending -= n));
}

export type LogFormat = "text" | "json";
export const LOG_FORMATS: readonly LogFormat[] = ["text", "json"];

export interface RequestLine {
  method: string;
  path: string;
  /** The JSON-RPC method of a single call; `batch` for a batch; absent where none was made. */
  rpc?: string;
  /** Calls in a batch. */
  calls?: number;
  side?: string;
  status: number;
  /** "ok", or the error kind (the first one of a batch). */
  outcome: string;
  ms: number;
  /** When the request ended, as `performance.now()` (saves reading the clock again; default: now). */
  at?: number;
  /** A hash of the root's real path (see rootHash); absent when no root was touched or several were. */
  root?: string;
}

type Fields = Record<string, string | number | boolean | undefined | null>;

const BARE = /^[A-Za-z0-9._/:@+\-]+$/;
const FLUSH_BYTES = 64 * 1024;
const FLUSH_MS = 50;

const hashes = new Map<string, string>();
/** The first 12 hex digits of SHA-256 of a root's real path: the same root gives the same value, and the path is not written. */
export function rootHash(dir: string): string {
  let h = hashes.get(dir);
  if (h === undefined) {
    if (hashes.size >= 1024) hashes.clear();
    h = createHash("sha256").update(dir).digest("hex").slice(0, 12);
    hashes.set(dir, h);
  }
  return h;
}

/** A path as it may be logged: at most 128 characters (control characters are escaped by either format). */
export function logPath(path: string): string {
  return path.length > 128 ? path.slice(0, 128) + "…" : path;
}

export class Logger {
  readonly format: LogFormat;
  readonly #write: (text: string) => void;
  /** Lines waiting to be written, and their length in characters. */
  #lines: string[] = [];
  #size = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;

  readonly #backlog: () => number;
  /** Request lines dropped since the last write (see MAX_BACKLOG_BYTES). */
  #dropped = 0;

  /** `write` and `backlog` (bytes written but not yet out) default to the runtime's stderr stream. */
  constructor(
    format: LogFormat = "text",
    write: (text: string) => void = writeStderr,
    backlog: () => number = () => pending,
  ) {
    this.format = format;
    this.#write = write;
    this.#backlog = backlog;
  }

  /** One request (buffered). */
  request(r: RequestLine): void {
    const ts = now(r.at);
    const ms = millis(r.ms);
    let line: string;
    if (this.format === "json") {
      // by hand (every value but method and path is one the server chose): twice as fast as JSON.stringify
      line = `{"ts":"${ts}","level":"info","event":"request","method":${q(r.method)},"path":${q(r.path)}`;
      if (r.rpc !== undefined) line += `,"rpc":${q(r.rpc)}`;
      if (r.calls !== undefined) line += `,"calls":${r.calls}`;
      if (r.side !== undefined) line += `,"side":"${r.side}"`;
      line += `,"status":${r.status},"outcome":${q(r.outcome)},"ms":${ms}`;
      if (r.root !== undefined) line += `,"root":"${r.root}"`;
      line += "}";
    } else {
      line = `longrun: request ts=${ts} method=${v(r.method)} path=${r.path === "/rpc" ? r.path : v(r.path)}`;
      if (r.rpc !== undefined) line += ` rpc=${v(r.rpc)}`;
      if (r.calls !== undefined) line += ` calls=${r.calls}`;
      if (r.side !== undefined) line += ` side=${r.side}`;
      line += ` status=${r.status} outcome=${r.outcome === "ok" ? "ok" : v(r.outcome)} ms=${ms}`;
      if (r.root !== undefined) line += ` root=${r.root}`;
    }
    this.#lines.push(line);
    this.#size += line.length + 1;
    if (this.#size >= FLUSH_BYTES) this.flush();
    else if (this.#timer === null) {
      this.#timer = setTimeout(() => this.flush(), FLUSH_MS);
      (this.#timer as { unref?: () => void }).unref?.();
    }
  }

  /**
   * An event, written at once (after any buffered requests). In text format `text` is the line
   * (after `longrun: `) when given, else `event k=v …`; in JSON, `message` carries `text`.
   */
  event(level: "info" | "error", event: string, fields: Fields = {}, text?: string): void {
    let line: string;
    if (this.format === "json") {
      line = JSON.stringify({ ts: now(), level, event, ...(text !== undefined ? { message: text } : {}), ...fields });
    } else if (text !== undefined) {
      line = `longrun: ${text}`;
    } else {
      line = `longrun: ${level === "error" ? "error " : ""}${event}`;
      for (const [k, value] of Object.entries(fields)) if (value !== undefined && value !== null) line += ` ${k}=${v(String(value))}`;
    }
    if (this.#backlog() > MAX_BACKLOG_BYTES) this.#drop();
    this.#lines.push(line);
    this.flush(true);
  }

  /** Writes what is buffered (request lines are dropped while the stream's backlog is too long, unless `force`). */
  flush(force = false): void {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (this.#lines.length === 0) return;
    if (!force && this.#backlog() > MAX_BACKLOG_BYTES) return this.#drop();
    let text = this.#lines.join("\n") + "\n";
    if (this.#dropped > 0) {
      const n = this.#dropped;
      this.#dropped = 0;
      const note =
        this.format === "json"
          ? JSON.stringify({ ts: now(), level: "error", event: "log_dropped", message: `dropped ${n} request lines: stderr was not read fast enough`, lines: n })
          : `longrun: error log_dropped lines=${n}`;
      text = note + "\n" + text;
    }
    this.#lines = [];
    this.#size = 0;
    this.#write(text);
  }

  #drop(): void {
    this.#dropped += this.#lines.length;
    this.#lines = [];
    this.#size = 0;
  }
}

/** A text value: bare when safe, else JSON-quoted (which escapes quotes, newlines and control characters). */
function v(s: string): string {
  return BARE.test(s) ? s : JSON.stringify(s);
}

/** A JSON string: quoted as is when nothing needs escaping (the usual case), else by JSON.stringify. */
function q(s: string): string {
  return BARE.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** Milliseconds with three decimals, formatted with integer arithmetic (cheaper than a float's shortest form). */
function millis(ms: number): string {
  const us = Math.round(ms * 1000);
  const frac = us % 1000;
  return `${(us - frac) / 1000}.${frac < 10 ? "00" : frac < 100 ? "0" : ""}${frac}`;
}

let lastMs = 0;
let lastIso = "";
/** Wall clock minus the monotonic one, read again each second (so a clock step shows within a second). */
let offset = 0;
let offsetAt = -Infinity;
/**
 * The time as ISO 8601, from a `performance.now()` reading when given (reading a clock is not free
 * on every machine), formatted once per millisecond (a busy server logs several requests in one).
 */
function now(at?: number): string {
  if (at !== undefined && at - offsetAt > 1000) {
    offset = Date.now() - performance.now();
    offsetAt = at;
  }
  const t = at === undefined ? Date.now() : Math.floor(offset + at);
  if (t !== lastMs) {
    lastMs = t;
    lastIso = new Date(t).toISOString();
  }
  return lastIso;
}

/** One line of an error's message, at most 500 characters: for error logs, never a stack. */
export function oneLine(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  const line = m.replace(/\s*\n\s*/g, " ").trim();
  return line.length > 500 ? line.slice(0, 500) + "…" : line;
}
