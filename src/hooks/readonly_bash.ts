/**
 * Is this Bash command read-only? Only when every part of it is proven so, by allowlist:
 * - the script is plain commands joined by `|`, `&&`, `||`, `;` or newlines (no background job,
 *   subshell, group, function or control structure, no heredoc);
 * - every command is a program from READ_ONLY_PROGRAMS (or one the user vouched for in
 *   `.longrun/hooks.json`), named plainly, with no `VAR=value` in front, taking only the
 *   options listed for it;
 * - no word holds an expansion the gate cannot know (variables, `$(…)`, backticks), and a glob
 *   stands only where it cannot turn into an option (it starts with a literal other than `-`, or
 *   follows `--`), so `sort *` with a file named `--compress-program=sh` cannot happen;
 * - redirections only to /dev/null, between standard streams, or from a file;
 * - no operand reaches longrun's protected files (resolved, case-folded, globs expanded on disk);
 *   a recursive reader (`grep -r`) is given only trees that hold none of them, `diff` only files,
 *   and `git diff` only paths inside the repository (else it is `--no-index`);
 * - an unquoted expansion that bash would split or glob, even of known text, is unknown;
 * - the command is small enough to decide quickly (READ_ONLY_LIMITS, the disk budget);
 * - the program found on PATH is one the agent cannot replace, and for git, the repository's
 *   configuration makes no read command run a program.
 * Anything else is a write, and needs the lease. The programs and options are READ_ONLY_PROGRAMS
 * (readonly_programs.ts, each row with its examples); the look at PATH and at git's
 * configuration is readonly_env.ts.
 */
import { existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { type Access, pathHit, type ProtectContext, resolveExisting, withBudget } from "./protect.ts";
import { repositoryTop, treeHit } from "./trees.ts";
import { type Command, literalOf, type Script } from "./shell/nodes.ts";
import { Directories } from "./shell/cd.ts";
import { hasAny, isLiteral, shown, textOf, type Tok, type WordEnv, wordPatterns } from "./shell/words.ts";
import { BUILTINS, FIND_PRIMARIES, own, type ProgramRule, READ_ONLY_PROGRAMS, type ValueKind } from "./readonly_programs.ts";
import { gitConfigRefusal, type ProgramEnvironment, programLocationRefusal } from "./readonly_env.ts";

export interface ReadOnlyOptions extends ProgramEnvironment {
  /** Command prefixes the user vouched for (`npm test`): any arguments, same syntax rules. */
  extra: readonly string[];
  /** Skip the program-location and git-configuration checks (unit tests of the grammar only). */
  skipEnvironmentChecks?: boolean;
}

/**
 * Why a command is not read-only, or null when it is. A `cd` moves the directory later paths are
 * read in; since a `cd` in a pipeline does not, every command is checked against every directory
 * the script may be in by then, with `$PWD` as bash would have it there (shell/cd.ts).
 */
export async function readOnlyRefusal(script: Script, outer: ProtectContext, env: WordEnv, o: ReadOnlyOptions): Promise<string | null> {
  const ctx = withBudget(outer);
  if (script.compound) return "it uses shell structure (a group, subshell, loop, condition or function)";
  if (script.background) return "it starts a background job (&)";
  if (script.commands.length === 0) return "it is empty";
  if (script.commands.length > READ_ONLY_LIMITS.commands) return `it holds more than ${READ_ONLY_LIMITS.commands} commands, too many to check in a read-only turn; split it into several calls`;
  const dirs = new Directories(env.cwd, env.home, READ_ONLY_LIMITS.cds, ctx.cwd);
  let checked = 0;
  for (const { command: c, cwd, pwd } of dirs.steps(script.commands)) {
    checked += c.words.length + c.redirects.length;
    if (checked > READ_ONLY_LIMITS.words) return `it has more than ${READ_ONLY_LIMITS.words} words to check (each counted once for every directory a cd may have led to); split it into several calls`;
    // $PWD, ~+ and $(pwd) are the directory reached so far, in the cd's words too
    const here: WordEnv = { ...env, cwd: pwd, vars: { ...env.vars, PWD: pwd } };
    const why = await commandRefusal(c, { ...ctx, cwd }, here, o);
    if (why) return why;
    const words = c.words.map((w) => {
      const alts = wordPatterns(w, here);
      return alts?.length === 1 && isLiteral(alts[0]!) ? textOf(alts[0]!) : null;
    });
    const moved = dirs.follow(words, pwd);
    if (moved === "unknown") return "it changes to a directory that cannot be told in advance (cd -, popd, an expansion, a .. after a symbolic link)";
    if (moved === "too_many") return `it may end up in more than ${READ_ONLY_LIMITS.cds} directories (each cd counts from every directory an earlier cd may have led to), too many to follow; split it into several calls`;
  }
  return null;
}

/** Bounds on one decision's work (a read-only command is short): beyond them it is refused. */
export const READ_ONLY_LIMITS = { commands: 200, cds: 16, words: 4000 } as const;

const SAFE_REDIRECTS = [/^(1|2)?>$/, /^&>$/, /^(1|2)?>>$/];

function redirectRefusal(c: Command, ctx: ProtectContext, env: WordEnv): string | null {
  for (const r of c.redirects) {
    const target = literalOf(r.target);
    if (r.heredoc || r.op === "<<" || r.op === "<<-") return "it feeds a heredoc";
    if (target === null) return `the redirection target ${shown(r.target.raw)} is not plain text`;
    const op = (r.fd ?? "") + r.op;
    if (r.op === "<<<") continue;
    if ((r.op === ">&" || r.op === "<&") && /^[0-2]$/.test(target)) continue;
    if (SAFE_REDIRECTS.some((re) => re.test(op)) && target === "/dev/null") continue;
    if (r.op === "<" && r.fd === null) {
      const hit = pathHit(pats(target), "read", ctx);
      if (hit) return `it reads ${hit.what} (${hit.path})`;
      continue;
    }
    return `the redirection ${shown(op + target)} writes or duplicates a file`;
  }
  void env;
  return null;
}

const pats = (s: string): Tok[] => [...s].map((c) => ({ t: "c", c }) as Tok);

interface Arg {
  tokens: Tok[];
  raw: string;
}

async function commandRefusal(c: Command, ctx: ProtectContext, env: WordEnv, o: ReadOnlyOptions): Promise<string | null> {
  if (c.keywords.length) return `it uses ${c.keywords.join(" ")}`;
  if (c.assigns.length) return `it sets ${c.assigns[0]!.raw} in front of the command (an environment variable can change what a program does)`;
  if (c.words.length === 0) return "it has redirections without a command";
  const r = redirectRefusal(c, ctx, env);
  if (r) return r;
  // Every word becomes its brace alternatives, in order, as the shell would.
  const args: Arg[] = [];
  for (const w of c.words) {
    const alts = wordPatterns(w, env);
    if (alts === null) return `${shown(w.raw)} expands to too many words`;
    for (const a of alts) {
      if (hasAny(a)) return `${shown(w.raw)} holds an expansion (variable or command substitution) whose value cannot be checked`;
      args.push({ tokens: a, raw: w.raw });
    }
  }
  const name = args[0]!;
  if (!isLiteral(name.tokens)) return `the program name ${shown(name.raw)} is a pattern`;
  const program = textOf(name.tokens);
  let rule = own(READ_ONLY_PROGRAMS, program);
  let rest = args.slice(1);
  if (!rule) {
    const vouched = o.extra.find((prefix) => {
      const words = prefix.split(/\s+/);
      return words.every((p, i) => args[i] && isLiteral(args[i]!.tokens) && textOf(args[i]!.tokens) === p);
    });
    if (!vouched) return `${shown(program)} is not on the read-only list`;
    for (const a of args.slice(vouched.split(/\s+/).length)) {
      const hit = pathHit(a.tokens, "read", ctx);
      if (hit) return `${shown(a.raw)} reaches ${hit.what}`;
    }
    return o.skipEnvironmentChecks ? null : programLocationRefusal(program, o);
  }
  if (rule.sub) {
    while (rest.length && isLiteral(rest[0]!.tokens) && rule.globalFlags?.includes(textOf(rest[0]!.tokens))) rest = rest.slice(1);
    const subName = rest.length && isLiteral(rest[0]!.tokens) ? textOf(rest[0]!.tokens) : "";
    const sub = own(rule.sub, subName);
    if (!sub) return `${program} ${shown(subName || (rest[0]?.raw ?? ""))} is not on the read-only list (allowed: ${Object.keys(rule.sub).join(", ")})`;
    rule = sub;
    rest = rest.slice(1);
  }
  const why = program === "find" ? findRefusal(rest, ctx) : argsRefusal(rule, rest, ctx);
  if (why) return `${program}: ${why}`;
  if (program === "git" && rule === READ_ONLY_PROGRAMS.git!.sub!.diff) {
    const outside = gitDiffRefusal(rest, ctx);
    if (outside) return `git diff: ${outside}`;
  }
  if (program === "git") {
    const blob = gitBlobRefusal(rest, ctx);
    if (blob) return `git: ${blob}`;
  }
  if (o.skipEnvironmentChecks) return null;
  if (!BUILTINS.has(program)) {
    const loc = programLocationRefusal(program, o);
    if (loc) return loc;
  }
  if (program === "git") return gitConfigRefusal(ctx.cwd, o);
  return null;
}

function valueRefusal(kind: ValueKind, value: Arg | string, ctx: ProtectContext, option: string): string | null {
  const tokens = typeof value === "string" ? pats(value) : value.tokens;
  const text = textOf(tokens);
  if (kind === "path") {
    if (typeof value !== "string" && !isLiteral(tokens) && !startsSafe(tokens)) return `the value of ${option} is a glob`;
    const hit = pathHit(tokens, "read", ctx);
    return hit ? `${option} ${shown(text)} reaches ${hit.what}` : null;
  }
  if (typeof value !== "string" && !isLiteral(tokens)) return `the value of ${option} is a glob, which could become several words`;
  if (kind === "text") return null;
  if (kind === "git_format") return text.includes("%G") ? `${option}: the %G placeholders verify signatures by running gpg` : null;
  if (kind === "number") return /^[+-]?\d+[A-Za-z%]{0,3}$/.test(text) ? null : `${option} needs a number, got ${shown(text)}`;
  return kind.includes(text) ? null : `${option} must be one of ${kind.join(", ")}, got ${shown(text)}`;
}

/** A glob that cannot expand into an option: it starts with a literal character other than `-`. */
function startsSafe(tokens: readonly Tok[]): boolean {
  const first = tokens[0];
  return first?.t === "c" && first.c !== "-";
}

function argsRefusal(rule: ProgramRule, args: Arg[], ctx: ProtectContext): string | null {
  const paths: Arg[] = [];
  let recursive: "no" | "yes" | "follow" = "no";
  const recursion = (flag: string, long: boolean) => {
    const r = rule.recursive;
    if (!r) return;
    if (long ? r.followLong.includes(flag) : r.follow.includes(flag)) recursive = "follow";
    else if ((long ? r.long.includes(flag) : r.flags.includes(flag)) && recursive === "no") recursive = "yes";
  };
  const why = optionsRefusal(rule, args, ctx, paths, recursion);
  if (why) return why;
  if (recursive !== "no") {
    if (paths.length === 0 && rule.recursive!.defaultCwd) paths.push({ tokens: pats("."), raw: "." });
    for (const p of paths) {
      if (!isLiteral(p.tokens)) return `${shown(p.raw)} is a glob, and a recursive search needs its directories named`;
      const hit = treeHit(textOf(p.tokens), "read", ctx, recursive === "follow");
      if (hit) return `a recursive search of ${shown(p.raw)} would read ${hit.what} (${hit.path}); name the directories that hold the files (grep -rn PATTERN src), leaving longrun's out`;
    }
  }
  if (rule.filesOnly) {
    for (const p of paths) {
      const text = textOf(p.tokens);
      if (text !== "-" && isLiteral(p.tokens) && isDirectory(text, ctx)) return `${shown(p.raw)} is a directory: ${rule.filesOnly}`;
    }
  }
  return null;
}

function isDirectory(path: string, ctx: ProtectContext): boolean {
  try {
    return statSync(resolveExisting(path.startsWith("/") ? path : `${ctx.cwd}/${path}`)).isDirectory();
  } catch {
    return false;
  }
}

function optionsRefusal(rule: ProgramRule, args: Arg[], ctx: ProtectContext, paths: Arg[], recursion: (flag: string, long: boolean) => void): string | null {
  let endOfOptions = false;
  let operands = 0;
  let patternGiven = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const literal = isLiteral(a.tokens);
    const text = textOf(a.tokens);
    if (!endOfOptions && literal && text === "--") {
      endOfOptions = true;
      continue;
    }
    if (!endOfOptions && text.startsWith("-") && text !== "-") {
      if (!literal && !text.startsWith("--")) return `the glob ${shown(a.raw)} could expand to options`;
      if (text.startsWith("--")) {
        const eq = text.indexOf("=");
        const opt = eq < 0 ? text : text.slice(0, eq);
        if (eq < 0 && rule.long?.includes(opt)) {
          recursion(opt, true);
          continue;
        }
        const optional = own(rule.longOptional, opt);
        if (eq >= 0 && optional !== undefined) {
          const why = valueRefusal(optional, text.slice(eq + 1), ctx, opt);
          if (why) return why;
          continue;
        }
        const kind = own(rule.longValued, opt);
        if (kind === undefined) return `the option ${opt} is not allowed in a read-only turn`;
        if (eq >= 0) {
          if (!literal && kind === "path") return `the value of ${opt} is a glob`;
          const why = valueRefusal(kind, text.slice(eq + 1), ctx, opt);
          if (why) return why;
        } else {
          const v = args[++i];
          if (!v) return `${opt} needs a value`;
          const why = valueRefusal(kind, v, ctx, opt);
          if (why) return why;
        }
        if (opt === "--regexp" || opt === "--file") patternGiven = true;
        continue;
      }
      if (rule.numeric && /^-\d+$/.test(text)) continue;
      for (let k = 1; k < text.length; k++) {
        const ch = text[k]!;
        if (rule.flags?.includes(ch)) {
          recursion(ch, false);
          continue;
        }
        const attached = own(rule.attached, ch);
        if (attached !== undefined) {
          const v = text.slice(k + 1);
          if (v) {
            const why = valueRefusal(attached, v, ctx, `-${ch}`);
            if (why) return why;
          }
          break;
        }
        const kind = own(rule.valued, ch);
        if (kind === undefined) return `the option -${ch} is not allowed in a read-only turn`;
        const attachedValue = text.slice(k + 1);
        const why = attachedValue ? valueRefusal(kind, attachedValue, ctx, `-${ch}`) : args[i + 1] ? valueRefusal(kind, args[++i]!, ctx, `-${ch}`) : `-${ch} needs a value`;
        if (why) return why;
        if (ch === "e" || ch === "f") patternGiven = true;
        break;
      }
      continue;
    }
    operands++;
    if (rule.maxOperands !== undefined && operands > rule.maxOperands) return `at most ${rule.maxOperands} operand(s)`;
    if (rule.maxOperands !== undefined && !literal) return `${shown(a.raw)} is a glob, which could supply more than ${rule.maxOperands} operand(s)`;
    let kind = rule.operands;
    if (kind === "pattern_then_paths") {
      if (!patternGiven && operands === 1) {
        if (!literal) return `the pattern ${shown(a.raw)} is a glob, which could become several words`;
        continue;
      }
      kind = "paths";
    }
    if (kind === "none") return `no operands allowed, got ${shown(a.raw)}`;
    if (kind === "date_format") {
      if (!literal || !text.startsWith("+") || operands > 1) return "only a +FORMAT operand is allowed (anything else would set the clock)";
      continue;
    }
    if (kind === "text") {
      if (!literal) return `${shown(a.raw)} is a glob, which could become several words`;
      continue;
    }
    if (!literal && !endOfOptions && !startsSafe(a.tokens)) return `the glob ${shown(a.raw)} could expand to an option; start it with ./ or put it after --`;
    const hit = pathHit(a.tokens, "read" satisfies Access, ctx);
    if (hit) return `${shown(a.raw)} reaches ${hit.what}`;
    paths.push(a);
  }
  return null;
}

function findRefusal(args: Arg[], ctx: ProtectContext): string | null {
  let i = 0;
  while (i < args.length && isLiteral(args[i]!.tokens) && ["-H", "-L", "-P"].includes(textOf(args[i]!.tokens))) i++;
  for (; i < args.length; i++) {
    const a = args[i]!;
    const text = textOf(a.tokens);
    if (text.startsWith("-") || text === "!" || text === "(" || text === ")") break;
    if (!isLiteral(a.tokens) && !startsSafe(a.tokens)) return `the glob ${shown(a.raw)} could expand to an option`;
    const hit = pathHit(a.tokens, "read", ctx);
    if (hit) return `${shown(a.raw)} reaches ${hit.what}`;
  }
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (!isLiteral(a.tokens)) return `${shown(a.raw)} is a glob in find's expression; quote it`;
    const text = textOf(a.tokens);
    const arity = own(FIND_PRIMARIES, text);
    if (arity === undefined) return `${text} is not allowed in a read-only turn (only tests and -print; no -exec, -delete, -fprint, -fls)`;
    if (arity === 1) {
      const v = args[++i];
      if (!v || !isLiteral(v.tokens)) return `${text} needs a quoted value`;
      if (text === "-newer") {
        const hit = pathHit(v.tokens, "read", ctx);
        if (hit) return `-newer reaches ${hit.what}`;
      }
    }
  }
  return null;
}

/**
 * git diff compares two paths directly, as `--no-index` (recursively, every file), when it runs
 * outside a repository or one of them lies outside the work tree: every operand must resolve
 * inside the repository that holds the working directory.
 */
function gitDiffRefusal(args: Arg[], ctx: ProtectContext): string | null {
  let top: string | null = null;
  for (let dir = resolveExisting(ctx.cwd); ; dir = dirname(dir)) {
    if (existsSync(`${dir}/.git`)) {
      top = dir;
      break;
    }
    if (dirname(dir) === dir) break;
  }
  if (top === null) return "outside a git repository git diff compares files directly (--no-index), reading whatever it is given";
  for (const a of args) {
    const text = textOf(a.tokens);
    if (text.startsWith("-")) continue;
    const abs = resolveExisting(text.startsWith("/") ? text : `${ctx.cwd}/${text}`);
    if (abs !== top && !abs.startsWith(top === "/" ? "/" : top + "/")) {
      return `${shown(a.raw)} is outside the repository ${top}, and git diff would compare the paths directly (--no-index), reading every file under them`;
    }
  }
  return null;
}

/**
 * `REV:PATH` (`HEAD:memory.db`, `:0:.longrun/http.json`) names a file in git's history: PATH is
 * relative to the repository's top (or to the working directory when it starts with ./ or ../),
 * and a protected file committed once is as secret as the one on disk.
 */
function gitBlobRefusal(args: Arg[], ctx: ProtectContext): string | null {
  for (const a of args) {
    const text = textOf(a.tokens);
    const colon = text.indexOf(":");
    if (text.startsWith("-") || colon < 0) continue;
    const path = text.slice(colon + 1).replace(/^[0-3]:/, "");
    if (path === "") continue;
    const top = /^\.\.?\//.test(path) ? ctx.cwd : (repositoryTop(ctx.cwd) ?? ctx.cwd);
    const hit = pathHit(pats(`${top}/${path.replace(/^\//, "")}`), "read", ctx);
    if (hit) return `${shown(a.raw)} names ${hit.what} as git keeps it`;
  }
  return null;
}
