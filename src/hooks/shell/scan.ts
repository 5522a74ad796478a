/**
 * Lexical scans the lexer uses to find where a bracket expression, a `${…}` or a `$((…))` ends,
 * and to decode an ANSI-C string (`$'…'`).
 * A bracket scan is bounded (one per `[` would otherwise make `[[[[…` quadratic); the others run
 * once per nesting level, and the parser bounds nesting. Pure.
 */
import { ShellParseError } from "./nodes.ts";

/** Unquoted characters that end a word. */
export const META = new Set([" ", "\t", "\n", "|", "&", ";", "(", ")", "<", ">"]);
/** No real bracket expression is longer; a scan per `[` would otherwise make `[[[[…` quadratic. */
const MAX_BRACKET = 256;

/** The `]` closing a bracket expression that starts at `i`, within the same word; -1 if none. */
export function bracketEnd(s: string, i: number): number {
  let j = i + 1;
  if (s[j] === "!" || s[j] === "^") j++;
  if (s[j] === "]") j++;
  for (; j < s.length; j++) {
    // a scan per `[` would make `[[[[…` quadratic; no real bracket expression is this long
    if (j - i > MAX_BRACKET) throw new ShellParseError(`a [ followed by more than ${MAX_BRACKET} characters of one word is not checked`);
    const c = s[j]!;
    if (c === "]") return j;
    if (c === "\\") j++;
    else if (c === "[" && /[:=.]/.test(s[j + 1] ?? "")) {
      // a class [:alpha:], an equivalence class [=a=] or a collating symbol [.a.]: its own ] does not close
      const close = s.indexOf(s[j + 1]! + "]", j + 2);
      if (close < 0) return -1;
      j = close + 1;
    } else if (c === "'") {
      const e = s.indexOf("'", j + 1);
      if (e < 0) return -1;
      j = e;
    } else if (c === '"') {
      const e = s.indexOf('"', j + 1);
      if (e < 0) return -1;
      j = e;
    } else if (META.has(c)) return -1;
  }
  return -1;
}

export function braceEnd(s: string, i: number): number {
  let depth = 1;
  for (let j = i; j < s.length; j++) {
    const c = s[j]!;
    if (c === "\\") j++;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return j;
  }
  return -1;
}

/** The index of the `))` closing an arithmetic expansion whose body starts at `i`, or -1. */
export function arithEnd(s: string, i: number): number {
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    const c = s[j]!;
    if (c === "(") depth++;
    else if (c === ")") {
      if (depth === 0) return s[j + 1] === ")" ? j : -1;
      depth--;
    }
  }
  return -1;
}

/** `$'…'` decoded, `i` at its `$`; `end` is just after its closing quote. */
export function ansiC(s: string, at: number): { text: string; end: number } {
  let i = at + 2;
  let out = "";
  for (;;) {
    if (i >= s.length) throw new ShellParseError("an unterminated $'");
    const c = s[i]!;
    if (c === "'") break;
    if (c !== "\\") {
      out += c;
      i++;
      continue;
    }
    const n = s[i + 1] ?? "";
    const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", v: "\v", "\\": "\\", "'": "'", '"': '"', "?": "?" };
    if (Object.hasOwn(simple, n)) {
      out += simple[n];
      i += 2;
    } else if (n === "x") {
      const m = /^[0-9a-fA-F]{1,2}/.exec(s.slice(i + 2, i + 4));
      if (!m) throw new ShellParseError("a bad \\x escape");
      out += String.fromCharCode(parseInt(m[0], 16));
      i += 2 + m[0].length;
    } else if (n === "u" || n === "U") {
      const m = new RegExp(`^[0-9a-fA-F]{1,${n === "u" ? 4 : 8}}`).exec(s.slice(i + 2, i + 10));
      if (!m) throw new ShellParseError("a bad \\u escape");
      const cp = parseInt(m[0], 16);
      if (cp > 0x10ffff) throw new ShellParseError("a \\U escape out of range");
      out += String.fromCodePoint(cp);
      i += 2 + m[0].length;
    } else if (/[0-7]/.test(n)) {
      const m = /^[0-7]{1,3}/.exec(s.slice(i + 1, i + 4))!;
      out += String.fromCharCode(parseInt(m[0], 8) & 0xff);
      i += 1 + m[0].length;
    } else if (n === "c") {
      const ch = s[i + 2];
      if (ch === undefined) throw new ShellParseError("a bad \\c escape");
      out += String.fromCharCode(ch.toUpperCase().charCodeAt(0) ^ 0x40);
      i += 3;
    } else {
      out += "\\" + n;
      i += 2;
    }
  }
  return { text: out, end: i + 1 };
}
