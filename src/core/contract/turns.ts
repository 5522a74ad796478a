/**
 * Turns and the write lease (I3: a lease covers one turn). The host begins and ends turns and
 * grants the lease; the agent may only ask for one; every write passes the gate, `requireWritable`.
 */
import { ConflictError, NoActiveTaskError, WriteGateViolation } from "../errors.ts";
import { checkGate, consumeUse, type GrantInput, grantLease, revokeLease } from "../lease.ts";
import { isTerminal } from "../status.ts";
import { cloneState, type Lease, pushBounded, type TaskState } from "../task.ts";
import { commit, type ContractContext, mustBeOpen, mustLoad } from "./context.ts";

export function beginTurn(c: ContractContext, reason: string, messageId?: string): Promise<TaskState> {
  return c.d.state.transact(async (tx) => {
    const live = await mustBeOpen(tx, "No turn begun");
    if (messageId !== undefined && live.turn_message_id === messageId) return live;
    const now = c.now();
    const next = cloneState(live);
    next.turn_index = live.turn_index + 1;
    next.turn_message_id = messageId ?? null;
    revokeLease(next, reason, now);
    return commit(tx, live, next, now);
  });
}

export function endTurn(c: ContractContext, reason: string): Promise<TaskState> {
  return c.d.state.transact(async (tx) => {
    const live = await mustBeOpen(tx, "No turn ended");
    const now = c.now();
    return commit(tx, live, revokeLease(cloneState(live), reason, now), now);
  });
}

export function enableWrites(c: ContractContext, input: GrantInput): Promise<TaskState> {
  return c.d.state.transact(async (tx) => {
    const live = await mustLoad(tx);
    requireWorkable(live, "Writes not granted");
    const now = c.now();
    return commit(tx, live, grantLease(cloneState(live), input, now), now);
  });
}

/** A lease is granted only to a task in progress. */
function requireWorkable(live: TaskState, what: string): void {
  if (isTerminal(live.status)) {
    throw new NoActiveTaskError(`${what}: task ${live.task_id} is ${live.status}; start a new task with task.start`, {
      task_id: live.task_id,
      status: live.status,
    });
  }
  if (live.status !== "in_progress") {
    throw new ConflictError(
      `${what}: task ${live.task_id} is ${live.status}, not in_progress; ` +
        `call task.resume or task.transition to in_progress first`,
      { reason: "not_in_progress", task_id: live.task_id, status: live.status },
    );
  }
}

export function requestWrites(c: ContractContext, reason: string, scope: readonly string[] | null, by: string): Promise<TaskState> {
  return c.d.state.transact(async (tx) => {
    const live = await mustBeOpen(tx, "Nothing requested");
    const now = c.now();
    const next = cloneState(live);
    next.lease_log = pushBounded(next.lease_log, {
      at: now.toISOString(),
      event: "requested",
      turn: live.turn_index,
      reason,
      by,
      scope: scope && scope.length ? [...scope] : null,
    });
    return commit(tx, live, next, now);
  });
}

export type GateAnswer = { action: string; turn: number; lease: Lease };

/**
 * The gate check answered from the state as read (`seen`), when nothing must change: the answer,
 * or a refusal thrown; null when the check must go on under the lock (a stale lease to revoke, a
 * counted use to record).
 */
function answerAsRead(c: ContractContext, seen: TaskState, action: string): GateAnswer | null {
  if (c.leaseVoided(seen)) {
    throw new WriteGateViolation(
      `Write refused: ${JSON.stringify(action)}: a checkpoint failed and its lease could not be ended in storage; ` +
        `task.resume (once storage works) begins a new turn, then the host grants a new lease`,
      "read_only",
      action,
      seen.write_lease_turn,
      seen.turn_index,
    );
  }
  if (c.d.pending.exists()) {
    const lost = c.d.pending.lost();
    throw new WriteGateViolation(
      lost
        ? `Write refused: ${JSON.stringify(action)}: a checkpoint failed and could not be kept (storage full or failing; ${c.d.pending.path} marks it), and the turn's lease ended with it; ` +
          `task.resume (once storage works) begins a new turn, then the host grants a new lease`
        : `Write refused: ${JSON.stringify(action)}: a checkpoint could not be saved and waits in ${c.d.pending.path}, and the turn's lease ended with it; ` +
          `task.resume saves it, then the host grants a new lease`,
      "read_only",
      action,
      seen.write_lease_turn,
      seen.turn_index,
      { pending_path: c.d.pending.path },
    );
  }
  const first = checkGate(seen, action, c.now());
  if (first.ok && !first.consumes_use) return { action, turn: seen.turn_index, lease: first.lease };
  if (!first.ok && !first.revoke) throw first.error;
  return null;
}

/**
 * `requireWritable` without waiting for anything, when the store can say at once that the state
 * it holds is current (`StateStore.peek`): the same answer, or the same refusal thrown. Undefined
 * when it cannot (the store must be read, a lease revoked or a use recorded): then call
 * `requireWritable`, which decides the same from the store.
 */
export function requireWritableNow(c: ContractContext, action: string): GateAnswer | undefined {
  const seen = c.d.state.peek?.();
  if (seen === undefined) return undefined;
  if (seen === null) throw new NoActiveTaskError();
  return answerAsRead(c, seen, action) ?? undefined;
}

export async function requireWritable(c: ContractContext, action: string): Promise<GateAnswer> {
  const seen = await mustLoad(c.d.state);
  const asRead = answerAsRead(c, seen, action);
  if (asRead) return asRead;
  // a refusal is thrown after the transaction: its revocation must commit, not roll back
  const out = await c.d.state.transact(async (tx) => {
    const live = await mustLoad(tx);
    const now = c.now();
    const decision = checkGate(live, action, now);
    if (!decision.ok) {
      if (decision.revoke) await commit(tx, live, revokeLease(cloneState(live), decision.error.reason, now), now);
      return { refused: decision.error };
    }
    if (!decision.consumes_use) return { ok: { action, turn: live.turn_index, lease: decision.lease } };
    const next = await commit(tx, live, consumeUse(cloneState(live)), now);
    return { ok: { action, turn: next.turn_index, lease: next.lease! } };
  });
  if ("refused" in out) throw out.refused;
  return out.ok;
}
