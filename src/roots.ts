/**
 * The roots one process serves: opened on first use, one `Root` per real directory (so one
 * database handle per file), optionally confined to an allow-list of parent directories.
 */
import { normalize, sep } from "node:path";
import { InvalidRootError, resolveRoot, Root, type RootOptions } from "./root.ts";

export interface RootRegistryOptions {
  /** The root used when a request names none (`--root`, default the working directory). */
  defaultRoot: string | null;
  /** When set, a root a caller names must be one of these directories or inside one. */
  allow?: string[] | null;
  rootOptions?: RootOptions;
}

/** How many spellings of root names a registry remembers resolved (then it starts over). */
const RESOLVED_CACHE = 256;

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

  constructor(options: RootRegistryOptions) {
    this.#defaultRoot = options.defaultRoot;
    this.#allow = options.allow?.map((d) => resolveRoot(d)) ?? null;
    this.#rootOptions = options.rootOptions ?? {};
  }

  get defaultRoot(): string | null {
    return this.#defaultRoot;
  }

  /** The real path a request's root resolves to, checked against the allow-list; nothing is opened. */
  resolve(named: string | undefined): string {
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

  get(named?: string): Promise<Root> {
    const spelling = named === undefined || named.includes("\0") ? named : normalize(named);
    let real = this.#resolved.get(spelling);
    if (real === undefined) {
      real = this.resolve(named);
      if (this.#resolved.size >= RESOLVED_CACHE) this.#resolved.clear();
      this.#resolved.set(spelling, real);
    }
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
    if (!root) {
      const dir = real;
      root = closing ? closing.then(() => Root.open(dir, this.#rootOptions)) : Root.open(real, this.#rootOptions);
      this.#open.set(real, root);
      const key = real;
      const opening = root;
      root.then(
        (r) => {
          if (this.#open.get(key) !== opening) return;
          this.#ready.set(key, r);
          // bodies left by processes killed before their commit: collected once, in the background
          if (!this.#collected.has(key)) {
            this.#collected.add(key);
            void r.collectOrphanBlobs().catch(() => {});
          }
        },
        () => {
          if (this.#open.get(key) === opening) this.#open.delete(key);
          this.#resolved.delete(spelling);
        },
      );
    }
    return root;
  }

  async closeAll(): Promise<void> {
    const all = [...this.#open.values()];
    this.#open.clear();
    this.#ready.clear();
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
