/** A real root in a temp directory, plus a contract wired to a chosen memory port. */
import { TaskContract } from "../../src/core/contract.ts";
import type { MemoryStore } from "../../src/core/ports.ts";
import { Root } from "../../src/root.ts";
import { systemClock, systemIds } from "../../src/store/system.ts";
import { removeDir, tempDir } from "../helpers.ts";

export interface Fixture {
  dir: string;
  root: Root;
  close(): Promise<void>;
}

export async function openFixture(options: Parameters<typeof Root.open>[1] = {}): Promise<Fixture> {
  const dir = tempDir();
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

/** The root's own stores and a different memory port (a test double around the real one). */
export function contractWith(root: Root, memory: MemoryStore): TaskContract {
  return new TaskContract({ state: root.state, pending: root.pending, memory, clock: systemClock, ids: systemIds });
}

export async function countCheckpoints(root: Root): Promise<number> {
  const rs = await root.db.execute("SELECT COUNT(*) AS n FROM memories WHERE dedupe_key LIKE 'checkpoint:%'");
  return Number(rs.rows[0]!.n);
}
