/**
 * What a refusal names, for one root: the language people read (`.longrun/settings.json` `lang`,
 * the checkpoint text's setting) and the way a person grants writes there: where longrun's Claude
 * Code hooks are installed (`.claude/settings.local.json` runs `longrun hook claude PreToolUse`),
 * the user's approval line (`/approve …`, or the root's own marker); everywhere else the person's
 * command `longrun grant "reason"` and the status page. Never fails: anything unreadable is
 * English and the command.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { DEFAULT_MARKER } from "../core/approval.ts";
import type { Lang } from "../core/messages/catalog.ts";
import { ROOT_PATHS } from "../root/layout.ts";
import { readCheckpointLang } from "../store/root_settings.ts";
import { loadHookConfig } from "./config.ts";

export interface RefusalSetup {
  lang: Lang;
  /** The approval marker the user types (the hooks are installed), or null: the person runs `longrun grant`. */
  approve: string | null;
}

/** The language of a root's settings file; English when it is missing, unreadable or names another. */
export function settingsLang(settingsPath: string): Lang {
  try {
    return readCheckpointLang(settingsPath) ?? "en";
  } catch {
    return "en";
  }
}

/** Whether `root`'s Claude Code settings run longrun's gate (a PreToolUse hook `… hook claude PreToolUse …`). */
export function gateHookInstalled(root: string): boolean {
  try {
    const settings = JSON.parse(readFileSync(join(root, ".claude", "settings.local.json"), "utf8")) as { hooks?: { PreToolUse?: unknown } };
    const groups = settings?.hooks?.PreToolUse;
    return Array.isArray(groups) && groups.some((g) => Array.isArray(g?.hooks) && g.hooks.some((h: { command?: unknown }) => typeof h?.command === "string" && h.command.includes(" hook claude PreToolUse")));
  } catch {
    return false;
  }
}

/**
 * The setup of the root at `dir` (a directory; a project on a libSQL server has no hooks), its
 * settings at `settingsPath` (default `dir/.longrun/settings.json`).
 * @example refusalSetup("/home/me/project") // { lang: "zh", approve: "/approve" }
 */
export function refusalSetup(dir: string, settingsPath = join(dir, ROOT_PATHS.settings)): RefusalSetup {
  const lang = settingsLang(settingsPath);
  if (!isAbsolute(dir) || !gateHookInstalled(dir)) return { lang, approve: null };
  let approve: string;
  try {
    approve = loadHookConfig(dir).approve_marker;
  } catch {
    approve = DEFAULT_MARKER;
  }
  return { lang, approve };
}
