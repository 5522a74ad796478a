/**
 * Script files a command runs under a lease (`bash c.sh`, `source c.sh`, `./run.sh`, `python3
 * x.py`, `npm test`, `make`): the gate reads them as they are on disk when it decides, so a script
 * that reaches longrun's files is refused like the command itself would be. Shell scripts are
 * parsed and checked in full; other programs' files (Python, JavaScript, Makefiles) are scanned as
 * text for protected names and longrun's host commands, which a program can compute at run time
 * (`'.lo' + 'ngrun'`): that, and compiled programs, are held by the operating system's sandbox,
 * not here. A script that the same command writes, or that does not exist yet while the command
 * does other things first, cannot be read in advance and is refused.
 */
import { readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import type { ProtectContext } from "./protect.ts";
import { textHit } from "./protect_text.ts";
import { resolveExisting } from "./resolve.ts";
import { shown } from "./shell/words.ts";
import { treeHit } from "./tree_walk.ts";

/** Script files larger than this are not read; running one is refused. */
export const MAX_SCRIPT_BYTES = 1024 * 1024;

/** Checks shell text as a nested script (lease_bash's own check), or says why it is refused. */
export type ShellCheck = (text: string) => string | null;

/** What the rest of the script does: how many simple commands, and every path it names, resolved. */
export interface ScriptView {
  commands: number;
  /** The last path segment of every word and redirection target, with the commands naming it (by index). */
  named: ReadonlyMap<string, ReadonlySet<number>>;
  /** The script makes a repository or points git at another one (git init, GIT_DIR=…). */
  makesRepository?: boolean;
}

const SHELL_NAMES = /^(sh|bash|dash|zsh|ksh|mksh|ash)$/;

/** Reading a file costs its decision's disk budget one lookup per 64 bytes (a scan is linear in them). */
function read(path: string, ctx: ProtectContext): { text: string } | { missing: true } | { why: string } {
  let st;
  try {
    st = statSync(path);
  } catch {
    return { missing: true };
  }
  if (!st.isFile()) return { missing: true };
  if (st.size > MAX_SCRIPT_BYTES) return { why: `it is larger than ${MAX_SCRIPT_BYTES} bytes, too large to check` };
  if (ctx.budget) {
    ctx.budget.left -= Math.ceil(st.size / 64);
    if (ctx.budget.left < 0) return { why: "the command reads more files than one decision may check; split it into several calls" };
  }
  try {
    return { text: readFileSync(path, "latin1") };
  } catch (e) {
    return { why: `it cannot be read (${(e as Error).message})` };
  }
}

/**
 * Why running the file `file` (as `how`: a shell script, any program file, or data an
 * interpreter reads as code) is refused, or null.
 */
export function scriptFileRefusal(file: string, how: "shell" | "program" | "code", at: number, view: ScriptView, ctx: ProtectContext, shell: ShellCheck): string | null {
  const abs = resolveExisting(file.startsWith("/") ? file : `${ctx.cwd}/${file}`);
  // /dev/stdin, /dev/fd/N, /proc/self/fd/N: whatever the command feeds it, not a file on disk
  if (/^\/(dev|proc)\//.test(abs) || /^\/(dev|proc)\//.test(file)) return `it runs ${shown(file)}, which is whatever the command feeds it, not a file longrun can read first`;
  const others = [...(view.named.get(basename(file)) ?? []), ...(view.named.get(basename(abs)) ?? [])].filter((k) => k !== at);
  if (others.length) return `it runs ${shown(file)}, which another part of the same command writes or names, so longrun cannot read what will run; write the file in one call and run it in the next`;
  const got = read(abs, ctx);
  if ("missing" in got) {
    return view.commands > 1 ? `it runs ${shown(file)}, which does not exist yet and could be made by the rest of the command; create it in one call and run it in the next` : null;
  }
  if ("why" in got) return `it runs ${shown(file)}, and ${got.why}`;
  const text = got.text;
  if (text.slice(0, 8192).includes("\u0000")) return null; // a compiled program: the sandbox holds it
  const first = text.startsWith("#!") ? text.slice(2, text.indexOf("\n") >>> 0).trim().split(/\s+/) : [];
  const interpreter = basename(first[0] === "/usr/bin/env" || first[0] === "/bin/env" ? (first.find((w, k) => k > 0 && !w.startsWith("-")) ?? "") : (first[0] ?? ""));
  const asShell = how === "shell" || (how === "program" && (SHELL_NAMES.test(interpreter) || (first.length === 0 && !/\.(py|js|mjs|cjs|ts|pl|rb|php|lua)$/.test(abs))));
  if (asShell) {
    const why = shell(text);
    return why ? `the script ${shown(file)} it runs: ${why}` : null;
  }
  const hit = textHit(text, "write", ctx);
  return hit ? `the file ${shown(file)} it runs names ${hit}` : null;
}

/** `npm test`, `npm run build`, `pnpm run x`, `yarn x`, `bun run x`: the package.json scripts they run. */
export function packageScriptRefusal(words: readonly string[], ctx: ProtectContext, shell: ShellCheck): string | null {
  const tool = basename(words[0] ?? "");
  if (!["npm", "pnpm", "yarn", "bun"].includes(tool)) return null;
  const rest = words.slice(1).filter((w) => !w.startsWith("-"));
  let name: string | undefined;
  if (["run", "run-script", "rum", "urn"].includes(rest[0] ?? "")) name = rest[1];
  else if (["test", "t", "tst", "start", "stop", "restart"].includes(rest[0] ?? "")) name = rest[0] === "t" || rest[0] === "tst" ? "test" : rest[0];
  else if (tool === "yarn" && rest[0] !== undefined) name = rest[0];
  if (name === undefined) return null;
  const got = read(`${ctx.cwd}/package.json`, ctx);
  if (!("text" in got)) return "missing" in got ? null : `package.json: ${got.why}`;
  let scripts: Record<string, unknown>;
  try {
    scripts = (JSON.parse(got.text) as { scripts?: Record<string, unknown> }).scripts ?? {};
  } catch {
    return null; // npm refuses a broken package.json too
  }
  for (const key of [`pre${name}`, name, `post${name}`]) {
    const body = typeof scripts === "object" && scripts !== null && Object.hasOwn(scripts, key) ? scripts[key] : undefined;
    if (typeof body !== "string") continue;
    const why = shell(body);
    if (why) return `package.json's ${key} script ${why}`;
  }
  return null;
}

/** `make`: the makefile's text (its recipes are shell lines) is scanned for protected names. */
export function makefileRefusal(words: readonly string[], ctx: ProtectContext): string | null {
  if (!/^(make|gmake)$/.test(basename(words[0] ?? ""))) return null;
  const f = words.findIndex((w) => w === "-f" || w === "--file" || w === "--makefile");
  const files = f >= 0 && words[f + 1] ? [words[f + 1]!] : ["GNUmakefile", "makefile", "Makefile"];
  const cd = words.findIndex((w) => w === "-C" || w === "--directory");
  const dir = cd >= 0 && words[cd + 1] ? (words[cd + 1]!.startsWith("/") ? words[cd + 1]! : `${ctx.cwd}/${words[cd + 1]}`) : ctx.cwd;
  for (const name of files) {
    const got = read(name.startsWith("/") ? name : `${dir}/${name}`, ctx);
    if ("missing" in got) continue;
    if ("why" in got) return `${name}: ${got.why}`;
    const hit = textHit(got.text, "write", ctx);
    if (hit) return `${name}, which make runs, names ${hit}`;
    break;
  }
  return null;
}

/**
 * A file that lists the files a program takes (`tar -T list`): each line is a path, and a
 * directory among them is taken whole. Why the list reaches protected files, or null.
 */
export function fileListHit(file: string, ctx: ProtectContext): string | null {
  const got = read(file.startsWith("/") ? file : `${ctx.cwd}/${file}`, ctx);
  if ("missing" in got) return null;
  if ("why" in got) return got.why;
  const lines = got.text.split(/[\n\0]/).map((l) => l.trim()).filter(Boolean);
  if (lines.length > 10_000) return "it lists more than 10000 paths, too many to check";
  for (const line of lines) {
    const hit = treeHit(line, "read", ctx);
    if (hit) return `it lists ${shown(line)}, which reaches ${hit.what} (${hit.path})`;
  }
  return null;
}
