/**
 * The shell reader's lexer: tokens (words, operators, redirections) with each word split into its
 * parts: quotes, escapes, ANSI-C strings, expansions, substitutions, globs and tildes, and heredoc
 * bodies read after their line. A substitution's commands are read by the parser one level deeper
 * (`deeper`), so the lexer knows no grammar. Pure.
 */
import { literalOf, mergeScripts, type Part, type Redirect, type Script, ShellParseError, type Word } from "./nodes.ts";
import { ansiC, arithEnd, braceEnd, bracketEnd, META } from "./scan.ts";

/** Substitutions nested deeper than this are refused unread. */
const MAX_DEPTH = 16;

const SPECIAL_PARAMS = new Set(["?", "#", "$", "!", "-", "@", "*", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "_"]);

/** One token: a word, a control operator (newline included) or a redirection operator. */
export type Tok =
  | { k: "word"; w: Word }
  | { k: "op"; v: string }
  | { k: "redir"; op: string; fd: string | null };

export abstract class Lexer {
  i = 0;
  readonly s: string;
  readonly depth: number;
  /** Heredocs whose bodies start after the next newline. */
  pending: Redirect[] = [];

  constructor(s: string, depth: number, start = 0) {
    if (depth > MAX_DEPTH) throw new ShellParseError("substitutions nested too deeply");
    this.s = s;
    this.depth = depth;
    this.i = start;
  }

  /** Reads commands until the end, or until an unmatched `close` (for `$(…)` bodies). */
  abstract script(close: ")" | null): Script;

  /** A reader of `s` from `start`, one substitution deeper (the parser makes one of its own kind). */
  protected abstract deeper(s: string, start?: number): Lexer;

  /** The next token, or null at the end (or, inside `$(…)`, at its closing paren). */
  token(stopAtClose: boolean): Tok | null {
    const s = this.s;
    for (;;) {
      while (this.i < s.length && (s[this.i] === " " || s[this.i] === "\t")) this.i++;
      if (s.startsWith("\\\n", this.i)) {
        this.i += 2;
        continue;
      }
      if (s[this.i] === "#") {
        while (this.i < s.length && s[this.i] !== "\n") this.i++;
        continue;
      }
      break;
    }
    if (this.i >= s.length) return null;
    const c = s[this.i]!;
    if (c === ")" && stopAtClose) return { k: "op", v: ")" }; // not consumed: the caller closes
    // process substitution: <(…) and >(…) are words
    if ((c === "<" || c === ">") && s[this.i + 1] === "(") return { k: "word", w: this.word() };
    // a file descriptor number right before a redirection: 2>x, 2>&1, {fd}>x is refused
    const fdm = /^(\d+)(?=[<>])/.exec(s.slice(this.i, this.i + 12));
    if (fdm) {
      this.i += fdm[1]!.length;
      return { k: "redir", op: this.redirOp(), fd: fdm[1]! };
    }
    if (c === "<" || c === ">") return { k: "redir", op: this.redirOp(), fd: null };
    if (c === "&" && s[this.i + 1] === ">") {
      this.i++;
      const rest = this.redirOp();
      return { k: "redir", op: "&" + rest, fd: null };
    }
    for (const op of [";;&", ";;", ";&", "&&", "||", "|&", "|", "&", ";", "(", ")", "\n"]) {
      if (s.startsWith(op, this.i)) {
        this.i += op.length;
        return { k: "op", v: op };
      }
    }
    return { k: "word", w: this.word() };
  }

  redirOp(): string {
    const s = this.s;
    for (const op of ["<<<", "<<-", "<<", "<>", "<&", ">>", ">&", ">|", "<", ">"]) {
      if (s.startsWith(op, this.i)) {
        this.i += op.length;
        return op;
      }
    }
    throw new ShellParseError(`unreadable redirection at offset ${this.i}`);
  }

  wordAfter(op: string): Word {
    while (this.i < this.s.length && (this.s[this.i] === " " || this.s[this.i] === "\t")) this.i++;
    const c = this.s[this.i];
    if (c === undefined || META.has(c)) throw new ShellParseError(`${op} needs a target`);
    return this.word();
  }

  /** One word, up to an unquoted metacharacter. */
  word(): Word {
    const s = this.s;
    const start = this.i;
    const parts: Part[] = [];
    const lit = (v: string, q: boolean) => {
      const last = parts.at(-1);
      if (last?.t === "lit" && last.q === q) last.v += v;
      else parts.push({ t: "lit", v, q });
    };
    while (this.i < s.length) {
      const c = s[this.i]!;
      if ((c === "<" || c === ">") && s[this.i + 1] === "(" && this.i === start) {
        this.i += 2;
        parts.push(this.subUntilParen(start));
        continue;
      }
      if (META.has(c)) break;
      if (c === "\\") {
        const n = s[this.i + 1];
        if (n === undefined) {
          this.i++;
          break;
        }
        this.i += 2;
        if (n !== "\n") lit(n, true);
        continue;
      }
      if (c === "'") {
        const end = s.indexOf("'", this.i + 1);
        if (end < 0) throw new ShellParseError("an unterminated single quote");
        lit(s.slice(this.i + 1, end), true);
        this.i = end + 1;
        continue;
      }
      if (c === '"') {
        this.i++;
        this.doubleQuoted(parts, lit);
        continue;
      }
      if (c === "$") {
        if (s[this.i + 1] === "'") {
          const a = ansiC(s, this.i);
          this.i = a.end;
          lit(a.text, true);
          continue;
        }
        if (s[this.i + 1] === '"') {
          this.i += 2;
          this.doubleQuoted(parts, lit);
          continue;
        }
        this.expansion(parts, lit, false);
        continue;
      }
      if (c === "`") {
        parts.push(this.backtick());
        continue;
      }
      if (c === "~" && this.i === start) {
        const m = /^~([+-]\d*|[A-Za-z0-9._-]*)/.exec(s.slice(this.i, this.i + 64))!;
        const after = s[this.i + m[0].length];
        if (after === undefined || after === "/" || META.has(after)) {
          parts.push({ t: "tilde", user: m[1]! });
          this.i += m[0].length;
          continue;
        }
      }
      if ((c === "@" || c === "!" || c === "+" || c === "*" || c === "?") && s[this.i + 1] === "(") {
        throw new ShellParseError(`an extended glob ${c}( is not checked`);
      }
      if (c === "*" || c === "?") {
        parts.push({ t: "glob", v: c });
        this.i++;
        continue;
      }
      if (c === "[") {
        const end = bracketEnd(s, this.i);
        if (end > 0) {
          const body = s.slice(this.i, end + 1);
          // bash expands `$(…)` and backticks inside a bracket before it globs: not read here
          if (/[$`]/.test(body)) throw new ShellParseError("an expansion inside a bracket expression is not checked");
          // quotes, escapes or character classes inside still leave it one character (`.l['o']ngrun`, `[[:alpha:]]`)
          parts.push({ t: "glob", v: /['"\\]|\[[:=.]/.test(body) ? "[?]" : body });
          this.i = end + 1;
          continue;
        }
      }
      lit(c, false);
      this.i++;
    }
    if (this.i === start) throw new ShellParseError(`expected a word at offset ${start}`);
    return { parts, raw: s.slice(start, this.i) };
  }

  /** The inside of "…" (or, with `untilEnd`, of a heredoc body, where `"` is plain text). */
  doubleQuoted(parts: Part[], lit: (v: string, q: boolean) => void, untilEnd = false): void {
    const s = this.s;
    for (;;) {
      if (this.i >= s.length) {
        if (untilEnd) return;
        throw new ShellParseError("an unterminated double quote");
      }
      const c = s[this.i]!;
      if (c === '"' && !untilEnd) {
        this.i++;
        lit("", true); // "" is an empty quoted word, not nothing
        return;
      }
      if (c === "\\") {
        const n = s[this.i + 1];
        if (n !== undefined && (untilEnd ? "$`\\\n" : "$`\"\\\n").includes(n)) {
          if (n !== "\n") lit(n, true);
          this.i += 2;
        } else {
          lit("\\", true);
          this.i++;
        }
        continue;
      }
      if (c === "$") {
        this.expansion(parts, lit, true);
        continue;
      }
      if (c === "`") {
        parts.push({ ...this.backtick(), quoted: true });
        continue;
      }
      lit(c, true);
      this.i++;
    }
  }

  /** A `$…` at this.i as a part, or a literal `$` when nothing follows that expands. */
  expansion(parts: Part[], lit: (v: string, q: boolean) => void, quoted: boolean): void {
    const d = this.dollar();
    if (d) parts.push(quoted && (d.t === "var" || d.t === "sub") ? { ...d, quoted: true } : d);
    else {
      lit("$", quoted);
      this.i++;
    }
  }

  /** `$…` at this.i, or null when the `$` is literal. */
  dollar(): Part | null {
    const s = this.s;
    const start = this.i;
    const n = s[this.i + 1];
    if (n === "(" && s[this.i + 2] === "(") {
      const end = arithEnd(s, this.i + 3);
      if (end > 0) {
        const body = s.slice(this.i + 3, end);
        this.i = end + 2;
        return { t: "arith", raw: s.slice(start, this.i), subs: this.substitutionsIn(body) };
      }
    }
    if (n === "(") {
      this.i += 2;
      return this.subUntilParen(start);
    }
    if (n === "[") {
      // bash's old arithmetic $[…]: a number, after the substitutions inside it run
      let depth = 0;
      let j = this.i + 1;
      for (; j < s.length; j++) {
        if (s[j] === "[") depth++;
        else if (s[j] === "]" && --depth === 0) break;
      }
      if (j >= s.length) throw new ShellParseError("an unterminated $[");
      const body = s.slice(this.i + 2, j);
      this.i = j + 1;
      return { t: "arith", raw: s.slice(start, this.i), subs: this.substitutionsIn(body) };
    }
    if (n === "{") {
      const end = braceEnd(s, this.i + 2);
      if (end < 0) throw new ShellParseError("an unterminated ${");
      const inner = s.slice(this.i + 2, end);
      this.i = end + 1;
      const name = /^[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[?#$!@*_-])/.exec(inner)?.[1] ?? "";
      // an operator inside ${…} (default values, patterns) may run substitutions: parse those too
      const subs = this.substitutionsIn(inner);
      if (subs.length) return { t: "sub", script: mergeScripts(subs), raw: s.slice(start, this.i) };
      return { t: "var", name: inner === name ? name : `${name}?`, raw: s.slice(start, this.i) };
    }
    if (n !== undefined && SPECIAL_PARAMS.has(n)) {
      this.i += 2;
      return { t: "var", name: n, raw: s.slice(start, this.i) };
    }
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(this.i + 1, this.i + 257));
    if (m) {
      this.i += 1 + m[0].length;
      return { t: "var", name: m[0], raw: s.slice(start, this.i) };
    }
    return null;
  }

  /** The body of `$(`/`<(`/`>(` (this.i just after the open paren), parsed up to its close. */
  subUntilParen(start: number): Part {
    const inner = this.deeper(this.s, this.i);
    const script = inner.script(")");
    if (this.s[inner.i] !== ")") throw new ShellParseError("an unterminated $(");
    this.i = inner.i + 1;
    return { t: "sub", script, raw: this.s.slice(start, this.i) };
  }

  backtick(): Extract<Part, { t: "sub" }> {
    const s = this.s;
    const start = this.i;
    let body = "";
    this.i++;
    for (;;) {
      if (this.i >= s.length) throw new ShellParseError("an unterminated backtick");
      const c = s[this.i]!;
      if (c === "`") break;
      if (c === "\\" && "$`\\".includes(s[this.i + 1] ?? "")) {
        body += s[this.i + 1];
        this.i += 2;
        continue;
      }
      body += c;
      this.i++;
    }
    this.i++;
    return { t: "sub", script: this.deeper(body).script(null), raw: s.slice(start, this.i) };
  }

  readHeredocs(): void {
    const s = this.s;
    for (const r of this.pending.splice(0)) {
      const delim = literalOf(r.target, true);
      if (delim === null) throw new ShellParseError("a heredoc delimiter with expansions");
      const literal = r.target.parts.some((p) => p.t === "lit" && p.q);
      let body = "";
      for (;;) {
        if (this.i >= s.length) break;
        let nl = s.indexOf("\n", this.i);
        if (nl < 0) nl = s.length;
        let line = s.slice(this.i, nl);
        this.i = Math.min(nl + 1, s.length);
        if (r.op === "<<-") line = line.replace(/^\t+/, "");
        if (line === delim) break;
        body += line + "\n";
      }
      r.heredoc = { body, literal, parts: literal ? [{ t: "lit", v: body, q: true }] : this.expandableText(body) };
    }
  }

  /** Text with `$…` and backticks (an unquoted heredoc body, a `${…}` body) as word parts. */
  protected expandableText(text: string): Part[] {
    const p = this.deeper(text);
    const parts: Part[] = [];
    const lit = (v: string, q: boolean) => {
      const last = parts.at(-1);
      if (last?.t === "lit") last.v += v;
      else parts.push({ t: "lit", v, q });
    };
    p.doubleQuoted(parts, lit, true);
    return parts;
  }

  /** The command substitutions inside a `${…}` or `$((…))` body. */
  protected substitutionsIn(body: string): Script[] {
    const out: Script[] = [];
    for (const part of this.expandableText(body)) {
      if (part.t === "sub") out.push(part.script);
      if (part.t === "arith") out.push(...part.subs);
    }
    return out;
  }
}
