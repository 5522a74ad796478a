/**
 * `longrun grant "reason" [--scope GLOB,...] [--ttl 10m] [--uses N]` and `longrun revoke`: a person
 * grants the write lease for the current turn of the open task, host side, through the same
 * method as a host's `writes.enable` (recorded as `granted_by: "host:cli"`), and ends it again.
 *
 * A grant always has a time to live: where nothing advances the turn (an MCP-only setup, no hooks)
 * a lease would otherwise last until the agent checkpoints. Without `--ttl` it is
 * `DEFAULT_GRANT_TTL_SECONDS` (10 minutes, as the HTTP API's host grants). The lease ends at the
 * first of its time to live, its uses, the turn's end (a new prompt, with the hooks) and a
 * checkpoint; `revoke` ends it now. The grant says what it granted and until when.
 */
import type { Lease, TaskState } from "../../core/task.ts";
import { asPerson, PersonError, type PersonSession, type PersonTarget, printJson } from "./host.ts";

/** The time to live of a grant made without `--ttl`: ten minutes. */
export const DEFAULT_GRANT_TTL_SECONDS = 600;

/** The longest `--ttl` (the protocol's bound on `ttl_seconds`): seven days. */
export const MAX_GRANT_TTL_SECONDS = 7 * 24 * 3600;

/** `--ttl` as seconds: `90`, `90s`, `10m`, `2h`, `1d`; null when it is not one of those (or 0). */
export function ttlSeconds(text: string): number | null {
  const m = /^(\d{1,9})([smhd]?)$/.exec(text.trim());
  if (!m || Number(m[1]) === 0) return null;
  return Number(m[1]) * ({ "": 1, s: 1, m: 60, h: 3600, d: 86400 } as const)[m[2] as "" | "s" | "m" | "h" | "d"];
}

/** A duration for a person: `10m`, `1h30m`, `45s`. */
export function shownDuration(seconds: number): string {
  const parts: string[] = [];
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (d) parts.push(`${d}d`);
  if (h) parts.push(`${h}h`);
  if (m) parts.push(`${m}m`);
  if (s || parts.length === 0) parts.push(`${s}s`);
  return parts.join("");
}

export interface GrantOptions extends PersonTarget {
  reason: string;
  scope?: string;
  ttl?: string;
  uses?: string;
}

interface GrantInput {
  reason: string;
  scope: string[] | null;
  ttl_seconds: number;
  max_uses: number | null;
}

/** The flags as the method's params, or a one-line refusal. */
export function grantInput(o: { reason: string; scope?: string; ttl?: string; uses?: string }): GrantInput {
  const reason = o.reason.trim();
  if (!reason) throw new PersonError('a grant needs a reason, e.g. longrun grant "fix the parser"; nothing was granted');
  let scope: string[] | null = null;
  if (o.scope !== undefined) {
    scope = o.scope.split(",").map((s) => s.trim()).filter(Boolean);
    if (!scope.length) throw new PersonError(`--scope ${JSON.stringify(o.scope)} names no pattern; pass glob patterns separated by commas, e.g. --scope "src/**,tests/**"; nothing was granted`);
  }
  const ttl = o.ttl === undefined ? DEFAULT_GRANT_TTL_SECONDS : ttlSeconds(o.ttl);
  if (ttl === null || ttl > MAX_GRANT_TTL_SECONDS) {
    throw new PersonError(`--ttl ${JSON.stringify(o.ttl)} is not a time to live from 1s to 7d; write it as 90s, 10m, 2h or 1d; nothing was granted`);
  }
  let uses: number | null = null;
  if (o.uses !== undefined) {
    uses = /^\d{1,7}$/.test(o.uses.trim()) ? Number(o.uses.trim()) : 0;
    if (uses < 1 || uses > 1_000_000) throw new PersonError(`--uses ${JSON.stringify(o.uses)} is not a number of writes from 1 to 1000000; nothing was granted`);
  }
  return { reason, scope, ttl_seconds: ttl, max_uses: uses };
}

/** What a lease allows and until when, in one line. */
export function describeLease(task: TaskState, lease: Lease): string {
  const scope = lease.scope ? `scope ${lease.scope.join(", ")}` : "any path";
  const uses = lease.max_uses !== null ? `; at most ${lease.max_uses} write(s)` : "";
  const until = lease.expires_at
    ? `until ${lease.expires_at.replace(/\.\d+Z$/, "Z")} (${shownDuration(Math.max(0, Math.round((Date.parse(lease.expires_at) - Date.parse(lease.granted_at)) / 1000)))})`
    : "until the turn ends";
  return `writes granted for turn ${lease.turn} of task ${task.task_id} (${JSON.stringify(lease.reason)}, by ${lease.granted_by}): ${scope}${uses}; ${until}, ` +
    "or sooner when the turn ends or the task checkpoints; `longrun revoke` ends it now";
}

/** The open task of the root, or a refusal naming what to do. */
async function openTask(s: PersonSession, verb: string): Promise<TaskState> {
  const { task, pending_checkpoint: pending } = await s.call<{ task: TaskState | null; pending_checkpoint: { path: string } | null }>("task.status");
  if (!task) throw new PersonError(`no task in ${s.where}, so there is nothing to ${verb} for: \`longrun start "what to do"\` begins one`);
  if (pending) throw new PersonError(`a checkpoint of task ${task.task_id} failed (${pending.path}; \`longrun status\` says more), and no write passes until \`longrun resume\` begins a new turn: resume, then grant again; nothing was granted`);
  if (task.status === "paused") throw new PersonError(`task ${task.task_id} is paused: \`longrun resume\` continues it (a new turn), then grant again; nothing was granted`);
  if (task.status !== "in_progress") {
    throw new PersonError(`task ${task.task_id} is ${task.status}, not in_progress, so it takes no writes; \`longrun status\` shows it, \`longrun start "what to do"\` begins another; nothing was granted`);
  }
  return task;
}

export function runGrant(o: GrantOptions): Promise<number> {
  return asPerson("grant", o, false, async (s) => {
    const input = grantInput(o);
    await openTask(s, "grant");
    const { task, lease } = await s.call<{ task: TaskState; lease: Lease }>("writes.enable", {
      reason: input.reason,
      ...(input.scope ? { scope: input.scope } : {}),
      ttl_seconds: input.ttl_seconds,
      ...(input.max_uses !== null ? { max_uses: input.max_uses } : {}),
    });
    if (o.json) printJson({ ok: true, root: s.where, task_id: task.task_id, turn: lease.turn, lease, until: lease.expires_at });
    else console.log(describeLease(task, lease));
    return 0;
  });
}

export function runRevoke(o: PersonTarget): Promise<number> {
  return asPerson("revoke", o, false, async (s) => {
    const { task } = await s.call<{ task: TaskState | null }>("task.status");
    if (!task || !task.lease) {
      const what = task ? `task ${task.task_id} holds no write lease in force (turn ${task.turn_index})` : `no task in ${s.where}`;
      if (o.json) printJson({ ok: true, root: s.where, task_id: task?.task_id ?? null, revoked: false });
      else console.log(`${what}; nothing to revoke`);
      return 0;
    }
    const ended = await s.call<{ task: TaskState }>("turn.end", { reason: "revoked by a person (longrun revoke)" });
    if (o.json) printJson({ ok: true, root: s.where, task_id: ended.task.task_id, revoked: true, lease: task.lease });
    else console.log(`revoked the write lease of task ${task.task_id} (turn ${task.lease.turn}, ${JSON.stringify(task.lease.reason)}): read-only now`);
    return 0;
  });
}
