/** The real clock and id source. */
import { randomBytes, randomUUID } from "node:crypto";
import type { Clock, IdSource } from "../core/ports.ts";

export const systemClock: Clock = { now: () => new Date() };

export const systemIds: IdSource = {
  taskId(now: Date): string {
    const iso = now.toISOString(); // 2026-11-29T21:17:00.000Z
    const stamp = iso.slice(0, 10).replace(/-/g, "") + "_" + iso.slice(11, 19).replace(/:/g, "");
    return `T_${stamp}_${randomBytes(2).toString("hex")}`;
  },
  checkpointId: () => randomUUID(),
};
