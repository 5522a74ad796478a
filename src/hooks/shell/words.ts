/**
 * What a parsed shell word can turn into: its brace alternatives as glob patterns, with every
 * expansion the gate cannot know replaced by a wildcard that matches anything (slashes included).
 * Expansions the gate can know are filled in: `~`, `$HOME`, `$PWD`, numeric parameters and
 * `$((…))`, `$(pwd)`, and `$(cat <<'EOF' … EOF)` (the common way to pass a literal message). Pure.
 */
import { literalOf, type Part, type Script, type Word } from "./nodes.ts";

/** A glob token: a literal character, `?`, `*`, a bracket class, or an unknown expansion (`any`). */
export type Tok =
  | { t: "c"; c: string }
  | { t: "one" }
  | { t: "star" }
  | { t: "class"; neg: boolean; chars: string }
  | { t: "any" };

export interface WordEnv {
  home: string;
  cwd: string;
  /** Variables whose values are known (HOME, PWD, CLAUDE_PROJECT_DIR, …). */
  vars: Readonly<Record<string, string>>;
}

/** Brace expansion never yields more than this many alternatives; beyond it the word is unknown. */
const MAX_ALTERNATIVES = 256;
/** Nor more than this many characters in all. */
const MAX_EXPANDED_CHARS = 1 << 20;

type Atom = { c: string; q: boolean } | { g: string } | { any: true };

/** What word splitting (default IFS) or pathname expansion acts on in an unquoted value. */
const SPLITS_OR_GLOBS = /[ \t\n*?[]/;

/** Parameters that always expand to one or more digits. (`$!` may be empty: unknown.) */
const NUMERIC_PARAMS = new Set(["?", "#", "$"]);

/** The literal text a command substitution is known to print, or null. */
function knownOutput(script: Script, env: WordEnv): string | null {
  if (script.commands.length !== 1 || script.compound || script.background) return null;
  const c = script.commands[0]!;
  if (c.assigns.length) return null;
  const words = c.words.map((w) => literalOf(w));
  if (words.length === 1 && words[0] === "pwd" && c.redirects.length === 0) return env.cwd;
  if (words.length === 1 && words[0] === "cat" && c.redirects.length === 1) {
    const h = c.redirects[0]!.heredoc;
    if (h?.literal) return h.body.replace(/\n+$/, "");
  }
  return null;
}

function atomsOf(parts: readonly Part[], env: WordEnv): Atom[] {
  const out: Atom[] = [];
  const text = (s: string) => {
    for (const ch of s) out.push({ c: ch, q: true });
  };
  // an unquoted value is split into words and each is globbed: known text that would split, glob
  // or vanish (`$(cat <<'EOF' … -exec … EOF)`) is as unknown as any other expansion
  const value = (s: string, quoted: boolean) => {
    if (quoted || (s !== "" && !SPLITS_OR_GLOBS.test(s))) text(s);
    else out.push({ any: true });
  };
  for (const p of parts) {
    switch (p.t) {
      case "lit":
        for (const ch of p.v) out.push({ c: ch, q: p.q });
        break;
      case "glob":
        out.push({ g: p.v });
        break;
      case "tilde":
        if (p.user === "") text(env.home);
        else if (p.user === "+" || p.user === "+0") text(env.cwd);
        else out.push({ any: true }); // ~user, ~-, ~+N: directories the gate cannot know
        break;
      case "var":
        if (NUMERIC_PARAMS.has(p.name)) text("0");
        else if (Object.prototype.hasOwnProperty.call(env.vars, p.name)) value(env.vars[p.name]!, p.quoted === true);
        else out.push({ any: true });
        break;
      case "arith":
        if (p.subs.length) out.push({ any: true });
        else text("0");
        break;
      case "sub": {
        const known = knownOutput(p.script, env);
        if (known !== null) value(known, p.quoted === true);
        else out.push({ any: true });
        break;
      }
    }
  }
  return out;
}

/** Splits an atom list at unquoted top-level braces into its alternatives (bash order). */
function braceExpand(atoms: Atom[], budget = { n: MAX_ALTERNATIVES, chars: MAX_EXPANDED_CHARS }): Atom[][] | null {
  const isCh = (a: Atom | undefined, c: string) => a !== undefined && "c" in a && !a.q && a.c === c;
  for (let i = 0; i < atoms.length; i++) {
    if (!isCh(atoms[i], "{")) continue;
    let depth = 0;
    const commas: number[] = [];
    let end = -1;
    for (let j = i; j < atoms.length; j++) {
      if (isCh(atoms[j], "{")) depth++;
      else if (isCh(atoms[j], "}")) {
        if (--depth === 0) {
          end = j;
          break;
        }
      } else if (depth === 1 && isCh(atoms[j], ",")) commas.push(j);
    }
    if (end < 0) continue;
    const inner = atoms.slice(i + 1, end);
    let alts: Atom[][];
    if (commas.length) {
      const bounds = [i, ...commas, end];
      alts = bounds.slice(0, -1).map((b, k) => atoms.slice(b + 1, bounds[k + 1]));
    } else {
      const seq = sequence(inner);
      if (seq === null) continue; // {x} alone is not an expansion
      if (seq === "too_many") return null;
      alts = seq.map((s) => [...s].map((c) => ({ c, q: false }))); // bash globs what a sequence makes
    }
    const prefix = atoms.slice(0, i);
    const rest = braceExpand(atoms.slice(end + 1), budget);
    if (rest === null) return null;
    const out: Atom[][] = [];
    for (const alt of alts) {
      const expanded = braceExpand(alt, budget);
      if (expanded === null) return null;
      for (const a of expanded) {
        for (const r of rest) {
          if (--budget.n < 0) return null;
          budget.chars -= prefix.length + a.length + r.length;
          if (budget.chars < 0) return null;
          out.push([...prefix, ...a, ...r]);
        }
      }
    }
    return out;
  }
  return [atoms];
}

/** `{1..5}`, `{a..e}`, `{1..10..2}` as strings; null when it is not a sequence. */
function sequence(inner: Atom[]): string[] | null | "too_many" {
  if (inner.some((a) => !("c" in a))) return null;
  const s = inner.map((a) => (a as { c: string }).c).join("");
  const m = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/.exec(s);
  if (!m) return null;
  const numeric = /\d/.test(m[1]!);
  if (numeric !== /\d/.test(m[2]!)) return null;
  const a = numeric ? Number(m[1]) : m[1]!.charCodeAt(0);
  const b = numeric ? Number(m[2]) : m[2]!.charCodeAt(0);
  const step = Math.abs(Number(m[3] ?? 1)) || 1;
  if (Math.abs(b - a) / step > MAX_ALTERNATIVES) return "too_many";
  const out: string[] = [];
  for (let v = a; a <= b ? v <= b : v >= b; v += a <= b ? step : -step) out.push(numeric ? String(v) : String.fromCharCode(v));
  return out;
}

function toTokens(atoms: Atom[]): Tok[] {
  const out: Tok[] = [];
  for (let i = 0; i < atoms.length; i++) {
    const a = atoms[i]!;
    if ("c" in a && !a.q && (a.c === "*" || a.c === "?")) {
      // a glob character made by brace expansion (a sequence such as {a..Z..6})
      out.push(a.c === "*" ? { t: "star" } : { t: "one" });
      continue;
    }
    if ("c" in a && !a.q && a.c === "[") {
      const close = atoms.findIndex((b, k) => k > i && "c" in b && !b.q && b.c === "]");
      if (close > i) {
        out.push({ t: "one" });
        i = close;
        continue;
      }
    }
    if ("any" in a) out.push({ t: "any" });
    else if ("c" in a) out.push({ t: "c", c: a.c });
    else if (a.g === "*") out.push({ t: "star" });
    else if (a.g === "?") out.push({ t: "one" });
    else if (a.g === "[?]") out.push({ t: "one" }); // a class with quotes inside: any one character
    else {
      const body = a.g.slice(1, -1);
      const neg = body.startsWith("!") || body.startsWith("^");
      out.push({ t: "class", neg, chars: expandClass(neg ? body.slice(1) : body) });
    }
  }
  return out;
}

function expandClass(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    if (body[i + 1] === "-" && i + 2 < body.length) {
      const from = body.charCodeAt(i);
      const to = body.charCodeAt(i + 2);
      for (let c = from; c <= to && c - from < 256; c++) out += String.fromCharCode(c);
      i += 2;
    } else out += body[i];
  }
  return out;
}

/**
 * The patterns a word can become, one per brace alternative; null when there are too many to
 * enumerate (treat as unknown).
 */
export function wordPatterns(w: Word, env: WordEnv): Tok[][] | null {
  const alts = braceExpand(atomsOf(w.parts, env));
  return alts === null ? null : alts.map((a) => toTokens(braceTilde(a, env)));
}

/** Brace expansion comes before tilde expansion: an alternative that starts with `~` is expanded. */
function braceTilde(atoms: Atom[], env: WordEnv): Atom[] {
  const first = atoms[0];
  if (!first || !("c" in first) || first.q || first.c !== "~") return atoms;
  let end = atoms.findIndex((a) => "c" in a && a.c === "/");
  if (end < 0) end = atoms.length;
  const name = atoms.slice(1, end).map((a) => ("c" in a ? a.c : "\u0000")).join("");
  const rest = atoms.slice(end);
  const dir = name === "" ? env.home : name === "+" || name === "+0" ? env.cwd : null;
  if (dir === null) return [{ any: true }, ...rest];
  return [...[...dir].map((c) => ({ c, q: true })), ...rest];
}

/** The patterns of raw text with expansions (a heredoc body, a `-c` string): one pattern. */
export function partsPattern(parts: readonly Part[], env: WordEnv): Tok[] {
  return toTokens(atomsOf(parts, env));
}

export function hasAny(tokens: readonly Tok[]): boolean {
  return tokens.some((t) => t.t === "any");
}

export function isLiteral(tokens: readonly Tok[]): boolean {
  return tokens.every((t) => t.t === "c");
}

export function textOf(tokens: readonly Tok[]): string {
  return tokens.map((t) => (t.t === "c" ? t.c : t.t === "any" ? "\u0000" : "*")).join("");
}

/**
 * True when the tokens can match `s` exactly. `*`, `?` and classes never match `/`, and do not
 * match a leading `.` of a path segment unless `dotglob` is set (bash's defaults); `any` matches
 * everything. Linear-time dynamic programme.
 */
export function tokensMatch(tokens: readonly Tok[], s: string, dotglob = false): boolean {
  const n = s.length;
  let dp = new Uint8Array(n + 1);
  dp[0] = 1;
  const segStart = (j: number) => j === 0 || s[j - 1] === "/";
  const wildOk = (j: number) => s[j] !== "/" && (dotglob || !(s[j] === "." && segStart(j)));
  for (const tok of tokens) {
    const next = new Uint8Array(n + 1);
    switch (tok.t) {
      case "c":
        for (let j = 0; j < n; j++) if (dp[j] && s[j] === tok.c) next[j + 1] = 1;
        break;
      case "one":
        for (let j = 0; j < n; j++) if (dp[j] && wildOk(j)) next[j + 1] = 1;
        break;
      case "class":
        for (let j = 0; j < n; j++) if (dp[j] && wildOk(j) && tok.chars.includes(s[j]!) !== tok.neg) next[j + 1] = 1;
        break;
      case "star":
        for (let j = 0; j <= n; j++) next[j] = dp[j] || (j > 0 && next[j - 1] && wildOk(j - 1)) ? 1 : 0;
        break;
      case "any":
        for (let j = 0; j <= n; j++) next[j] = dp[j] || (j > 0 && next[j - 1]) ? 1 : 0;
        break;
    }
    dp = next;
  }
  return dp[n] === 1;
}

/** A word quoted for a refusal text, cut short when long (a refusal never repeats a huge input). */
export function shown(s: string): string {
  return JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…` : s);
}
