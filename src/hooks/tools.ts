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
import { type MessageId, type Params, say } from "../core/messages/catalog.ts";
import { leaseRefusal } from "./lease_bash.ts";
import { pathHit, type ProtectContext } from "./protect.ts";
import type { Access } from "./protect_table.ts";
import { globNamesHit, textHit } from "./protect_text.ts";
import { resolveExisting } from "./resolve.ts";
import { readOnlyRefusal } from "./readonly_bash.ts";
import { parseShell, ShellParseError } from "./shell/parse.ts";
import { type Tok, type WordEnv, wordPatterns } from "./shell/words.ts";
import { OWN_MCP_PREFIX, TOOLS, type ToolRule, unknownToolReason } from "./tool_table.ts";

export type ToolDecision =
  /** `message`: the refusal as a catalog message, for the reader's language (`reason` is its English). */
  | { kind: "deny"; reason: string; message?: readonly [MessageId, Params] }
  | { kind: "pass"; shell?: ShellRun }
  | { kind: "lease"; action: string; tool: string; shell?: ShellRun; notReadOnly?: string };

/** A shell command that may run: the field that holds it, and whether it outlives the call. */
export interface ShellRun {
  field: string;
  command: string;
  background: boolean;
}

/** Inputs larger than this are not scanned; they are refused. */
const MAX_SCAN_CHARS = 1_000_000;

export interface ToolContext {
  protect: ProtectContext;
  env: WordEnv;
  approveMarker: string;
  readOnlyTools: readonly string[];
  leaseTools: readonly string[];
  bashReadOnly: readonly string[];
  trustedPrograms: readonly string[];
  path: string;
}

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

function deny(reason: string): ToolDecision {
  return { kind: "deny", reason };
}

/** A refusal worded by the catalog (src/core/messages/gate.ts), so the hook can say it in the root's language. */
function denySay(id: MessageId, params: Params = {}): ToolDecision {
  return { kind: "deny", reason: say(id, "en", params), message: [id, params] };
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
  if (args.dangerouslyDisableSandbox === true) return denySay("hook.leave_sandbox");
  // a call that names no path works in the working directory: inside longrun's files, nothing is checked-safe
  const inside = checkPath(c.env.cwd, "read", c, tool);
  if (inside) return denySay("hook.cwd_inside", { cwd: c.env.cwd });

  if (c.readOnlyTools.includes(tool)) return readDecision(tool, args, { kind: "read", paths: [] }, c);
  if (c.leaseTools.includes(tool)) return userLeaseDecision(tool, args, c);
  const rule: ToolRule | undefined = Object.hasOwn(TOOLS, tool) ? TOOLS[tool] : undefined;
  if (rule === undefined) {
    if (tool.startsWith(OWN_MCP_PREFIX)) return { kind: "pass" };
    return deny(unknownToolReason(tool));
  }
  for (const [field, why] of Object.entries(rule.refuse ?? {})) {
    if (args[field] !== undefined && args[field] !== null && args[field] !== false) return deny(`${tool} with ${field}: ${why}`);
  }
  switch (rule.kind) {
    case "shell":
      return shellDecision(tool, args, rule.background, c);
    case "write":
      return writeDecision(tool, rule.path, args[rule.path], c);
    case "read":
      return readDecision(tool, args, rule, c);
    case "inert": {
      const forged = approvalIn(args, c.approveMarker, rule.forgeCheck === true);
      return forged ? deny(forged) : { kind: "pass" };
    }
    case "deny":
      return deny(`${tool} is refused in every mode: ${rule.why}`);
  }
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
  if (hit) return denySay(access === "read" ? "hook.protected_read" : "hook.protected_write", { tool, what: hit.what, path: hit.path });
  return null;
}

function writeDecision(tool: string, field: string, value: unknown, c: ToolContext): ToolDecision {
  const path = pathField(value, field, tool);
  if (typeof path !== "string") return path;
  const refused = checkPath(path, "write", c, tool);
  if (refused) return refused;
  const rel = rootRelative(path, c);
  // a lease is for the project: outside the root lie the user's own files (a program on PATH
  // that longrun itself runs, among them), which Bash under a lease cannot write either
  if (isAbsolute(rel)) return denySay("hook.outside_project", { tool, path: rel, root: c.protect.root });
  return { kind: "lease", action: `${tool} ${rel}`, tool };
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

function readDecision(tool: string, args: Record<string, unknown>, rule: Extract<ToolRule, { kind: "read" }>, c: ToolContext): ToolDecision {
  if (rule.required !== undefined && args[rule.required] === undefined) return deny(`${tool} has no ${rule.required}, so the call cannot be checked`);
  for (const f of rule.paths) {
    const v = args[f];
    if (v === undefined) continue;
    const path = pathField(v, f, tool);
    if (typeof path !== "string") return path;
    const refused = checkPath(path, "read", c, tool);
    if (refused) return refused;
  }
  // Glob's pattern and Grep's file filter name what they reach: `.longrun/**`, `{.lo,x}ngrun/*`
  for (const f of rule.globs ?? []) {
    if (typeof args[f] !== "string") continue;
    const glob = args[f] as string;
    const refused = searchGlobRefusal(tool, glob, c);
    if (refused) return refused;
    // the pattern is relative to the path it searches: `{path: "/proc", pattern: "*/cwd/*"}`
    const base = rule.paths.map((p) => args[p]).find((v): v is string => typeof v === "string" && v !== "");
    if (base && !glob.startsWith("/")) {
      const joined = searchGlobRefusal(tool, `${base.replace(/\/+$/, "")}/${glob}`, c);
      if (joined) return joined;
    }
  }
  // a tool the user called read-only may still name a protected file in any field
  if (rule.paths.length === 0) {
    const named = namedProtected(tool, args, "read", c);
    if (named) return named;
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

async function shellDecision(tool: string, args: Record<string, unknown>, background: boolean, c: ToolContext): Promise<ToolDecision> {
  const command = args.command;
  if (typeof command !== "string" || command.trim() === "") return deny(`${tool} has no command, so the call cannot be checked`);
  if (CONTROL.test(command)) return denySay("hook.control_chars");
  const runsOn = background || args.run_in_background === true;
  const shell: ShellRun = { field: "command", command, background: runsOn };
  let script;
  try {
    script = parseShell(command);
  } catch (e) {
    if (!(e instanceof ShellParseError)) throw e;
    return denySay("hook.unreadable_command", { why: e.message });
  }
  const notReadOnly = await readOnlyRefusal(script, c.protect, c.env, { extra: c.bashReadOnly, trustedPrograms: c.trustedPrograms, path: c.path });
  if (notReadOnly === null) return { kind: "pass", shell };
  const protectedHit = leaseRefusal(script, { protect: c.protect, env: c.env });
  if (protectedHit) return denySay("hook.under_any_lease", { why: protectedHit });
  // a command that outlives the call would outlive the lease, and could change files between the
  // gate's check of a later call and its use
  if (runsOn) return denySay("hook.background", { tool });
  // A shell can write anywhere, so the lease is checked for "Bash" itself: an unscoped lease
  // covers it, a scoped one only when the user put Bash in its scope.
  return { kind: "lease", action: "Bash", tool, shell, notReadOnly };
}

/** A tool the user named in `lease_tools`: a write, never near protected files. */
function userLeaseDecision(tool: string, args: Record<string, unknown>, c: ToolContext): ToolDecision {
  const forged = approvalIn(args, c.approveMarker, false);
  if (forged) return deny(forged);
  const named = namedProtected(tool, args, "write", c);
  if (named) return named;
  return { kind: "lease", action: tool, tool };
}

/** Any string of a payload that names a protected path (text, or a path resolved on disk). */
function namedProtected(tool: string, args: Record<string, unknown>, access: Access, c: ToolContext): ToolDecision | null {
  let checked = 0;
  for (const s of strings(args)) {
    const t = textHit(s, access, c.protect);
    if (t) return deny(`${tool} names ${t}, which agents may not touch under any lease`);
    // a string that looks like a path is resolved too (symlinks, ~)
    if (checked < 200 && s.length < 4096 && !CONTROL.test(s) && !s.includes("\n") && /^(\/|~\/|\.{1,2}\/)|\//.test(s)) {
      checked++;
      const refused = checkPath(isAbsolute(s) || s.startsWith("~") ? s : `${c.protect.cwd}/${s}`, access, c, tool);
      if (refused) return refused;
    }
  }
  return null;
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
