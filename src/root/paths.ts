/**
 * Where a root is: the absolute directory a caller names, checked (resolveRoot: existing, a
 * directory, outside every protected place), and the paths of its files, local or on a server.
 */
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { ROOT_PATHS } from "./layout.ts";
import { PROTECTED_ROOT_ADVICE, protectedPlace, protectedRootDetail, type RootPlaceHit } from "./place.ts";
import { type ServerStore, serverPendingPath, storeName } from "../store/server_config.ts";

/** The root a caller named is not an existing absolute directory. */
export class InvalidRootError extends Error {
  constructor(readonly root: string, detail: string, advice = "pass the absolute path of an existing project directory") {
    super(`Invalid root ${JSON.stringify(root)}: ${detail}${advice ? `; ${advice}` : ""}`);
    this.name = "InvalidRootError";
  }
}

export interface RootPaths {
  dir: string;
  longrun: string;
  state: string;
  pending: string;
  lock: string;
  /** Optional settings of this root (`{"lang": "zh"}`: the language of checkpoint text). */
  settings: string;
  memoryDb: string;
  rawData: string;
}

export function rootPaths(dir: string): RootPaths {
  return {
    dir,
    longrun: join(dir, ROOT_PATHS.longrun),
    state: join(dir, ROOT_PATHS.state),
    pending: join(dir, ROOT_PATHS.pending),
    lock: join(dir, ROOT_PATHS.lock),
    settings: join(dir, ROOT_PATHS.settings),
    memoryDb: join(dir, ROOT_PATHS.memoryDb),
    rawData: join(dir, ROOT_PATHS.rawData),
  };
}

/**
 * The root a caller named lies inside a protected directory (`.longrun/` anywhere, `raw_data/` of
 * a root, `.claude/`, `.git/`, …: src/root/place.ts): refused before anything is created there.
 */
export class ProtectedRootError extends InvalidRootError {
  readonly rule: string;
  readonly at: string;
  constructor(root: string, readonly real: string, hit: RootPlaceHit) {
    super(root, protectedRootDetail(root, real, hit), PROTECTED_ROOT_ADVICE);
    this.name = "ProtectedRootError";
    this.rule = hit.rule;
    this.at = hit.at;
  }
}

/**
 * Checks that `dir` is an existing absolute directory outside every protected directory and
 * returns its real path. Every route (stdio, HTTP, MCP, the CLI's and hooks' `--root`,
 * `--allow-root`, `Root.open`) resolves its roots here.
 */
export function resolveRoot(dir: string): string {
  if (typeof dir !== "string" || dir === "") throw new InvalidRootError(String(dir), "it is empty");
  if (dir.includes("\0")) throw new InvalidRootError(dir, "it contains a NUL byte");
  if (!isAbsolute(dir)) throw new InvalidRootError(dir, "it is not an absolute path");
  let st;
  try {
    st = statSync(dir);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new InvalidRootError(dir, "it does not exist");
    throw e; // not the caller's mistake (out of descriptors, I/O): reported as what it is
  }
  if (!st.isDirectory()) throw new InvalidRootError(dir, "it is not a directory");
  const real = realpathSync(dir);
  const hit = protectedPlace(real);
  if (hit) throw new ProtectedRootError(dir, real, hit);
  return real;
}

/** The paths of a root on a server: only the pending checkpoint (and optional settings) are local. */
export function serverPaths(store: ServerStore): RootPaths {
  return {
    dir: storeName(store),
    longrun: store.stateDir,
    state: join(store.stateDir, "state.json"),
    pending: serverPendingPath(store),
    lock: join(store.stateDir, "lock"),
    settings: join(store.stateDir, "settings.json"),
    memoryDb: store.url,
    rawData: "",
  };
}
