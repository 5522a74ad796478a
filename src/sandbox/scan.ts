/**
 * Finding the other places the boundary must mask, cheaply and with a bound: longrun roots (a
 * directory holding `.longrun/`) among the root's ancestors and siblings, the home directory and
 * below the root (depth at most 4, not into node_modules or .git), and the git directories below
 * the root (nested repositories, and the submodules' and worktrees' inside `.git/`). Past the bound the scan says so, and the caller refuses to run: an incomplete mask is
 * not a boundary.
 */
import { type Dirent, existsSync, lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { ROOT_PATHS } from "../root/layout.ts";

export interface ScanLimits {
  depth: number;
  /** Directory entries looked at below the root, and among its siblings. */
  entries: number;
  ms: number;
}

export const SCAN_LIMITS: ScanLimits = { depth: 4, entries: 50_000, ms: 3_000 };

export interface ScanResult {
  ok: true;
  /** Longrun roots other than the root itself, real paths. */
  roots: string[];
  /** Git directories below the root (not `root/.git`): nested repositories, `.git/modules/…`, `.git/worktrees/…`. */
  gitDirs: string[];
}

export interface ScanIncomplete {
  ok: false;
  message: string;
}

const SKIP = new Set(["node_modules", ".git", ROOT_PATHS.longrun, ROOT_PATHS.rawData]);

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isRealDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** What else to mask around `root` (a real path), within `limits`. */
export function scanAround(root: string, home: string, limits: ScanLimits = SCAN_LIMITS, now: () => number = Date.now): ScanResult | ScanIncomplete {
  const deadline = now() + limits.ms;
  const roots = new Set<string>();
  const gitDirs: string[] = [];
  let seen = 0;
  const over = (what: string): ScanIncomplete => ({
    ok: false,
    message: `${what} has more than the sandbox looks through (${limits.entries} entries, depth ${limits.depth}, ${limits.ms} ms) to find longrun's files to hide`,
  });
  const addRoot = (dir: string) => {
    try {
      if (isDir(`${dir}/.longrun`)) roots.add(realpathSync(dir));
    } catch {
      // gone meanwhile: nothing to hide
    }
  };

  // ancestors and the home directory: a root the lease's root sits in
  for (let d = dirname(root); ; d = dirname(d)) {
    addRoot(d);
    if (d === "/") break;
  }
  if (home.startsWith("/")) addRoot(home);

  // siblings
  const parent = dirname(root);
  if (parent !== root) {
    let names: string[];
    try {
      names = readdirSync(parent);
    } catch {
      names = [];
    }
    if (names.length > limits.entries) return over(parent);
    seen += names.length;
    for (const n of names) {
      addRoot(`${parent}/${n}`);
      if (now() > deadline) return over(parent);
    }
  }

  // below the root, breadth first, never through a symlink
  let level = [root];
  for (let depth = 1; depth <= limits.depth && level.length; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue; // unreadable: the command cannot read it either
      }
      seen += entries.length;
      if (seen > limits.entries || now() > deadline) return over(root);
      for (const e of entries) {
        if (!e.isDirectory()) continue;
        const p = `${dir}/${e.name}`;
        if (e.name === ROOT_PATHS.longrun && dir !== root) roots.add(dir);
        if (e.name === ".git" && dir !== root) gitDirs.push(p);
        if (!SKIP.has(e.name) && isRealDir(p)) next.push(p);
      }
    }
    level = next;
  }
  // git directories inside the root's own: submodules' (.git/modules/…) and linked worktrees' (.git/worktrees/…)
  const walk = (dir: string, depth: number): boolean => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return true;
    }
    seen += entries.length;
    if (seen > limits.entries || now() > deadline) return false;
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const p = `${dir}/${e.name}`;
      const isGitDir = existsSync(`${p}/HEAD`);
      if (isGitDir) gitDirs.push(p);
      if (depth < limits.depth + 2 && !walk(isGitDir ? `${p}/modules` : p, depth + 1)) return false;
    }
    return true;
  };
  for (const sub of ["modules", "worktrees"]) if (!walk(`${root}/.git/${sub}`, 1)) return over(`${root}/.git/${sub}`);
  roots.delete(root);
  return { ok: true, roots: [...roots], gitDirs };
}
