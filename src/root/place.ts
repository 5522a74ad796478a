/**
 * Where a root may not be: inside a protected location (`PROTECTED` in src/root/protected.ts, the
 * table the gate and the sandbox use), or inside git's own directory. A root there would lay out
 * `.longrun/`, `memory.db` and `raw_data/` inside files the agent may not reach, or inside another
 * root's (`<root>/.longrun` as a root nests without end). Every route resolves its roots through
 * `resolveRoot` (src/root/root.ts), which asks this module; it imports no libSQL, so a hook can ask too.
 */
import { realpathSync, statSync } from "node:fs";
import { PROTECTED } from "./protected.ts";
import { ROOT_PATHS } from "./layout.ts";

/** Beyond the protected table: git's own directory as a whole (git rewrites and prunes it). */
const ALSO_FOR_ROOTS = [{ id: "git_dir", segments: [[".git"]], where: "anywhere", what: "git's own directory (.git/)" }] as const;

const RULES = [...PROTECTED, ...ALSO_FOR_ROOTS];

const fold = (s: string) => s.normalize("NFKC").toLowerCase();

/** A directory laid out as a longrun root: it holds `.longrun/` or `memory.db`. */
function isLongrunRoot(dir: string): boolean {
  for (const [name, dirWanted] of [[ROOT_PATHS.longrun, true], [ROOT_PATHS.memoryDb, false]] as const) {
    try {
      if (statSync(`${dir}/${name}`).isDirectory() === dirWanted) return true;
    } catch {
      // absent
    }
  }
  return false;
}

export interface RootPlaceHit {
  /** The rule's id in the protected table (`longrun_state`, `longrun_raw`, `claude_settings`, `git_dir`, …). */
  rule: string;
  /** The protected directory the root lies in (or is). */
  at: string;
  what: string;
}

/**
 * The protected location an absolute, already resolved path lies in (or is), or null. Names
 * compare as the gate compares them: case-insensitively, after NFKC folding.
 *
 * @example
 * protectedPlace("/p/.longrun")            // { rule: "longrun_state", at: "/p/.longrun", … }
 * protectedPlace("/p/raw_data/x")          // longrun_raw, when /p holds .longrun/ or memory.db
 * protectedPlace("/home/me/project")       // null
 */
export function protectedPlace(real: string): RootPlaceHit | null {
  const segs = real.split("/").filter((s) => s !== "");
  const folded = segs.map(fold);
  for (const rule of RULES) {
    const n = rule.segments.length;
    const starts = rule.where === "absolute" ? [0] : folded.map((_, i) => i);
    for (const i of starts) {
      if (i + n > folded.length) continue;
      if (!rule.segments.every((names, k) => names.includes("*") || names.includes(folded[i + k]!))) continue;
      if (rule.where === "longrun_root" && !isLongrunRoot("/" + segs.slice(0, i).join("/"))) continue;
      return { rule: rule.id, at: "/" + segs.slice(0, i + n).join("/"), what: rule.what };
    }
  }
  return null;
}

/** Why a root at `named` (resolved to `real`) lying in `hit` is refused: one line, for every route. */
export function protectedRootDetail(named: string, real: string, hit: RootPlaceHit): string {
  const where = real === named.replace(/\/+$/, "") ? "it" : `it resolves to ${real}, which`;
  return `${where} lies in ${hit.at}, ${hit.what}; a root may not lie inside .longrun/, a root's raw_data/, .claude/, .git/ or another protected directory`;
}

/** The advice that ends the refusal. */
export const PROTECTED_ROOT_ADVICE = "pass the project directory itself";

/**
 * For a caller that does not resolve its root through `resolveRoot` (a hook reading the task
 * state without libSQL): the refusal of `named` as one line, or null when it may be a root.
 */
export function protectedRootRefusal(named: string): string | null {
  let real = named;
  try {
    real = realpathSync(named);
  } catch {
    // absent: judged as written
  }
  const hit = protectedPlace(real);
  return hit ? `Invalid root ${JSON.stringify(named)}: ${protectedRootDetail(named, real, hit)}; ${PROTECTED_ROOT_ADVICE}` : null;
}
