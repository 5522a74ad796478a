/**
 * The shell reader's tree: words and their parts, redirections, simple commands and scripts, the
 * error for what cannot be read with certainty, and small walks over the tree. Pure.
 */
/** One piece of a word, in order. `q` marks text that came from quotes or escapes (no globbing). */
export type Part =
  | { t: "lit"; v: string; q: boolean }
  /** An unquoted glob metacharacter: `*`, `?` or a bracket expression. */
  | { t: "glob"; v: string }
  /** A leading `~` or `~user`. */
  | { t: "tilde"; user: string }
  /**
   * `$name`, `${…}` or a special parameter; `raw` is its source text. `quoted`: inside double
   * quotes or a heredoc, so its value is one piece of text; otherwise bash splits it into words
   * and globs each.
   */
  | { t: "var"; name: string; raw: string; quoted?: boolean }
  /** `$(…)`, a backtick command, `<(…)` or `>(…)`, parsed; `quoted` as for `var`. */
  | { t: "sub"; script: Script; raw: string; quoted?: boolean }
  /** `$((…))`: a number; the commands it substitutes are parsed into `subs`. */
  | { t: "arith"; raw: string; subs: Script[] };

export interface Word {
  parts: Part[];
  raw: string;
}

export interface Redirect {
  op: string;
  fd: string | null;
  /** The target word, or for a heredoc its delimiter. */
  target: Word;
  /** A heredoc's body; `literal` when its delimiter was quoted (no expansion inside). */
  heredoc?: { body: string; literal: boolean; parts: Part[] };
}

export interface Command {
  assigns: Word[];
  words: Word[];
  redirects: Redirect[];
  /** Where stdin comes from: the terminal-less default, a pipe, a heredoc/herestring, or a file. */
  stdin: "none" | "pipe" | "data" | "file";
  /** Reserved words that stood in front of this command (if, for, while, !, {, …). */
  keywords: string[];
}

export interface Script {
  commands: Command[];
  /** Operators between commands, in order: `|`, `|&`, `&&`, `||`, `;`, `&`, `;;`, `(`, `)`, newline. */
  operators: string[];
  /** Anything beyond plain lists of simple commands: reserved words, `(`/`)` groups, functions. */
  compound: boolean;
  /** A command sent to the background with `&`. */
  background: boolean;
}

export class ShellParseError extends Error {
  override name = "ShellParseError";
}

/**
 * The word's value when it is plain text (quotes and escapes removed, no expansion, glob or
 * tilde), else null. With `allowGlobText`, glob characters count as their own text (for heredoc
 * delimiters, which are never globbed).
 */
export function literalOf(w: Word, allowGlobText = false): string | null {
  let out = "";
  for (const p of w.parts) {
    if (p.t === "lit") out += p.v;
    else if (p.t === "glob" && allowGlobText) out += p.v;
    else return null;
  }
  return out;
}

/** Every simple command in the script, including those inside substitutions, heredoc bodies aside. */
export function allCommands(script: Script): Command[] {
  const out: Command[] = [];
  const visit = (sc: Script) => {
    for (const c of sc.commands) {
      out.push(c);
      for (const w of [...c.assigns, ...c.words, ...c.redirects.map((r) => r.target)]) for (const s of subScripts(w.parts)) visit(s);
      for (const r of c.redirects) if (r.heredoc) for (const s of subScripts(r.heredoc.parts)) visit(s);
    }
  };
  visit(script);
  return out;
}

export function subScripts(parts: readonly Part[]): Script[] {
  const out: Script[] = [];
  for (const p of parts) {
    if (p.t === "sub") out.push(p.script);
    if (p.t === "arith") out.push(...p.subs);
  }
  return out;
}

/** Several scripts read as one (the substitutions of one `${…}`). */
export function mergeScripts(scripts: Script[]): Script {
  return {
    commands: scripts.flatMap((s) => s.commands),
    operators: scripts.flatMap((s) => s.operators),
    compound: scripts.some((s) => s.compound),
    background: scripts.some((s) => s.background),
  };
}
