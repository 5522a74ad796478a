/**
 * Hook settings, read from `<root>/.longrun/hooks.json` when present (agents cannot edit it: the
 * gate protects `.longrun/` under any lease). Everything has a default; a malformed file is an
 * error, and the gate then denies (fail closed).
 *
 *   {
 *     "approve_marker": "/approve",
 *     "bash_read_only": ["npm test", "cargo check"],     command prefixes the user vouches for
 *     "read_only_tools": ["mcp__github__get_issue"],      tools that change nothing
 *     "lease_tools": ["mcp__github__create_issue"],       tools that write, allowed under the turn's lease
 *     "trusted_programs": ["/home/me/.local/bin/rg"],     programs this user could modify, trusted anyway
 *     "sandbox": "bubblewrap",                            the OS boundary of every shell command, or "off"
 *     "resident_gate": true                               SessionStart starts the root's resident gate (longrun hook gate)
 *   }

 * `sandbox` defaults to "bubblewrap" on Linux (every Bash command runs inside `longrun sandbox`)
 * and "off" elsewhere, where the gate's checks are best effort; `longrun doctor` says which.
 */
import { readFileSync } from "node:fs";
import { ROOT_PATHS } from "../root/layout.ts";
import { DEFAULT_MARKER } from "../core/approval.ts";

export interface HookConfig {
  approve_marker: string;
  /** Extra Bash command prefixes allowed in read-only turns (the built-in table always applies). */
  bash_read_only: string[];
  read_only_tools: string[];
  /** Tools the table does not know that the user allows under a lease (anything unknown is denied). */
  lease_tools: string[];
  trusted_programs: string[];
  /** The OS boundary shell commands run in: "bubblewrap" (`longrun sandbox`) or "off" (the parser only). */
  sandbox: "bubblewrap" | "off";
  /** SessionStart starts the root's resident gate (`longrun hook gate`, src/hooks/gate_server.ts); default false. */
  resident_gate: boolean;
}

const DEFAULT_SANDBOX: HookConfig["sandbox"] = process.platform === "linux" ? "bubblewrap" : "off";

const KEYS = ["approve_marker", "bash_read_only", "read_only_tools", "lease_tools", "trusted_programs", "sandbox", "resident_gate"];

function stringList(raw: Record<string, unknown>, key: string, check: (s: string) => boolean, what: string): string[] {
  const v = raw[key];
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string" && check(x))) throw new Error(`.longrun/hooks.json: ${key} must be a list of ${what}`);
  return v as string[];
}

/** The settings of a root without `.longrun/hooks.json`. */
export function defaultHookConfig(): HookConfig {
  return { approve_marker: DEFAULT_MARKER, bash_read_only: [], read_only_tools: [], lease_tools: [], trusted_programs: [], sandbox: DEFAULT_SANDBOX, resident_gate: false };
}

export function loadHookConfig(root: string): HookConfig {
  let text: string;
  try {
    text = readFileSync(`${root}/${ROOT_PATHS.hooks}`, "utf8");
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return defaultHookConfig();
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
  const sandbox = r.sandbox ?? DEFAULT_SANDBOX;
  if (sandbox !== "bubblewrap" && sandbox !== "off") throw new Error('.longrun/hooks.json: sandbox must be "bubblewrap" or "off"');
  const resident = r.resident_gate ?? false;
  if (typeof resident !== "boolean") throw new Error(".longrun/hooks.json: resident_gate must be true or false");
  return {
    sandbox,
    resident_gate: resident,
    approve_marker: marker,
    bash_read_only: stringList(r, "bash_read_only", (s) => /^[A-Za-z0-9][A-Za-z0-9._+-]*( [A-Za-z0-9._:=+-]+)*$/.test(s), "command prefixes such as \"npm test\" (plain words)"),
    read_only_tools: stringList(r, "read_only_tools", (s) => /^[A-Za-z][A-Za-z0-9_-]{0,199}$/.test(s), "exact tool names"),
    lease_tools: stringList(r, "lease_tools", (s) => /^[A-Za-z][A-Za-z0-9_-]{0,199}$/.test(s), "exact tool names"),
    trusted_programs: stringList(r, "trusted_programs", (s) => s.startsWith("/"), "absolute paths"),
  };
}
