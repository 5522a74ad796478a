/**
 * Lexical scans the parser uses to find where a bracket expression, a `${…}` or a `$((…))` ends.
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
