/**
 * The configuration of a root on a libSQL server (`sqld`, or any libSQL endpoint), parsed and
 * checked: the URL of one database and the key of the project it holds. Task state, leases, turns, memory, the run ledger and every blob live
 * in that database; the runner keeps only its pending-checkpoint file on its own disk (the seed's
 * fallback when the server cannot be reached), in a directory of its own per URL and project.
 *
 * Given by flags (`--store URL --project KEY`) or the environment (`LONGRUN_STORE`,
 * `LONGRUN_PROJECT`); the auth token only by the environment (`LONGRUN_STORE_TOKEN`), never a flag
 * (flags show in `ps`).
 */
import { realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, normalize } from "node:path";

export interface ServerStore {
  url: string;
  project: string;
  authToken?: string;
  /** This runner's local directory for the pending checkpoint. */
  stateDir: string;
}

export const STORE_ENV = {
  url: "LONGRUN_STORE",
  project: "LONGRUN_PROJECT",
  token: "LONGRUN_STORE_TOKEN",
  stateDir: "LONGRUN_STATE_DIR",
} as const;

/** A project key: what a person would name a project, nothing that could be a path or a URL. */
const PROJECT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class StoreConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreConfigError";
  }
}

/** The name a server root goes by (in errors, logs and as the registry's key). */
export function storeName(s: Pick<ServerStore, "url" | "project">): string {
  return `${s.url}#${s.project}`;
}

/**
 * The server store from flags, else the environment; null for a local root. Throws
 * `StoreConfigError` naming what is wrong and what to pass.
 */
export function serverStoreFrom(
  flags: { store?: string | null; project?: string | null; stateDir?: string | null },
  env: Record<string, string | undefined> = process.env,
): ServerStore | null {
  const url = flags.store ?? env[STORE_ENV.url] ?? null;
  const project = flags.project ?? env[STORE_ENV.project] ?? null;
  if (url === null || url === "") {
    if (project) throw new StoreConfigError(`a project key (${flags.project ? "--project" : STORE_ENV.project}) was given without a store; pass --store URL (or set ${STORE_ENV.url}) too`);
    return null;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreConfigError(`--store ${JSON.stringify(url)} is not a URL; pass the libSQL server's URL, e.g. http://127.0.0.1:8080 or ws://db.internal:8080`);
  }
  if (!["http:", "https:", "ws:", "wss:", "libsql:"].includes(parsed.protocol)) {
    throw new StoreConfigError(`--store ${JSON.stringify(url)}: the scheme must be http, https, ws, wss or libsql (a local root is a directory: use --root)`);
  }
  if (parsed.username || parsed.password || parsed.search) {
    throw new StoreConfigError(`--store must not carry credentials or a query; put the auth token in ${STORE_ENV.token}`);
  }
  if (project === null || project === "") {
    throw new StoreConfigError(`a store needs a project key: pass --project KEY (or set ${STORE_ENV.project}); it names the project the database holds`);
  }
  if (!PROJECT.test(project)) {
    throw new StoreConfigError(`project key ${JSON.stringify(project)} is not valid: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
  }
  const clean = url.replace(/\/+$/, "");
  const token = env[STORE_ENV.token];
  const stateDir = flags.stateDir ?? env[STORE_ENV.stateDir] ?? defaultStateDir(clean, project, env);
  return { url: clean, project, authToken: token && token !== "" ? token : undefined, stateDir };
}

/**
 * `$XDG_STATE_HOME/.longrun/<project>-<hash of URL and project>` (else `~/.local/state/.longrun/…`):
 * inside a directory named `.longrun`, which the Claude Code gate protects wherever it is (the agent
 * can neither remove a pending checkpoint there nor read the runner's files).
 */
export function defaultStateDir(url: string, project: string, env: Record<string, string | undefined> = process.env): string {
  const id = crypto().createHash("sha256").update(`${url}\n${project}`).digest("hex").slice(0, 16);
  return join(stateDirParents(env)[0]!, `${project}-${id}`);
}

/** The name of the directory server-store state dirs live in: the name of a root's own state directory (src/root/layout.ts), which the gate protects wherever it is. */
export const STATE_DIR_NAME = ".longrun";

/** Where default state directories are made, the one defaultStateDir uses first: `$XDG_STATE_HOME/.longrun` when set, and `~/.local/state/.longrun`. */
export function stateDirParents(env: Record<string, string | undefined> = process.env, home: string = env.HOME || homedir()): string[] {
  const xdg = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith("/") ? [join(env.XDG_STATE_HOME, STATE_DIR_NAME)] : [];
  return [...xdg, join(home, ".local", "state", STATE_DIR_NAME)];
}

/**
 * `node:crypto`, loaded where a hash is computed: loading it costs a per-call hook process on a
 * local root (which never hashes) about a third of a bare Bun program's start.
 */
function crypto(): typeof import("node:crypto") {
  return process.getBuiltinModule("node:crypto");
}

/**
 * The server store for the Claude Code hooks (from the environment), or null for a local root. Its
 * state directory must be inside a directory named `.longrun` (the default is): the gate protects
 * those, and a pending checkpoint the agent could delete would reopen the gate.
 */
export function hookServerStore(env: Record<string, string | undefined> = process.env): ServerStore | null {
  const store = serverStoreFrom({}, env);
  if (store && !realPathUnder(store.stateDir, ".longrun")) {
    throw new StoreConfigError(
      `${STORE_ENV.stateDir}=${store.stateDir} is not inside a directory named .longrun, which the gate protects (an absolute path, ` +
        `no '.' or '..', and no link leading out of it); use one that is (e.g. /var/lib/runner/.longrun/state), or leave it unset for the default`,
    );
  }
  return store;
}

/**
 * Whether `dir` is an absolute, normalized path that, with every link in its existing part
 * resolved, has a segment named `name`: where it really is, not how it is spelled.
 */
function realPathUnder(dir: string, name: string): boolean {
  if (!isAbsolute(dir) || normalize(dir) !== dir.replace(/(.)\/+$/, "$1")) return false;
  let head = dir;
  const rest: string[] = [];
  for (;;) {
    try {
      head = realpathSync(head);
      break;
    } catch (e) {
      const code = (e as { code?: string }).code;
      if ((code !== "ENOENT" && code !== "ENOTDIR") || head === dirname(head)) return false;
      rest.unshift(basename(head));
      head = dirname(head);
    }
  }
  return join(head, ...rest).split("/").includes(name);
}

/**
 * For the gate: the state directory must be there, a directory. Moved, removed or replaced (the
 * agent under an earlier lease, say), a pending checkpoint in it would be out of the gate's sight,
 * so the gate refuses writes instead (fail closed) until the directory is back: the user's next
 * message lays it out again. Throws `StoreConfigError` naming it; a permission error throws as is.
 */
export function requireStateDir(store: Pick<ServerStore, "stateDir">): void {
  let st;
  try {
    st = statSync(store.stateDir, { throwIfNoEntry: false });
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOTDIR") throw e;
  }
  if (!st?.isDirectory()) {
    throw new StoreConfigError(
      `this runner's state directory ${store.stateDir} is ${st ? "not a directory" : "missing"} (moved or removed?), so the gate cannot see a pending checkpoint ` +
        `and refuses writes; the user's next message lays it out again (a pending checkpoint moved away with it is not replayed: put it back)`,
    );
  }
}

/** This runner's pending checkpoint for the root on a server (the hook and the servers agree on it). */
export function serverPendingPath(store: Pick<ServerStore, "stateDir">): string {
  return join(store.stateDir, "pending_checkpoint.json");
}

/** The highest write this runner's processes made to the server (reads wait for it on a replica). */
export function serverSessionPath(store: Pick<ServerStore, "stateDir">): string {
  return join(store.stateDir, "write_seq");
}
