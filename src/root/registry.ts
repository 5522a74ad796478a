/**
 * The roots one process serves: opened on first use, one `Root` per real directory (so one
 * database handle per file), optionally confined to an allow-list of parent directories.
 */
import { existsSync, realpathSync } from "node:fs";
import { normalize, sep } from "node:path";
import { LimitExceededError } from "../core/errors.ts";
import { InvalidRootError, resolveRoot, Root, type RootOptions, rootPaths } from "./root.ts";
import { type ServerStore, serverPendingPath, storeName } from "../store/server_config.ts";
import { classifyStorage } from "../db/fault.ts";
import { rootStore } from "./steps.ts";

export interface RootRegistryOptions {
  /** The root used when a request names none (`--root`, default the working directory). */
  defaultRoot: string | null;
  /** When set, a root a caller names must be one of these directories or inside one. */
  allow?: string[] | null;
  rootOptions?: RootOptions;
  /**
   * At most this many roots open at once (each holds a database, a Worker connection and file
   * descriptors); the least recently used idle one is closed to make room. Default 64.
   */
  maxOpen?: number;
  /**
   * Serve one root on a libSQL server instead of directories: every call goes to it; a call that
   * names a root must name this one (its `URL#project` name or its project key).
   */
  server?: ServerStore | null;
  /** Deliver each open root's event log to its webhooks (servers: serve, http, mcp); a one-off command leaves it off. */
  webhooks?: boolean;
}

export const DEFAULT_MAX_OPEN_ROOTS = 64;

/** How many spellings of root names a registry remembers resolved (then it starts over). */
const RESOLVED_CACHE = 256;

/**
 * A root just opened at `dir` (a real path when it was resolved) must still be that directory, not
 * a link put in its place while it opened: else it is closed and refused.
 */
async function stillItself(dir: string, root: Root): Promise<Root> {
  let now: string | null = null;
  try {
    now = realpathSync(dir);
  } catch {
    // gone while opening: refused below
  }
  if (now === dir) return root;
  await root.close();
  throw new InvalidRootError(dir, `it was replaced while it opened (now ${now === null ? "gone" : `a link to ${now}`})`, "name an existing project directory");
}

export class RootRegistry {
  readonly #open = new Map<string, Promise<Root>>();
  /** Roots whose open finished, to check on each call that their file is still theirs. */
  readonly #ready = new Map<string, Root>();
  /** Roots whose orphan blobs this process has collected. */
  readonly #collected = new Set<string>();
  /**
   * Names already resolved and checked (the hot path asks the same name again and again), by
   * their normalized spelling (`/r/./x/` and `/r/x` are one entry), bounded.
   */
  readonly #resolved = new Map<string | undefined, string>();
  readonly #defaultRoot: string | null;
  readonly #allow: string[] | null;
  readonly #rootOptions: RootOptions;
  readonly #maxOpen: number;
  readonly #server: ServerStore | null;
  /** Calls in progress per root (`acquire`): a busy root is never closed to make room. */
  readonly #busy = new Map<string, number>();
  /** Open roots, least recently used first (a Map keeps insertion order; each use moves a root last). */
  readonly #recent = new Map<string, true>();

  readonly #webhooks: boolean;
  constructor(options: RootRegistryOptions) {
    this.#maxOpen = options.maxOpen ?? DEFAULT_MAX_OPEN_ROOTS;
    this.#server = options.server ?? null;
    this.#defaultRoot = this.#server ? storeName(this.#server) : options.defaultRoot;
    this.#allow = options.allow?.map((d) => resolveRoot(d)) ?? null;
    this.#rootOptions = options.rootOptions ?? {};
    this.#webhooks = options.webhooks ?? false;
  }

  get defaultRoot(): string | null {
    return this.#defaultRoot;
  }

  /** How many roots are open or opening now (for metrics). */
  get openCount(): number {
    return this.#open.size;
  }

  /** The real path a request's root resolves to, checked against the allow-list; nothing is opened. */
  resolve(named: string | undefined): string {
    if (this.#server) {
      const name = storeName(this.#server);
      if (named === undefined || named === name || named === this.#server.project) return name;
      throw new InvalidRootError(named, `this server serves project ${this.#server.project} on ${this.#server.url} only; leave root out (or pass ${JSON.stringify(this.#server.project)})`, "");
    }
    const dir = named ?? this.#defaultRoot;
    if (dir === null || dir === undefined) {
      throw new InvalidRootError("", "no root was named and the server has no default; pass root, or start it with --root");
    }
    const real = resolveRoot(dir);
    if (named !== undefined && this.#allow && !this.#allow.some((a) => real === a || real.startsWith(a.endsWith(sep) ? a : a + sep))) {
      throw new InvalidRootError(named, `it is not inside the directories this server allows (${this.#allow.join(", ")})`);
    }
    return real;
  }

  /**
   * The root for a call, held until `release`: while held it is not closed to make room. When the
   * cap is reached, the least recently used idle root is closed first; when every open root is
   * busy, the call is refused with `limit_exceeded` (field `open_roots`), never an EMFILE later.
   */
  async acquire(named?: string): Promise<{ root: Root; release: () => void }> {
    const real = this.#resolve(named);
    this.#busy.set(real, (this.#busy.get(real) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const n = (this.#busy.get(real) ?? 1) - 1;
      if (n > 0) this.#busy.set(real, n);
      else this.#busy.delete(real);
    };
    try {
      return { root: await this.get(named), release };
    } catch (e) {
      release();
      throw e;
    }
  }

  /** Closes least recently used idle roots until one more fits under the cap. */
  #makeRoom(adding: string): void {
    if (this.#open.has(adding)) return;
    for (const dir of this.#recent.keys()) {
      if (this.#open.size < this.#maxOpen) return;
      if ((this.#busy.get(dir) ?? 0) > 0) continue;
      const open = this.#open.get(dir);
      this.#open.delete(dir);
      this.#ready.delete(dir);
      this.#recent.delete(dir);
      void open?.then((r) => r.close()).catch(() => {});
    }
    if (this.#open.size >= this.#maxOpen) {
      throw new LimitExceededError(
        "open_roots",
        this.#maxOpen,
        this.#open.size + 1,
        "roots",
        "every open root is in use; retry when a call finishes, or start the server with a higher --max-roots",
      );
    }
  }

  #resolve(named: string | undefined): string {
    const spelling = named === undefined || named.includes("\0") ? named : normalize(named);
    let real = this.#resolved.get(spelling);
    if (real === undefined) {
      try {
        real = this.resolve(named);
      } catch (e) {
        throw classifyStorage(e, named ?? this.#defaultRoot ?? "") ?? e;
      }
      if (this.#resolved.size >= RESOLVED_CACHE) this.#resolved.clear();
      this.#resolved.set(spelling, real);
    }
    return real;
  }

  /**
   * Where a root's pending checkpoint lives, for a call that could not open the root: null when the
   * name does not resolve or the directory is no root (nothing is created in a stranger's directory).
   */
  pendingPath(named?: string): string | null {
    if (this.#server) return serverPendingPath(this.#server);
    try {
      const paths = rootPaths(this.#resolve(named));
      return existsSync(paths.longrun) ? paths.pending : null;
    } catch {
      return null;
    }
  }

  /**
   * The root for a call that will be done before this returns to the event loop, when it is open
   * and still its file on disk (what `get` checks first); undefined otherwise: then `acquire` it.
   * Nothing can close it meanwhile, so it is not held.
   */
  readyNow(named?: string): Root | undefined {
    const real = this.#resolve(named);
    const ready = this.#ready.get(real);
    if (!ready || !ready.stillOpenOnDisk()) return undefined;
    this.#recent.delete(real);
    this.#recent.set(real, true);
    return ready;
  }

  get(named?: string): Promise<Root> {
    const real = this.#resolve(named);
    const ready = this.#ready.get(real);
    let closing: Promise<void> | null = null;
    if (ready && !ready.stillOpenOnDisk()) {
      // memory.db was removed, moved or replaced under this server, or its handle can only read:
      // never write on into the old file; open again (after the old handle is closed: SQLite
      // shares a file's locks and shared memory between a process's connections), which reports
      // what is wrong, or, once the fault is gone, serves it
      this.#ready.delete(real);
      this.#open.delete(real);
      closing = ready.close().catch(() => {});
    }
    let root = this.#open.get(real);
    if (!root && !this.#server) {
      // about to open: the name is resolved again, never taken from the cache, because the
      // directory it named may since have been replaced (by a link out of the allowed directories)
      try {
        this.#resolved.delete(named === undefined || named.includes("\0") ? named : normalize(named));
        const fresh = this.#resolve(named);
        if (fresh !== real) throw new InvalidRootError(named ?? real, `it now resolves to ${fresh}, not to ${real} as before`, "name it again if that is the root you mean");
      } catch (e) {
        return Promise.reject(e);
      }
    }
    this.#recent.delete(real);
    this.#recent.set(real, true);
    if (!root) {
      try {
        this.#makeRoom(real);
      } catch (e) {
        this.#recent.delete(real);
        return Promise.reject(e);
      }
      const dir = real;
      const store = rootStore(dir, this.#server);
      // a directory: a file-system failure while opening (out of descriptors, read-only, gone) as a
      // kind the caller can act on, and the directory must still be itself once open
      const open = () =>
        Root.openAt(store, this.#rootOptions).then(
          (r) => store.kind === "local" ? stillItself(dir, r) : r,
          (e: unknown) => {
            throw store.kind === "local" ? classifyStorage(e, rootPaths(dir).memoryDb) ?? e : e;
          },
        );
      root = closing ? closing.then(open) : open();
      this.#open.set(real, root);
      const key = real;
      const opening = root;
      root.then(
        (r) => {
          if (this.#open.get(key) !== opening) return;
          this.#ready.set(key, r);
          // parked runs whose wake_at came, time budgets, stale owners: acted on while the root is open
          r.wakeRuns();
          // the root's retention rules, if its settings have any: applied while it is open
          r.keepRetention();
          // the root's webhooks, if its settings name any: its event log delivered while it is open (servers only)
          if (this.#webhooks) r.keepWebhooks();
          // bodies left by processes killed before their commit: collected once, in the background
          if (!this.#collected.has(key)) {
            this.#collected.add(key);
            void r.collectOrphanBlobs().catch(() => {});
          }
        },
        () => {
          if (this.#open.get(key) === opening) {
            this.#open.delete(key);
            this.#recent.delete(key);
          }
        },
      );
    }
    return root;
  }

  async closeAll(): Promise<void> {
    const all = [...this.#open.values()];
    this.#open.clear();
    this.#ready.clear();
    this.#recent.clear();
    this.#resolved.clear();
    for (const r of all) {
      try {
        await (await r).close();
      } catch {
        // a root that failed to open has nothing to close
      }
    }
  }
}
