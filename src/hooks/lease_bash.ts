/**
 * What a Bash command may never do, even under a lease: reach a protected path, or run one of
 * longrun's host-side commands. Best effort by nature (a shell can compute anything), so it refuses
 * whatever it cannot see through:
 * - a word with an expansion it cannot know (`$x`, `${D}run`, `$(…)`), since it could spell any path;
 * - a program named by an expansion or a pattern (`l$(true)ongrun`, `$X serve`, `./l*`);
 * - a glob that could match a protected path (`.longr*`, `rm -rf *` beside memory.db);
 * - longrun's executable anywhere except as `longrun status` (or --version / --help);
 * - inline code for an interpreter (`python -c`, `node -e`, `perl -e`, code piped into one), and
 *   `xargs`, which build commands from data the gate does not see; `sh -c '…'` and `eval '…'`
 *   with literal text are parsed and checked like the rest;
 * - a command a pager, an editor or man is told to run at start (`less '+!…'`, `vim a +cmd`,
 *   `man -P`), or set in a variable a program runs (PAGER, LESSOPEN, GIT_CONFIG_*, BASH_ENV, …);
 * - `find` with an action (-delete, -exec, …) unless its name tests exclude every protected name;
 * - a whole-tree operation (rm -r, chmod -R, cp -r, tar -c, git clean, …: TREE_OPERATIONS in
 *   trees.ts) over a tree that holds protected paths, and `git add` of what git's own dry run
 *   says it would stage;
 * - a script file it runs (`bash f`, `source f`, `./f`, `python3 f`, package.json scripts, a
 *   makefile) that reaches them, read from disk when the gate decides (script_files.ts), or one
 *   the same command writes;
 * - bash's network redirections (/dev/tcp, /dev/udp), a changed IFS (or HOME, PWD, OLDPWD, CDPATH:
 *   where cd and ~ lead), and more work than one
 *   decision may take (LEASE_LIMITS, and the disk budget in protect.ts).
 * Quotes, escapes, ANSI-C strings, braces, `..`, symlinks, case and hard links are seen through.
 * The operating system's boundary (Claude Code's sandbox, set up by `hook install`) is what
 * stops a program that computes a path at run time.
 * The option rules are data in lease_options.ts, the readers of single programs (git -c, git
 * config, sed, find, file lists) in lease_programs.ts; each rule there carries its examples.
 */
import { basename } from "node:path";
import { AGENT_SUBCOMMANDS, isLongrunProgram, pathHit, type ProtectContext, textHit, withBudget } from "./protect.ts";
import { Directories } from "./shell/cd.ts";
import { allCommands, type Command, literalOf, type Script, ShellParseError, type Word } from "./shell/nodes.ts";
import { parseShell } from "./shell/parse.ts";
import { hasAny, isLiteral, shown, textOf, type Tok, tokensMatch, type WordEnv, wordPatterns } from "./shell/words.ts";
import { makefileRefusal, packageScriptRefusal, scriptFileRefusal, type ScriptView } from "./script_files.ts";
import { gitAddRefusal, gitTrackedRefusal, TREE_OPERATIONS, treeOperationRefusal } from "./trees.ts";
import { fileListRefusal, findRefusal, findTreeRefusal, gitConfigOverride, gitConfigWrite, sedRefusal } from "./lease_programs.ts";
import { CODE_RUNNERS, COMMAND_BUILDERS, commandOption, commandVariableRefusal, inlineCode, INTERPRETERS, SCHEDULERS, SHELL_STRING_FLAGS, SHELLS, WRAPPERS } from "./lease_options.ts";

export interface LeaseBashContext {
  protect: ProtectContext;
  env: WordEnv;
}

/** Bounds on the work one decision may take: beyond them the command is refused as too long to check. */
export const LEASE_LIMITS = { commands: 400, cds: 16, words: 4000, bytes: 1024 * 1024 } as const;

/** What one decision has spent so far, across nested shell text and scripts. */
interface Budget {
  commands: number;
  words: number;
  /** Characters of nested shell text (sh -c, scripts, package.json scripts) parsed so far. */
  bytes: number;
}

interface Checking extends LeaseBashContext {
  budget: Budget;
  view: ScriptView;
  /**
   * A script read from disk, which the user's project may hold by the hundred: only what it names
   * literally is judged (protected paths, longrun's host commands, whole-tree operations, the
   * scripts it runs); words it computes are left to the operating system's sandbox.
   */
  lenient?: boolean;
}

/**
 * Why the command is refused under any lease, or null when nothing here objects. `script` is the
 * command as the gate parsed it once (the read-only check reads the same tree).
 */
export function leaseRefusal(script: Script, c: LeaseBashContext): string | null {
  return scriptRefusal(script, { ...c, protect: withBudget(c.protect), budget: { commands: 0, words: 0, bytes: 0 }, view: { commands: 0, named: new Map() } }, 0);
}

function scriptRefusal(script: Script, outer: Checking, depth: number): string | null {
  if (depth > 8) return "shell text nested too deeply to check";
  const commands = allCommands(script);
  outer.budget.commands += commands.length;
  if (outer.budget.commands > LEASE_LIMITS.commands) return `it holds more than ${LEASE_LIMITS.commands} simple commands (nested ones included), too many to check; split it into several calls`;
  const c: Checking = { ...outer, view: scriptView(commands) };
  if (!c.lenient && commands.some((cmd) => [...cmd.assigns, ...cmd.words].some((w) => /^IFS\+?=/.test(w.raw) || (literalOf(w) ?? "").startsWith("IFS=")))) {
    return "it sets IFS, which changes how every later word splits, so longrun cannot tell what the words become";
  }
  const variable = c.lenient ? null : commandVariableRefusal(commands);
  if (variable) return variable;
  const dotglob = commands.some((cmd) => {
    const p = cmd.words[0] ? literalOf(cmd.words[0]) : null;
    return p === "shopt" || p === "set" || cmd.assigns.some((a) => /^GLOBIGNORE/.test(a.raw));
  });
  const dirs = new Directories(c.env.cwd, c.env.home, LEASE_LIMITS.cds, c.protect.cwd);
  for (const { command: cmd, at, cwd, pwd } of dirs.steps(commands)) {
    const ctx: Checking = { ...c, protect: { ...c.protect, cwd }, env: { ...c.env, cwd: pwd, vars: { ...c.env.vars, PWD: pwd } } };
    c.budget.words += cmd.words.length + cmd.assigns.length + cmd.redirects.length;
    if (c.budget.words > LEASE_LIMITS.words) return `it has more than ${LEASE_LIMITS.words} words to check (each counted once for every directory a cd may have led to); split it into several calls`;
    const why = commandRefusal(cmd, at, ctx, dotglob, depth);
    if (why) return why;
    const words = expand(cmd.words, ctx);
    if (typeof words === "string") return words;
    const moved = dirs.follow(words.map((w) => (w.literal ? w.text : null)), pwd);
    if (moved === "unknown" && c.lenient) continue;
    if (moved === "unknown") return "it changes to a directory longrun cannot tell in advance (cd -, popd, an expansion, a .. after a symbolic link); spell the directory out";
    if (moved === "too_many") return `it may end up in more than ${LEASE_LIMITS.cds} directories (each cd counts from every directory an earlier cd may have led to), too many to follow; split it into several calls`;
  }
  return null;
}

/** Every name the script's commands mention (the last segment of each word and target), by command. */
function scriptView(commands: readonly Command[]): ScriptView {
  const named = new Map<string, Set<number>>();
  for (const [k, cmd] of commands.entries()) {
    for (const w of [...cmd.assigns, ...cmd.words, ...cmd.redirects.map((r) => r.target)]) {
      const name = w.raw.replace(/\/+$/, "").split(/[\/=]/).at(-1)!.replace(/['"\\]/g, "");
      if (!named.has(name)) named.set(name, new Set());
      named.get(name)!.add(k);
    }
  }
  // git init or clone, or a repository named by the environment: what git add stages is unknown
  const makesRepository = commands.some((cmd) => {
    const texts = cmd.words.map((w) => literalOf(w) ?? "");
    const git = texts.findIndex((t) => basename(t) === "git");
    const gitEnv = [...cmd.assigns, ...cmd.words].some((w) => /^(export\s+)?GIT_(DIR|WORK_TREE|INDEX_FILE|COMMON_DIR|OBJECT_DIRECTORY)=/.test(literalOf(w) ?? w.raw));
    return gitEnv || (git >= 0 && texts.slice(git + 1).some((t) => t === "init" || t === "clone" || t === "--git-dir" || t.startsWith("--git-dir=") || t === "--work-tree" || t.startsWith("--work-tree=")));
  });
  return { commands: commands.length, named, makesRepository };
}

interface Arg {
  tokens: Tok[];
  raw: string;
  text: string;
  literal: boolean;
}

function expand(words: readonly Word[], c: Checking): Arg[] | string {
  const out: Arg[] = [];
  for (const w of words) {
    const alts = wordPatterns(w, c.env);
    if (alts === null) return `${shown(w.raw)} expands to too many words to check`;
    for (const a of alts) {
      if (hasAny(a) && c.lenient) {
        // computed: the sandbox's to judge, but a literal part that names a protected place is plain (`"$X"/.longrun`)
        const t = textHit(textOf(a), "write", c.protect);
        if (t) return `${shown(w.raw)} names ${t}`;
        continue;
      }
      if (hasAny(a)) {
        return `longrun cannot tell what ${shown(w.raw)} expands to, and under any lease a word that could name longrun's files is refused; spell the path out`;
      }
      out.push({ tokens: a, raw: w.raw, text: textOf(a), literal: isLiteral(a) });
    }
  }
  return out;
}

function commandRefusal(cmd: Command, at: number, c: Checking, dotglob: boolean, depth: number): string | null {
  const all = expand([...cmd.assigns, ...cmd.words], c);
  if (typeof all === "string") return all;
  const targets = expand(cmd.redirects.filter((r) => !r.heredoc).map((r) => r.target), c);
  if (typeof targets === "string") return targets;
  const words = all.slice(cmd.assigns.length);

  // Every word and redirection target: a path into protected files, or text naming them.
  const cwdProtected = pathHit([], "write", c.protect) !== null;
  for (const a of [...all, ...targets]) {
    if (isAgentInvocation(words, a)) continue;
    // an option (`-rf`, `--grep`) is no path unless the directory itself is protected; `--x=value` is scanned as text below
    const option = a.literal && a.text.startsWith("-") && !cwdProtected;
    const hit = option ? null : pathHit(a.tokens, "write", c.protect, dotglob);
    if (hit) return `${shown(a.raw)} reaches ${hit.what} (${hit.path})`;
    if (a.literal) {
      const t = textHit(a.text, "write", c.protect);
      if (t) return `${shown(a.raw)} names ${t}`;
    }
  }
  for (const r of cmd.redirects) {
    if (r.heredoc?.literal) {
      const t = textHit(r.heredoc.body, "write", c.protect);
      if (t) return `the heredoc names ${t}`;
    }
  }

  const program = words[0];
  if (!program) return null;
  if (!program.literal && !c.lenient) return `the program ${shown(program.raw)} is a pattern, so longrun cannot tell what runs`;
  const texts = words.map((w) => w.text);
  const strict = !c.lenient;

  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const name = basename(w.text);
    // longrun itself, by any name or path, except `longrun status` and friends
    if (w.literal && isLongrunProgram(w.text, c.protect) && !(i === 0 && AGENT_SUBCOMMANDS.has(texts[1] ?? ""))) {
      return `it runs or handles longrun's executable (${shown(w.raw)} ${texts[i + 1] ?? ""}); only \`longrun status\` is the agent's, the rest is the user's side`;
    }
    // an operand pattern names the executable only through what it matches on disk (pathHit above)
    if (i === 0 && !w.literal && matchesExeName(w.tokens, c.protect, dotglob)) return `the glob ${shown(w.raw)} could name longrun's executable`;
    if (strict && COMMAND_BUILDERS.names.has(name)) return `${name} builds commands from input longrun cannot see; list the files, or use find -exec with explicit name tests`;
    const interp = INTERPRETERS.find((x) => x.name.test(name));
    if (strict && interp && w.literal && inlineCode(interp.inline, texts.slice(i + 1), i === 0 ? cmd.stdin : "none", interp.anywhere)) {
      return `${name} runs code given inline, which longrun cannot check; write the code to a file in the project and run that file`;
    }
    if (name === "git") {
      const why = gitConfigOverride(texts.slice(i + 1)) ?? gitConfigWrite(texts.slice(i + 1));
      if (why) return why;
    }
    if (w.literal && (name === "sed" || name === "gsed")) {
      const why = sedRefusal(texts.slice(i + 1));
      if (why) return why;
    }
    const bad = w.literal && strict ? commandOption(name, texts.slice(i + 1)) : undefined;
    if (bad !== undefined) return `${name} ${shown(bad)} hands ${name} a command to run, which longrun cannot check`;
    if (w.literal && name === "ssh") {
      const why = sshRefusal(texts.slice(i + 1), c, depth);
      if (why) return why;
    }
    if (SHELLS.name.test(name)) {
      const why = shellRefusal(cmd, words, i, at, c, depth);
      if (why) return why;
    }
    if (w.literal && (i === 0 || WRAPPERS.names.has(basename(texts[0]!)))) {
      const why = runRefusal(texts, i, at, c, depth);
      if (why) return why;
    }
    if (w.literal && TREE_PROGRAMS.has(name)) {
      const why = treeOperationRefusal(texts.slice(i), c.protect) ?? (name === "git" ? gitAddRefusal(texts.slice(i), c.protect, c.view.makesRepository) ?? gitTrackedRefusal(texts.slice(i), c.protect) : null);
      if (why) return why;
    }
    if (w.literal && (name === "tar" || name === "rsync" || name === "zip" || name === "cpio")) {
      const why = fileListRefusal(name, texts.slice(i + 1), c.protect);
      if (why) return why;
    }
    if (strict && w.literal && name === "tar") {
      const renames = texts.slice(i + 1).find((t) => /^--(transform|xform)(=|$)/.test(t));
      if (renames) return `tar ${renames.split("=")[0]} renames what it writes, so longrun cannot tell where the files land`;
    }
    const shellFlags = Object.hasOwn(SHELL_STRING_FLAGS, name) ? SHELL_STRING_FLAGS[name]!.flags : undefined;
    if (shellFlags?.length) {
      for (let k = i + 1; k < words.length; k++) {
        if (shellFlags.includes("*") || shellFlags.includes(texts[k - 1]!)) {
          const why = nestedRefusal(texts[k]!, c, depth);
          if (why) return why;
          if (!shellFlags.includes("*")) break;
        }
      }
    }
  }

  const first = texts[0]!;
  if (first === "eval") {
    const why = nestedRefusal(texts.slice(1).join(" "), c, depth);
    if (why) return `eval: ${why}`;
  }
  if (strict && SCHEDULERS.names.has(basename(first))) return `${basename(first)} schedules commands to run later, outside this turn and its lease; run them now, or ask the user`;
  const findAt = words.findIndex((w) => w.literal && basename(w.text) === "find");
  if (findAt >= 0) {
    const why = (strict ? findRefusal(words.slice(findAt + 1), dotglob) : null) ?? findTreeRefusal(texts.slice(findAt + 1), c.protect);
    if (why) return why;
  }
  return null;
}

/** `ssh host command…`: the remote command is shell text, checked like a `sh -c` text. */
function sshRefusal(after: readonly string[], c: Checking, depth: number): string | null {
  const withValue = new Set(["-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w"]);
  let k = 0;
  while (k < after.length && after[k]!.startsWith("-")) k += withValue.has(after[k]!) ? 2 : 1;
  const command = after.slice(k + 1).join(" ");
  return command ? nestedRefusal(command, c, depth) : null;
}

/** `longrun status` in command position is the agent's own; its words may name longrun. */
function isAgentInvocation(words: Arg[], a: Arg): boolean {
  return words[0] === a && AGENT_SUBCOMMANDS.has(words[1]?.text ?? "");
}

function matchesExeName(tokens: readonly Tok[], ctx: ProtectContext, dotglob: boolean): boolean {
  const last: Tok[] = [];
  for (const t of tokens) {
    if (t.t === "c" && t.c === "/") last.length = 0;
    else last.push(t);
  }
  return ctx.exeNames.some((n) => tokensMatch(last, n, dotglob));
}

function nestedRefusal(text: string, c: Checking, depth: number): string | null {
  c.budget.bytes += text.length;
  if (c.budget.bytes > LEASE_LIMITS.bytes) return `it runs more than ${LEASE_LIMITS.bytes} characters of shell text (scripts and -c texts included), too much to check; split it into several calls`;
  let script: Script;
  try {
    script = parseShell(text);
  } catch (e) {
    if (e instanceof ShellParseError) return `shell text longrun cannot read (${e.message})`;
    throw e;
  }
  return scriptRefusal(script, c, depth + 1);
}

const TREE_PROGRAMS = new Set(TREE_OPERATIONS.map((o) => o.program));

/**
 * The program at `i` run from a file the gate can read: `source F` / `. F`, a path (`./x.sh`,
 * `bin/run`), an interpreter's script operand, a package.json script, a makefile.
 */
function runRefusal(texts: readonly string[], i: number, at: number, c: Checking, depth: number): string | null {
  const t = texts[i]!;
  const name = basename(t);
  const shell = (text: string) => nestedRefusal(text, { ...c, lenient: true }, depth);
  if ((t === "source" || t === ".") && texts[i + 1]) return scriptFileRefusal(texts[i + 1]!, "shell", at, c.view, c.protect, shell);
  if (t.includes("/") && !isLongrunProgram(t, c.protect)) {
    const why = scriptFileRefusal(t, "program", at, c.view, c.protect, shell);
    if (why) return why;
  }
  if (CODE_RUNNERS.name.test(name)) {
    const after = texts.slice(i + 1);
    const m = after.findIndex((x) => x === "-m" || (x.startsWith("-m") && x.length > 2 && !x.startsWith("--")));
    if (m >= 0 && /^python|^pypy/.test(name)) {
      // python -m NAME runs ./NAME.py or ./NAME/__main__.py before anything installed
      const mod = (after[m] === "-m" ? after[m + 1] : after[m]!.slice(2)) ?? "";
      const local = mod.replaceAll(".", "/");
      for (const f of [`${local}.py`, `${local}/__main__.py`]) {
        const why = /^[\w.]+$/.test(mod) ? scriptFileRefusal(f, "code", at, { ...c.view, commands: 1 }, c.protect, shell) : null;
        if (why) return why;
      }
    }
    const k = after.findIndex((x) => !x.startsWith("-") || x === "-m");
    const file = k >= 0 && after[k] !== "-m" && !(k > 0 && /^-(m|c|e|r|W|X)$/.test(after[k - 1]!)) ? after[k] : undefined;
    if (file !== undefined) return scriptFileRefusal(file, "code", at, c.view, c.protect, shell);
  }
  if (name === "bun" || name === "deno") {
    const k = texts.findIndex((x, j) => j > i && (x === "run" || x.endsWith(".ts") || x.endsWith(".js")));
    const file = k >= 0 ? (texts[k] === "run" ? texts.slice(k + 1).find((x) => !x.startsWith("-")) : texts[k]) : undefined;
    if (file !== undefined && /\.(ts|js|mjs|cjs|tsx|jsx)$/.test(file)) return scriptFileRefusal(file, "code", at, c.view, c.protect, shell);
  }
  return packageScriptRefusal(texts.slice(i), c.protect, shell) ?? makefileRefusal(texts.slice(i), c.protect);
}

/** `sh -c TEXT`, `bash script.sh`, `sh < file`, `bash <<EOF`: check the text when it is there. */
function shellRefusal(cmd: Command, words: Arg[], at: number, index: number, c: Checking, depth: number): string | null {
  const after = words.slice(at + 1);
  const ci = after.findIndex((w) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w.text));
  if (ci >= 0) {
    const body = after[ci + 1];
    if (!body) return "a shell -c without its text";
    return nestedRefusal(body.text, c, depth);
  }
  // the script is the first operand; -o, -O and --rcfile take a value first
  const operand = after.find((w, k) => !w.text.startsWith("-") && !w.text.startsWith("+") && !(k > 0 && /^([-+][oO]|--rcfile|--init-file)$/.test(after[k - 1]!.text)));
  const rc = after.findIndex((w) => w.text === "--rcfile" || w.text === "--init-file");
  if (rc >= 0 && after[rc + 1]) {
    const why = scriptFileRefusal(after[rc + 1]!.text, "shell", index, c.view, c.protect, (text) => nestedRefusal(text, { ...c, lenient: true }, depth));
    if (why) return why;
  }
  if (operand) return scriptFileRefusal(operand.text, "shell", index, c.view, c.protect, (text) => nestedRefusal(text, { ...c, lenient: true }, depth));
  if (at === 0 && cmd.stdin === "file") {
    const from = cmd.redirects.find((r) => r.op === "<" && r.fd === null);
    const file = from ? literalOf(from.target) : null;
    if (file === null) return "a shell reading commands from a file longrun cannot name";
    return scriptFileRefusal(file, "shell", index, c.view, c.protect, (text) => nestedRefusal(text, { ...c, lenient: true }, depth));
  }
  if (at === 0 && cmd.stdin === "data") {
    const h = cmd.redirects.find((r) => r.heredoc)?.heredoc;
    if (h?.literal) return nestedRefusal(h.body, c, depth);
    if (h) {
      const text = h.parts.every((p) => p.t === "lit") ? h.parts.map((p) => (p as { v: string }).v).join("") : null;
      if (text !== null) return nestedRefusal(text, c, depth);
      return "a shell reading a heredoc with expansions longrun cannot know";
    }
    return "a shell reading a here-string; put the commands in the command itself";
  }
  if (at === 0 && cmd.stdin === "pipe") return "a shell reading commands from a pipe, which longrun cannot check";
  return null;
}
