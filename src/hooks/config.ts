/**
 * Hook settings, read from `<root>/.longrun/hooks.json` when present (agents cannot edit it: the
 * PreToolUse gate protects `.longrun/`). Everything has a default.
 *
 *   { "approve_marker": "/approve", "bash_read_only": ["ls", "git status", …] }
 */
import { readFileSync } from "node:fs";
import { DEFAULT_MARKER } from "./approval.ts";
import { DEFAULT_READ_ONLY } from "./bash.ts";

export interface HookConfig {
  approve_marker: string;
  bash_read_only: string[];
}

export function loadHookConfig(root: string): HookConfig {
  const config: HookConfig = { approve_marker: DEFAULT_MARKER, bash_read_only: DEFAULT_READ_ONLY };
  let text: string;
  try {
    text = readFileSync(`${root}/.longrun/hooks.json`, "utf8");
  } catch {
    return config;
  }
  const raw = JSON.parse(text) as Record<string, unknown>;
  if (typeof raw.approve_marker === "string" && /^\S{2,40}$/.test(raw.approve_marker)) config.approve_marker = raw.approve_marker;
  else if (raw.approve_marker !== undefined) throw new Error(".longrun/hooks.json: approve_marker must be one word of 2-40 characters");
  if (Array.isArray(raw.bash_read_only) && raw.bash_read_only.every((x) => typeof x === "string")) config.bash_read_only = raw.bash_read_only as string[];
  else if (raw.bash_read_only !== undefined) throw new Error(".longrun/hooks.json: bash_read_only must be a list of command prefixes");
  return config;
}
