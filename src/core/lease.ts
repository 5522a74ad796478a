/**
 * The single-turn write lease (invariant I3), as pure functions over a task state.
 *
 * A lease is valid only while `access_mode` is writable AND `write_lease_turn` equals
 * `turn_index`; it may also carry a scope, a time to live and a number of uses, and ends at the
 * earliest of them and the turn's end. Two fields rather than one boolean: a state loaded from
 * disk can still say "writable" long after its turn ended, and the turn check refuses it anyway.
 */
import { WriteGateViolation } from "./errors.ts";
import { say } from "./messages/catalog.ts";
import { actionInScope } from "./scope.ts";
import { type Lease, pushBounded, type TaskState } from "./task.ts";

export interface GrantInput {
  reason: string;
  granted_by: string;
  scope?: readonly string[] | null;
  ttl_seconds?: number | null;
  max_uses?: number | null;
}

/** Grants a lease for the current turn. Mutates and returns `state`. */
export function grantLease(state: TaskState, input: GrantInput, now: Date): TaskState {
  const at = now.toISOString();
  const lease: Lease = {
    turn: state.turn_index,
    reason: input.reason,
    granted_by: input.granted_by,
    granted_at: at,
    scope: input.scope && input.scope.length ? [...input.scope] : null,
    expires_at: input.ttl_seconds != null ? new Date(now.getTime() + input.ttl_seconds * 1000).toISOString() : null,
    max_uses: input.max_uses ?? null,
    uses: 0,
  };
  state.access_mode = "writable";
  state.write_lease_turn = state.turn_index;
  state.lease = lease;
  state.lease_log = pushBounded(state.lease_log, {
    at,
    event: "granted",
    turn: state.turn_index,
    reason: input.reason,
    by: input.granted_by,
    scope: lease.scope,
  });
  return state;
}

/** Revokes any lease. Mutates and returns `state`; a no-op on a state that holds none. */
export function revokeLease(state: TaskState, why: string, now: Date): TaskState {
  const held = state.access_mode === "writable" || state.write_lease_turn !== null || state.lease !== null;
  state.access_mode = "read_only";
  state.write_lease_turn = null;
  state.lease = null;
  if (held) {
    state.lease_log = pushBounded(state.lease_log, {
      at: now.toISOString(),
      event: "revoked",
      turn: state.turn_index,
      reason: why,
    });
  }
  return state;
}

export type GateDecision =
  | { ok: true; lease: Lease; consumes_use: boolean }
  | { ok: false; error: WriteGateViolation; revoke: boolean };

/**
 * Decides whether `action` may write now. Pure: the caller persists a revocation (`revoke`) or
 * a counted use (`consumes_use`).
 */
export function checkGate(state: TaskState, action: string, now: Date): GateDecision {
  const turn = state.turn_index;
  const leaseTurn = state.write_lease_turn;
  const refuse = (reason: WriteGateViolation["reason"], message: string, revoke: boolean, extra = {}): GateDecision => ({
    ok: false,
    revoke,
    error: new WriteGateViolation(message, reason, action, leaseTurn, turn, extra),
  });

  if (state.access_mode !== "writable" || state.lease === null) {
    return refuse("read_only", say("gate.read_only", "en", { action: JSON.stringify(action), turn }), state.access_mode === "writable");
  }
  if (leaseTurn !== turn || state.lease.turn !== turn) {
    return refuse("stale_lease", say("gate.stale_lease", "en", { action: JSON.stringify(action), lease_turn: String(leaseTurn), turn }), true);
  }
  if (state.status !== "in_progress") {
    return refuse("not_in_progress", say("gate.not_in_progress", "en", { action: JSON.stringify(action), status: state.status }), true, { status: state.status });
  }
  const lease = state.lease;
  if (lease.expires_at !== null && now.getTime() >= Date.parse(lease.expires_at)) {
    return refuse("expired", say("gate.expired", "en", { action: JSON.stringify(action), expires_at: lease.expires_at }), true, { expires_at: lease.expires_at });
  }
  if (lease.max_uses !== null && lease.uses >= lease.max_uses) {
    return refuse("uses_exhausted", say("gate.uses_exhausted", "en", { action: JSON.stringify(action), max_uses: lease.max_uses }), true, { max_uses: lease.max_uses });
  }
  if (lease.scope !== null && !actionInScope(action, lease.scope)) {
    return refuse("out_of_scope", say("gate.out_of_scope", "en", { action: JSON.stringify(action), scope: JSON.stringify(lease.scope) }), false, { scope: lease.scope });
  }
  return { ok: true, lease, consumes_use: lease.max_uses !== null };
}

/**
 * Whether the lease would let a write through now, whatever the action (scope aside): what a
 * reader is told (`task.status`), derived from the stored fields and the clock, never stored.
 */
export function leaseInForce(state: TaskState, now: Date): boolean {
  const lease = state.lease;
  if (state.access_mode !== "writable" || lease === null) return false;
  if (state.write_lease_turn !== state.turn_index || lease.turn !== state.turn_index) return false;
  if (state.status !== "in_progress") return false;
  if (lease.expires_at !== null && now.getTime() >= Date.parse(lease.expires_at)) return false;
  return lease.max_uses === null || lease.uses < lease.max_uses;
}

/** The task as a reader sees it: a lease no longer in force (or ended by a pending checkpoint) reads as read-only. */
export function asSeen(state: TaskState, now: Date, ended = false): TaskState {
  if (state.access_mode === "read_only" && state.lease === null && state.write_lease_turn === null) return state;
  if (!ended && leaseInForce(state, now)) return state;
  return { ...state, access_mode: "read_only", write_lease_turn: null, lease: null };
}

/** Records one use of the lease (only meaningful when it has `max_uses`). Mutates and returns `state`. */
export function consumeUse(state: TaskState): TaskState {
  if (state.lease) state.lease = { ...state.lease, uses: state.lease.uses + 1 };
  return state;
}
