/**
 * The roots one process serves: opened on first use, one `Root` per real directory (so one
 * database handle per file), optionally confined to an allow-list of parent directories.
 */
import { sep } from "node:path";
import { InvalidRootError, resolveRoot, Root, type RootOptions } from "./root.ts";

export interface RootRegistryOptions {
  /** The root used when a request names none (`--root`, default the working directory). */
  defaultRoot: string | null;
  /** When set, a root a caller names must be one of these directories or inside one. */
  allow?: string[] | null;
  rootOptions?: RootOptions;
}

export class RootRegistry {
  readonly #open = new Map<string, Promise<Root>>();
  /** Names already resolved and checked (the hot path asks the same name again and again). */
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
    let real = this.#resolved.get(named);
    if (real === undefined) {
      real = this.resolve(named);
      this.#resolved.set(named, real);
    }
    let root = this.#open.get(real);
    if (!root) {
      root = Root.open(real, this.#rootOptions);
      this.#open.set(real, root);
      const key = real;
      root.catch(() => {
        this.#open.delete(key);
        this.#resolved.delete(named);
      });
    }
    return root;
  }

  async closeAll(): Promise<void> {
    const all = [...this.#open.values()];
    this.#open.clear();
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
