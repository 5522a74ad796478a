/**
 * Newline-delimited framing for JSON-RPC over a byte stream: a pure, size-capped buffer.
 * Bytes go in as they arrive (a message may be split across reads, several may share one);
 * complete lines come out. CRLF is accepted, a final line without a newline is delivered at end
 * of input, blank lines are skipped, an over-long line is discarded up to its newline and
 * reported once (so the stream goes on), and a line that is not valid UTF-8 is reported as such.
 */

export type Frame =
  | { kind: "line"; text: string }
  | { kind: "too_long"; bytes: number; limit: number }
  | { kind: "bad_utf8" };

const NL = 0x0a;
const CR = 0x0d;

export class LineFramer {
  readonly #limit: number;
  #parts: Uint8Array[] = [];
  #size = 0;
  /** While discarding an over-long line: how many bytes it had so far. */
  #discarding: number | null = null;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });

  constructor(limitBytes: number) {
    this.#limit = limitBytes;
  }

  /** Feeds bytes; returns the frames they complete. */
  push(chunk: Uint8Array): Frame[] {
    const out: Frame[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NL, start);
      if (nl < 0) {
        this.#append(chunk.subarray(start));
        return out;
      }
      if (this.#size === 0 && this.#discarding === null) {
        // The common case: a whole line inside one chunk, decoded in place without copying.
        this.#emit(chunk.subarray(start, nl), out);
      } else {
        this.#append(chunk.subarray(start, nl));
        this.#finishLine(out);
      }
      start = nl + 1;
    }
  }

  /** End of input: a last line without a newline is still a line. */
  end(): Frame[] {
    const out: Frame[] = [];
    if (this.#size > 0 || this.#discarding !== null) this.#finishLine(out);
    return out;
  }

  #append(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.#discarding !== null) {
      this.#discarding += bytes.length;
      return;
    }
    // One byte of slack for a CR that belongs to a CRLF ending.
    if (this.#size + bytes.length > this.#limit + 1) {
      this.#discarding = this.#size + bytes.length;
      this.#parts = [];
      this.#size = 0;
      return;
    }
    this.#parts.push(bytes.slice());
    this.#size += bytes.length;
  }

  #finishLine(out: Frame[]): void {
    if (this.#discarding !== null) {
      out.push({ kind: "too_long", bytes: this.#discarding, limit: this.#limit });
      this.#discarding = null;
      return;
    }
    const line = concat(this.#parts, this.#size);
    this.#parts = [];
    this.#size = 0;
    this.#emit(line, out);
  }

  #emit(raw: Uint8Array, out: Frame[]): void {
    let line = raw;
    if (line.length && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
    if (line.length > this.#limit) {
      out.push({ kind: "too_long", bytes: line.length, limit: this.#limit });
      return;
    }
    let text: string;
    try {
      text = this.#decoder.decode(line);
    } catch {
      out.push({ kind: "bad_utf8" });
      return;
    }
    if (text.trim() === "") return;
    out.push({ kind: "line", text });
  }
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(size);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/**
 * The nesting depth of JSON text, counted without parsing (strings skipped), so a hostile
 * `[[[[…` is refused before `JSON.parse` could recurse on it. Stops counting past `stopAt`.
 */
export function jsonDepth(text: string, stopAt = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped char
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > stopAt) return max;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}
