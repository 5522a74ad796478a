/** A real root in a temp directory, plus a contract wired to a chosen memory port. */
import { TaskContract } from "../../src/core/contract.ts";
import type { MemoryStore, NewMemory, PendingStore, StateStore } from "../../src/core/ports.ts";
import { Root } from "../../src/root/root.ts";
import { systemClock, systemIds } from "../../src/store/system.ts";
import { removeDir, tempDir } from "../support/helpers.ts";
import { startSqld, TEST_STORE } from "../support/sqld.ts";
import { TEST_STORE_FILE } from "../support/state.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Fixture {
  dir: string;
  root: Root;
  close(): Promise<void>;
}

export function openFixture(options: Parameters<typeof Root.open>[1] = {}): Promise<Fixture> {
  return openFixtureWith(() => {}, options);
}

/** A fixture whose directory `prepare` fills before the root is opened (an older root, say). */
export async function openFixtureWith(prepare: (dir: string) => void, options: Parameters<typeof Root.open>[1] = {}): Promise<Fixture> {
  const dir = tempDir();
  prepare(dir);
  if (TEST_STORE === "sqld") {
    // the same suite against a libSQL server: a server of its own (a database holds one project),
    // this directory as the runner's local state (its pending file)
    const server = await startSqld();
    writeFileSync(join(dir, TEST_STORE_FILE), JSON.stringify({ url: server.url, project: "test" }));
    const root = await Root.openServer({ url: server.url, project: "test", stateDir: dir }, options).catch(async (e) => {
      await server.stop();
      throw e;
    });
    return {
      dir,
      root,
      async close() {
        await root.close();
        await server.stop();
        removeDir(dir);
      },
    };
  }
  const root = await Root.open(dir, options);
  return {
    dir,
    root,
    async close() {
      await root.close();
      removeDir(dir);
    },
  };
}

/** A memory test double: it sees (and may refuse) every save, also those that commit with a state change. */
export interface MemoryDouble extends MemoryStore {
  intercept(record: NewMemory): void;
}

/**
 * The root's own stores and a different memory port (a test double around the real one). Saves
 * that commit with the state (checkpoints, outcomes) pass through the double's `intercept` too.
 */
export function contractWith(root: Root, memory: MemoryDouble): TaskContract {
  const state: StateStore = {
    path: root.state.path,
    load: () => root.state.load(),
    loadTask: (id) => root.state.loadTask(id),
    list: () => root.state.list(),
    transact: (fn) =>
      root.state.transact((tx) =>
        fn({
          ...tx,
          saveMemory: async (record) => {
            memory.intercept(record);
            return tx.saveMemory(record);
          },
        })
      ),
  };
  return new TaskContract({ state, pending: root.pending, memory, clock: systemClock, ids: systemIds });
}

/**
 * A contract on the fixture's real stores, with the memory double (which also sees the saves that
 * commit together with a state change) and the pending-file double.
 */
export function contractWithPending(fx: Fixture, memory: MemoryDouble, pending: { asPort(): PendingStore }): TaskContract {
  const real = fx.root.state;
  const state = new Proxy(real, {
    get: (t, k) => {
      if (k === "transact") {
        return ((fn: Parameters<StateStore["transact"]>[0]) =>
          real.transact((tx) =>
            fn({
              ...tx,
              saveMemory: async (record) => {
                memory.intercept(record);
                return tx.saveMemory(record);
              },
            })
          )) as StateStore["transact"];
      }
      const v = Reflect.get(t, k, t);
      return typeof v === "function" ? v.bind(t) : v;
    },
  }) as StateStore;
  return new TaskContract({ state, pending: pending.asPort(), memory, clock: systemClock, ids: systemIds });
}

/** A checkpoint's fields, for the I2 suites. */
export const CP = { summary: "adapters done", next_step: "接入第二个供应商", phase: "接口适配" };

export async function countCheckpoints(root: Root): Promise<number> {
  const rs = await root.db.execute("SELECT COUNT(*) AS n FROM memories WHERE dedupe_key LIKE 'checkpoint:%'");
  return Number(rs.rows[0]!.n);
}

/** Whether the root holds a task state (for doubles that record what existed when they were called). */
export function hasState(root: Root): () => Promise<boolean> {
  return async () => (await root.state.load()) !== null;
}
