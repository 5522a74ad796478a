/**
 * What a Claude Code tool call means for longrun, decided from its name and input alone (pure):
 * - `protected`: it targets longrun's own files (`.longrun/`, `memory.db`, `raw_data/`) or runs
 *   longrun's host-side commands. Refused whatever the lease says: the agent runs as the same OS
 *   user as the host and could otherwise read a token or grant itself a lease.
 * - `write`: a write tool (Edit, Write, MultiEdit, NotebookEdit; Bash unless read-only), with the
 *   action string the gate checks: `<Tool> <path relative to the root>` or `Bash <command>`.
 * - `none`: anything else (reads, searches); longrun has no opinion.
 */
import { basename } from "node:path";
import { isReadOnlyBash, unquoted } from "./bash.ts";

export type ToolDecision =
  | { kind: "protected"; reason: string }
  | { kind: "write"; action: string }
  | { kind: "none" };

export const WRITE_TOOLS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);
const PATH_FIELDS = ["file_path", "path", "notebook_path", "pattern", "glob"];
const PROTECTED = /(^|[\s/"'=:])(\.longrun(\/|\s|$|["'])|memory\.db|raw_data(\/|\s|$|["']))/;
/** longrun subcommands an agent may run itself; everything else (serve, http, hook, …) is the host's. */
const AGENT_SUBCOMMANDS = new Set(["status", "--version", "-v", "version", "--help", "-h", "help"]);

function relativeTo(root: string, path: string): string {
  const prefix = root.endsWith("/") ? root : root + "/";
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/** The names longrun runs under here: `longrun`, and this executable's own name if it was renamed. */
function ownNames(): string[] {
  const self = basename(process.execPath);
  return /^(bun|deno|node)(\.exe)?$/.test(self) || self === "longrun" ? ["longrun"] : ["longrun", self];
}

function invokesHostCommand(command: string): boolean {
  const plain = unquoted(command);
  for (const name of ownNames()) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const re = new RegExp(`(?:^|[\\s;&|()\`/=])${escaped}(?:\\s+(\\S+))?`, "g");
    for (const m of plain.matchAll(re)) {
      if (!AGENT_SUBCOMMANDS.has(m[1] ?? "")) return true;
    }
  }
  return false;
}

export function classifyTool(
  toolName: string,
  input: Record<string, unknown>,
  root: string,
  readOnlyBash: readonly string[],
): ToolDecision {
  const strings = PATH_FIELDS.map((f) => input[f]).filter((v): v is string => typeof v === "string");
  if (strings.some((s) => PROTECTED.test(" " + relativeTo(root, s)))) {
    return { kind: "protected", reason: `${toolName} targets longrun's own files (.longrun/, memory.db, raw_data/), which agents may not touch` };
  }
  if (toolName === "Bash") {
    const command = typeof input.command === "string" ? input.command : "";
    if (PROTECTED.test(" " + unquoted(command))) {
      return { kind: "protected", reason: "this command touches longrun's own files (.longrun/, memory.db, raw_data/), which agents may not touch" };
    }
    if (invokesHostCommand(command)) {
      return { kind: "protected", reason: "this command runs a longrun host-side command; only the user's side may do that" };
    }
    return isReadOnlyBash(command, readOnlyBash) ? { kind: "none" } : { kind: "write", action: `Bash ${command}` };
  }
  if (WRITE_TOOLS.has(toolName)) {
    const target = [input.file_path, input.notebook_path, input.path].find((v): v is string => typeof v === "string") ?? "";
    return { kind: "write", action: `${toolName} ${relativeTo(root, target)}`.trim() };
  }
  return { kind: "none" };
}
