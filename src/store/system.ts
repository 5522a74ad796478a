/**
 * The real clock and id source. Random bytes come from the global Web Crypto, not `node:crypto`:
 * loading that module costs a per-call hook process about a third of a bare Bun program's start.
 */
import type { Clock, IdSource } from "../core/ports.ts";

export const systemClock: Clock = { now: () => new Date() };

export const systemIds: IdSource = {
  taskId(now: Date): string {
    const iso = now.toISOString(); // 2026-11-29T21:17:00.000Z
    const stamp = iso.slice(0, 10).replace(/-/g, "") + "_" + iso.slice(11, 19).replace(/:/g, "");
    const hex = Array.from(globalThis.crypto.getRandomValues(new Uint8Array(2)), (b) => b.toString(16).padStart(2, "0")).join("");
    return `T_${stamp}_${hex}`;
  },
  checkpointId: () => globalThis.crypto.randomUUID(),
};
