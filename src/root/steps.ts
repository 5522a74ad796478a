/**
 * Opening a root, as one list of steps: layout → database → migrate → reindex → legacy import →
 * identity. Every way of opening is a plan that says what it does at each step (or nothing): a
 * directory or a project on a libSQL server, the whole root (src/root/root.ts `Root.openAt`) or
 * only its task state for the per-call hook (src/root/open.ts). `runPlan` runs one. This file
 * imports no libSQL, so both can use it.
 */
import type { ServerStore } from "../store/server_config.ts";

/** The steps of opening a root, in the order they run. */
export const OPEN_STEPS = ["layout", "database", "migrate", "reindex", "legacy import", "identity"] as const;
export type OpenStep = (typeof OPEN_STEPS)[number];

/** What one way of opening does at each step: null where it does nothing there. */
export type OpenPlan<C> = Readonly<Record<OpenStep, ((c: C) => unknown) | null>>;

/**
 * Runs `plan`'s steps in order on `c`. When a step throws, what the earlier steps opened is closed
 * (`c.close()`) and the error is thrown as it is.
 */
export async function runPlan<C extends { close(): unknown }>(plan: OpenPlan<C>, c: C): Promise<C> {
  for (const step of OPEN_STEPS) {
    const run = plan[step];
    if (!run) continue;
    try {
      await run(c);
    } catch (e) {
      await c.close();
      throw e;
    }
  }
  return c;
}

/** Where a root is: a directory (its `memory.db`), or a project in a libSQL server's database. */
export type RootStore = { kind: "local"; dir: string } | { kind: "server"; server: ServerStore };

/**
 * The one place a root's store is chosen: the server's project when one is configured (`--store`,
 * `LONGRUN_STORE`: src/store/server_config.ts), else the directory.
 *
 * @example
 * const store = rootStore(dir, serverStoreFrom({ store: values.store }));
 * const root = await Root.openAt(store);
 */
export function rootStore(dir: string, server: ServerStore | null): RootStore {
  return server ? { kind: "server", server } : { kind: "local", dir };
}
