/**
 * A parser for the shell commands an agent sends through Claude Code's Bash tool, built for one
 * job: let the gate see what a command runs and which paths it names, in every spelling a shell
 * allows (quotes, escapes, ANSI-C strings, expansions, substitutions, globs, heredocs). It does
 * not execute anything and it is not a full grammar: control structures are flattened into the
 * simple commands they contain, and anything it cannot read with certainty is a `ShellParseError`,
 * which the gate treats as a refusal. The tree is in nodes.ts, the tokens in lexer.ts. Pure.
 */
import { type Command, literalOf, type Redirect, type Script, ShellParseError, type Word } from "./nodes.ts";
import { Lexer } from "./lexer.ts";

export * from "./nodes.ts";

/** Commands longer than this are refused unread (heredocs with whole files fit well under it). */
export const MAX_COMMAND_CHARS = 256 * 1024;

const RESERVED = new Set(["if", "then", "elif", "else", "fi", "do", "done", "while", "until", "for", "in", "case", "esac", "select", "function", "{", "}", "!", "[[", "]]", "time", "coproc"]);

/** Parses `src` as a shell script. Throws `ShellParseError` when it cannot be read with certainty. */
export function parseShell(src: string): Script {
  if (src.length > MAX_COMMAND_CHARS) throw new ShellParseError(`the command is longer than ${MAX_COMMAND_CHARS} characters`);
  const p = new Parser(src, 0);
  const script = p.script(null);
  if (p.i < src.length) throw new ShellParseError(`unexpected ${JSON.stringify(src[p.i])} at offset ${p.i}`);
  return script;
}

/** Lists of simple commands, with the operators, reserved words and assignments between them. */
class Parser extends Lexer {
  protected deeper(s: string, start = 0): Parser {
    return new Parser(s, this.depth + 1, start);
  }

  /** Reads commands until the end, or until an unmatched `close` (for `$(…)` bodies). */
  script(close: ")" | null): Script {
    const out: Script = { commands: [], operators: [], compound: false, background: false };
    let cur: Command = newCommand("none");
    let parens = 0;
    const flush = (next: Command["stdin"]) => {
      if (cur.words.length || cur.assigns.length || cur.redirects.length || cur.keywords.length) out.commands.push(cur);
      cur = newCommand(next);
    };
    for (;;) {
      const tok = this.token(close !== null && parens === 0);
      if (tok === null) break;
      if (tok.k === "op") {
        if (tok.v === ")" && close !== null && parens === 0) break; // left for the caller
        if (tok.v === "(") {
          parens++;
          out.compound = true;
        } else if (tok.v === ")") {
          parens--;
          out.compound = true;
        }
        if (tok.v === "&") out.background = true;
        if (tok.v === ";;" || tok.v === ";&" || tok.v === ";;&") out.compound = true;
        out.operators.push(tok.v);
        flush(tok.v === "|" || tok.v === "|&" ? "pipe" : "none");
        if (tok.v === "\n") this.readHeredocs();
        continue;
      }
      if (tok.k === "redir") {
        const target = this.wordAfter(tok.op);
        const r: Redirect = { op: tok.op, fd: tok.fd, target };
        if (tok.op === "<<" || tok.op === "<<-") {
          this.pending.push(r);
          cur.stdin = "data";
        } else if (tok.op === "<<<") cur.stdin = "data";
        else if (tok.op === "<") cur.stdin = "file";
        cur.redirects.push(r);
        continue;
      }
      const w = tok.w;
      const plain = literalOf(w);
      if (cur.words.length === 0 && plain !== null && RESERVED.has(plain) && w.parts.every((p) => p.t === "lit" && !p.q)) {
        cur.keywords.push(plain);
        out.compound = true;
        continue;
      }
      if (cur.words.length === 0 && isAssignment(w)) cur.assigns.push(w);
      else cur.words.push(w);
    }
    if (this.pending.length) this.readHeredocs();
    flush("none");
    if (parens !== 0) throw new ShellParseError("unbalanced parentheses");
    return out;
  }
}

function newCommand(stdin: Command["stdin"]): Command {
  return { assigns: [], words: [], redirects: [], stdin, keywords: [] };
}

/** `NAME=…` or `NAME+=…` (with an optional array index) before the command word. */
function isAssignment(w: Word): boolean {
  const first = w.parts[0];
  return first?.t === "lit" && !first.q && /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(first.v);
}
