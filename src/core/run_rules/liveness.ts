/**
 * Owner liveness and timed wakes of a run (issue 28), pure.
 *
 * - An owner may be given a time to live (`owner_ttl_seconds`) when it starts or claims a run.
 *   Each beat (a heartbeat, the claim, the start, the host's grant, a wake) restarts it. A running
 *   run whose owner let it pass is `stale_owner` from that instant on: computed from the clock
 *   whenever the run is read, never set by a job that could lag. A run without a TTL never goes stale.
 * - Who may claim: a run whose owner is live, or that tracks no liveness, anyone (as before); a
 *   stale one, only the host or an owner the root's settings name as a standby (`standby_owners`).
 * - A heartbeat's answer says what the owner must know now (`stop`): it was superseded (a newer
 *   epoch claimed the run), the run was cancelled, its time budget is up (`deadline`), or another
 *   limit is reached (`budget_exhausted`); null while it may go on.
 * - A run's time budget ends at the earlier of its `deadline` and its start plus `wall_seconds`.
 */
import type { BudgetLimits, BudgetStatus } from "./budget.ts";

/** What a heartbeat tells the owner to stop for (null: go on). */
export type HeartbeatStop = null | "cancelled" | "budget_exhausted" | "deadline" | "superseded";

export interface Liveness {
  /** The owner's time to live, in seconds (null: liveness is not tracked). */
  owner_ttl_seconds: number | null;
  /** The owner's last beat (ISO 8601), null when none was recorded. */
  owner_beat_at: string | null;
  /** Whether the owner missed its TTL (only a running run goes stale). */
  stale_owner: boolean;
  /** When it went stale (its last beat plus the TTL), null while live. */
  stale_since: string | null;
}

/** When an owner beating at `beatAt` with `ttl` seconds goes stale (null: never). */
export function staleAt(ttl: number | null, beatAt: string | null): number | null {
  if (ttl === null || beatAt === null) return null;
  const t = Date.parse(beatAt);
  return Number.isNaN(t) ? null : t + ttl * 1000;
}

/** A run's owner liveness at `now`: stale once a running run's owner let its TTL pass. */
export function livenessOf(status: string, ttl: number | null, beatAt: string | null, now: Date): Liveness {
  const at = status === "running" ? staleAt(ttl, beatAt) : null;
  const stale = at !== null && now.getTime() >= at;
  return { owner_ttl_seconds: ttl, owner_beat_at: beatAt, stale_owner: stale, stale_since: stale ? new Date(at).toISOString() : null };
}

/** Who may claim a run now: anyone while its owner is live (or untracked); a stale one, the host or a named standby. */
export function mayClaim(stale: boolean, side: "host" | "agent", owner: string, standbys: readonly string[]): boolean {
  return !stale || side === "host" || standbys.includes(owner);
}

/** When a run's time budget ends (ms since the epoch), the earlier of its deadline and its start plus wall_seconds; null without one. */
export function timeLimitAt(limits: BudgetLimits, startedAt: string): number | null {
  const ends: number[] = [];
  if (limits.deadline !== undefined) ends.push(Date.parse(limits.deadline));
  if (limits.wall_seconds !== undefined) ends.push(Date.parse(startedAt) + limits.wall_seconds * 1000);
  const ok = ends.filter((t) => !Number.isNaN(t));
  return ok.length ? Math.min(...ok) : null;
}

/** What a heartbeat at `epoch` answers for a run at `current` epoch, with its status and budget. */
export function heartbeatStop(epoch: number, current: number, status: string, budget: Pick<BudgetStatus, "exhausted_by">): HeartbeatStop {
  if (epoch < current) return "superseded";
  if (status === "cancelled") return "cancelled";
  if (budget.exhausted_by.some((d) => d === "deadline" || d === "wall_seconds")) return "deadline";
  if (budget.exhausted_by.length) return "budget_exhausted";
  return null;
}
