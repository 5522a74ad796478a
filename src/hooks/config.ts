/**
 * Hook settings, read from `<root>/.longrun/hooks.json` when present (agents cannot edit it: the
 * gate protects `.longrun/` under any lease). Everything has a default; a malformed file is an
 * error, and the gate then denies (fail closed).
 *
 *   {
 *     "approve_marker": "/approve",
 *     "bash_read_only": ["npm test", "cargo check"],     command prefixes the user vouches for
 *     "read_only_tools": ["mcp__github__get_issue"],      tools that change nothing
 *     "trusted_programs": ["/home/me/.local/bin/rg"]      programs this user could modify, trusted anyway
 *   }
 */
import { readFileSync } from "node:fs";
import { DEFAULT_MARKER } from "./approval.ts";

export interface HookConfig {
  approve_marker: string;
  /** Extra Bash command prefixes allowed in read-only turns (the built-in table always applies). */
  bash_read_only: string[];
  read_only_tools: string[];
  trusted_programs: string[];
}

const KEYS = ["approve_marker", "bash_read_only", "read_only_tools", "trusted_programs"];

function stringList(raw: Record<string, unknown>, key: string, check: (s: string) => boolean, what: string): string[] {
  const v = raw[key];
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string" && check(x))) throw new Error(`.longrun/hooks.json: ${key} must be a list of ${what}`);
  return v as string[];
}

export function loadHookConfig(root: string): HookConfig {
  let text: string;
  try {
    text = readFileSync(`${root}/.longrun/hooks.json`, "utf8");
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return { approve_marker: DEFAULT_MARKER, bash_read_only: [], read_only_tools: [], trusted_programs: [] };
    throw e;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`.longrun/hooks.json is not valid JSON (${(e as Error).message})`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Error(".longrun/hooks.json must hold a JSON object");
  const r = raw as Record<string, unknown>;
  const unknown = Object.keys(r).filter((k) => !KEYS.includes(k));
  if (unknown.length) throw new Error(`.longrun/hooks.json: unknown setting ${JSON.stringify(unknown[0])} (known: ${KEYS.join(", ")})`);
  const marker = r.approve_marker ?? DEFAULT_MARKER;
  if (typeof marker !== "string" || !/^\/[A-Za-z][A-Za-z0-9_-]{1,39}$/.test(marker)) throw new Error(".longrun/hooks.json: approve_marker must be a slash command such as /approve");
  return {
    approve_marker: marker,
    bash_read_only: stringList(r, "bash_read_only", (s) => /^[A-Za-z0-9][A-Za-z0-9._+-]*( [A-Za-z0-9._:=+-]+)*$/.test(s), "command prefixes such as \"npm test\" (plain words)"),
    read_only_tools: stringList(r, "read_only_tools", (s) => /^[A-Za-z][A-Za-z0-9_-]{0,199}$/.test(s), "exact tool names"),
    trusted_programs: stringList(r, "trusted_programs", (s) => s.startsWith("/"), "absolute paths"),
  };
}
