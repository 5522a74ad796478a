/**
 * Readiness for `GET /ready`: the default root opens (again, if its memory.db was replaced or
 * removed under the server) and answers a trivial read of the task store and of memory. Probes
 * come often and from anywhere, so one check runs at a time, its answer is reused for a second,
 * and a check that takes longer than its deadline counts as not ready.
 */
import { toErrorObject } from "../rpc/errors.ts";
import type { RootRegistry } from "../root/registry.ts";

export interface ReadinessOptions {
  /** Told when the answer changes (not on every probe): ready, or not and why. */
  onChange?: (ok: boolean, why: { kind: string; message: string } | null) => void;
  /** How long an answer is reused (default 1000 ms). */
  reuseMs?: number;
  /** A check slower than this is not ready (default 5000 ms). */
  deadlineMs?: number;
}

export function readiness(roots: RootRegistry, options: ReadinessOptions = {}): () => Promise<boolean> {
  const reuseMs = options.reuseMs ?? 1000;
  const deadlineMs = options.deadlineMs ?? 5000;
  let last: { ok: boolean; at: number } | null = null;
  let running: Promise<boolean> | null = null;
  let reported: boolean | null = null;

  const check = async (): Promise<boolean> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let ok: boolean;
    let why: { kind: string; message: string } | null = null;
    try {
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the readiness check took longer than ${deadlineMs} ms`)), deadlineMs);
      });
      const read = (async () => {
        const { root, release } = await roots.acquire();
        try {
          // the gate's connection on this thread, and the memory writer's (a Worker, in servers)
          await root.probe();
        } finally {
          release();
        }
      })();
      read.catch(() => {}); // a late failure after the deadline is not unhandled
      await Promise.race([read, deadline]);
      ok = true;
    } catch (e) {
      ok = false;
      const o = toErrorObject(e);
      why = { kind: String(o.data?.kind ?? "internal"), message: o.message };
    } finally {
      clearTimeout(timer);
    }
    if (ok !== reported) {
      reported = ok;
      options.onChange?.(ok, why);
    }
    last = { ok, at: Date.now() };
    return ok;
  };

  return () => {
    if (last && Date.now() - last.at < reuseMs) return Promise.resolve(last.ok);
    running ??= check().finally(() => (running = null));
    return running;
  };
}
