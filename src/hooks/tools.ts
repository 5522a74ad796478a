/**
 * What a Claude Code tool call means for the gate, decided from its payload (deny by default):
 * - `deny`: refused whatever the lease says: a malformed payload, a protected path, a host-side
 *   command, an attempt to write the user's approval, a request to leave the sandbox;
 * - `pass`: known to change nothing (a read-only tool, or Bash proven read-only), no lease needed;
 * - `lease`: a write, allowed only under the current turn's lease, checked as `action`.
 * The hook never answers "allow": a call that passes gets no decision, so Claude Code's own
 * permission rules and prompts still apply.
 */
import { isAbsolute, relative } from "node:path";
import { leaseRefusal } from "./lease_bash.ts";
import { type Access, globNamesHit, pathHit, type ProtectContext, resolveExisting, textHit } from "./protect.ts";
import { readOnlyRefusal } from "./readonly_bash.ts";
import { parseShell, ShellParseError } from "./shell/parse.ts";
import { type Tok, type WordEnv, wordPatterns } from "./shell/words.ts";

export type ToolDecision =
  | { kind: "deny"; reason: string }
  | { kind: "pass" }
  | { kind: "lease"; action: string; tool: string; shell: boolean; notReadOnly?: string };

/**
 * Tools that change nothing in the project, with the input fields that name what they read.
 * Checked against Claude Code's tools reference; users add their own (e.g. read-only MCP tools)
 * in `.longrun/hooks.json` as `read_only_tools`.
 */
export const READ_ONLY_TOOLS: Readonly<Record<string, readonly string[]>> = {
  Read: ["file_path"],
  Grep: ["path"],
  Glob: ["path"],
  LSP: ["file_path", "filePath"],
  NotebookRead: ["notebook_path"],
  WebFetch: [],
  WebSearch: [],
  TodoWrite: [],
  Agent: [],
  Task: [],
  AskUserQuestion: [],
  EnterPlanMode: [],
  ExitPlanMode: [],
  ListMcpResourcesTool: [],
  ReadMcpResourceTool: [],
  ToolSearch: [],
  WaitForMcpServers: [],
  TaskOutput: [],
  TaskGet: [],
  TaskList: [],
  TaskCreate: [],
  TaskUpdate: [],
  TaskStop: [],
  BashOutput: [],
  Skill: [],
};

/** Tools that write one file, with the field that names it. */
export const WRITE_TOOLS: Readonly<Record<string, string>> = {
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
};

/** Inputs larger than this are not scanned; they are refused. */
const MAX_SCAN_CHARS = 1_000_000;

export interface ToolContext {
  protect: ProtectContext;
  env: WordEnv;
  approveMarker: string;
  readOnlyTools: readonly string[];
  bashReadOnly: readonly string[];
  trustedPrograms: readonly string[];
  path: string;
}

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

function deny(reason: string): ToolDecision {
  return { kind: "deny", reason };
}

/** Decides a PreToolUse payload. Everything it does not recognise is denied. */
export async function decideTool(input: unknown, c: ToolContext): Promise<ToolDecision> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return deny("the hook input is not a JSON object, so the call cannot be checked");
  const p = input as Record<string, unknown>;
  if (p.hook_event_name !== undefined && p.hook_event_name !== "PreToolUse") return deny(`the hook input is for ${JSON.stringify(p.hook_event_name)}, not PreToolUse`);
  const tool = p.tool_name;
  if (typeof tool !== "string" || tool === "") return deny("the hook input has no tool_name, so the call cannot be checked");
  if (CONTROL.test(tool) || tool.length > 200) return deny("the tool name is malformed");
  const ti = p.tool_input ?? {};
  if (typeof ti !== "object" || ti === null || Array.isArray(ti)) return deny(`the input of ${tool} is not a JSON object`);
  const args = ti as Record<string, unknown>;
  if (sizeOf(args) > MAX_SCAN_CHARS) return deny(`the input of ${tool} is too large to check`);
  if (args.dangerouslyDisableSandbox === true) return deny("commands may not leave the sandbox: the sandbox is what keeps longrun's files out of reach");
  // a call that names no path works in the working directory: inside longrun's files, nothing is checked-safe
  const inside = checkPath(c.env.cwd, "read", c, tool);
  if (inside) return deny(`the working directory ${c.env.cwd} is inside longrun's files; work from the project directory`);

  if (tool === "Bash") return bashDecision(args, c);
  const target = WRITE_TOOLS[tool];
  if (target !== undefined) return writeDecision(tool, args[target], c);
  if (tool === "Skill" || tool === "SlashCommand") {
    const forged = approvalIn(args, c.approveMarker, true);
    if (forged) return deny(forged);
  }
  const reads = READ_ONLY_TOOLS[tool];
  if (reads !== undefined || c.readOnlyTools.includes(tool)) return readDecision(tool, args, reads ?? [], c);
  return unknownDecision(tool, args, c);
}

function sizeOf(v: unknown): number {
  try {
    return JSON.stringify(v).length;
  } catch {
    return Infinity;
  }
}

/** The text of a path field resolved against the working directory, or a refusal. */
function pathField(value: unknown, field: string, tool: string): string | ToolDecision {
  if (typeof value !== "string" || value === "") return deny(`${tool} has no ${field}, so the call cannot be checked`);
  if (CONTROL.test(value) || value.includes("\n")) return deny(`${tool}'s ${field} contains control characters`);
  return value;
}

const lit = (s: string): Tok[] => [...s].map((ch) => ({ t: "c", c: ch }) as Tok);

function checkPath(path: string, access: Access, c: ToolContext, tool: string): ToolDecision | null {
  const expanded = path === "~" || path.startsWith("~/") ? c.env.home + path.slice(1) : path;
  const hit = pathHit(lit(expanded), access, c.protect);
  if (hit) return deny(`${tool} ${access === "read" ? "reads" : "writes"} ${hit.what} (${hit.path}), which agents may not touch under any lease`);
  return null;
}

function writeDecision(tool: string, value: unknown, c: ToolContext): ToolDecision {
  const path = pathField(value, WRITE_TOOLS[tool]!, tool);
  if (typeof path !== "string") return path;
  const refused = checkPath(path, "write", c, tool);
  if (refused) return refused;
  return { kind: "lease", action: `${tool} ${rootRelative(path, c)}`, tool, shell: false };
}

/**
 * The path as the lease's scope sees it: relative to the root when the resolved path (symlinked
 * parents and target included) is inside it, else absolute, which no scope pattern matches.
 */
export function rootRelative(path: string, c: ToolContext): string {
  const abs = isAbsolute(path) ? path : `${c.protect.cwd}/${path}`;
  const real = resolveExisting(abs);
  const root = resolveExisting(c.protect.root);
  const rel = relative(root, real);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return real;
  return rel;
}

/** Read tools whose path field is required: without it the call is malformed, and malformed is refused. */
const REQUIRED_PATH: Readonly<Record<string, string>> = { Read: "file_path", NotebookRead: "notebook_path" };

function readDecision(tool: string, args: Record<string, unknown>, fields: readonly string[], c: ToolContext): ToolDecision {
  const required = REQUIRED_PATH[tool];
  if (required !== undefined && args[required] === undefined) return deny(`${tool} has no ${required}, so the call cannot be checked`);
  for (const f of fields) {
    const v = args[f];
    if (v === undefined) continue;
    const path = pathField(v, f, tool);
    if (typeof path !== "string") return path;
    const refused = checkPath(path, "read", c, tool);
    if (refused) return refused;
  }
  // Glob's pattern and Grep's file filter name what they reach: `.longrun/**`, `{.lo,x}ngrun/*`
  for (const f of tool === "Glob" ? ["pattern"] : tool === "Grep" ? ["glob"] : []) {
    if (typeof args[f] !== "string") continue;
    const refused = searchGlobRefusal(tool, args[f] as string, c);
    if (refused) return refused;
  }
  return { kind: "pass" };
}

function searchGlobRefusal(tool: string, glob: string, c: ToolContext): ToolDecision | null {
  const t = textHit(glob, "read", c.protect);
  if (t) return deny(`${tool} reaches ${t}, which agents may not read`);
  let alternatives: Tok[][] | null = null;
  try {
    const script = parseShell(glob);
    const word = script.commands.length === 1 && script.commands[0]!.words.length === 1 ? script.commands[0]!.words[0]! : null;
    alternatives = word ? wordPatterns(word, c.env) : null;
  } catch (e) {
    if (!(e instanceof ShellParseError)) throw e;
  }
  if (alternatives === null) return deny(`${tool}'s pattern ${JSON.stringify(glob)} cannot be checked; write it plainly`);
  for (const alt of alternatives) {
    const rule = globNamesHit(alt, "read");
    if (rule) return deny(`${tool}'s pattern ${JSON.stringify(glob)} could reach ${rule.what}, which agents may not read`);
  }
  return null;
}

async function bashDecision(args: Record<string, unknown>, c: ToolContext): Promise<ToolDecision> {
  const command = args.command;
  if (typeof command !== "string" || command.trim() === "") return deny("Bash has no command, so the call cannot be checked");
  if (CONTROL.test(command)) return deny("the command contains control characters (they can hide what it does)");
  let script;
  try {
    script = parseShell(command);
  } catch (e) {
    if (!(e instanceof ShellParseError)) throw e;
    return deny(`longrun cannot read this command with certainty (${e.message}), so it is refused; write it plainly`);
  }
  const notReadOnly = await readOnlyRefusal(script, c.protect, c.env, { extra: c.bashReadOnly, trustedPrograms: c.trustedPrograms, path: c.path });
  if (notReadOnly === null) return { kind: "pass" };
  const protectedHit = leaseRefusal(command, { protect: c.protect, env: c.env });
  if (protectedHit) return deny(`${protectedHit} (refused under any lease)`);
  // A shell can write anywhere, so the lease is checked for "Bash" itself: an unscoped lease
  // covers it, a scoped one only when the user put Bash in its scope.
  return { kind: "lease", action: "Bash", tool: "Bash", shell: true, notReadOnly };
}

/** Unknown tools (MCP tools, PowerShell, new tools): writes, and never near protected files. */
function unknownDecision(tool: string, args: Record<string, unknown>, c: ToolContext): ToolDecision {
  const forged = approvalIn(args, c.approveMarker, false);
  if (forged) return deny(forged);
  let checked = 0;
  for (const s of strings(args)) {
    const t = textHit(s, "write", c.protect);
    if (t) return deny(`${tool} names ${t}, which agents may not touch under any lease`);
    // a string that looks like a path is resolved too (symlinks, ~)
    if (checked < 200 && s.length < 4096 && !CONTROL.test(s) && !s.includes("\n") && /^(\/|~\/|\.{1,2}\/)|\//.test(s)) {
      checked++;
      const refused = checkPath(isAbsolute(s) || s.startsWith("~") ? s : `${c.protect.cwd}/${s}`, "write", c, tool);
      if (refused) return refused;
    }
  }
  return { kind: "lease", action: tool, tool, shell: false };
}

function* strings(v: unknown, depth = 0): Generator<string> {
  if (depth > 32) return;
  if (typeof v === "string") yield v;
  else if (Array.isArray(v)) for (const x of v) yield* strings(x, depth + 1);
  else if (typeof v === "object" && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      yield k;
      yield* strings(x, depth + 1);
    }
  }
}

/**
 * The user's approval is typed by the user into a prompt. A tool that would carry the marker
 * (a skill or command named after it, a scheduled prompt, a message) could forge it.
 */
function approvalIn(args: Record<string, unknown>, marker: string, isCommand: boolean): string | null {
  const bare = marker.replace(/^\//, "").toLowerCase();
  for (const s of strings(args)) {
    const t = s.trim().toLowerCase();
    const name = t.split(/\s/)[0]!.replace(/^\//, "");
    if (isCommand && (name === bare || name.endsWith(":" + bare))) {
      return `${marker} is the user's approval; the agent may not invoke it`;
    }
    if (s.split(/\r?\n/).some((line) => line.trim().toLowerCase().startsWith(marker.toLowerCase()))) {
      return `this call carries a line starting with ${marker}, the user's approval, which only the user may type`;
    }
  }
  return null;
}
