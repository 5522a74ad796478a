/** task.*, turn.* and writes.*: the contract of seed 002 over the protocol. */
import { callerName, method } from "../method.ts";
import { S } from "../schemas.ts";

export const taskMethods = [
  method({
    name: "task.start",
    side: "agent",
    summary: "I1: search this root's memory, then create a task (in_progress, read-only, turn 1); returns task and memories",
    params: S.taskStart,
    lane: "state",
    readOnly: false,
    handler: ({ root }, p) => root.contract.startTask(p.description, p.keywords),
  }),
  method({
    name: "task.status",
    side: "agent",
    summary: "The task state (null when none), its lease and lease log, and any pending checkpoint",
    params: S.empty,
    lane: "read",
    readOnly: true,
    handler: ({ root }) => root.contract.status(),
  }),
  method({
    name: "task.transition",
    side: "agent",
    summary: "A whitelisted status change (to, reason); leaving in_progress revokes the lease",
    params: S.taskTransition,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => ({ task: await root.contract.transition(p.to, p.reason, caller.side) }),
  }),
  method({
    name: "task.checkpoint",
    side: "agent",
    summary: "I2: save a checkpoint to memory, then write state and return its text, memory_id and the task",
    params: S.taskCheckpoint,
    lane: "state",
    readOnly: false,
    handler: ({ root }, p) => root.contract.checkpoint(p),
  }),
  method({
    name: "task.resume",
    side: "agent",
    summary: "New turn, read-only; replays a pending checkpoint once; returns task, recent memories, replay info",
    params: S.empty,
    lane: "state",
    readOnly: false,
    handler: ({ root }) => root.contract.resume(),
  }),
  method({
    name: "task.recover",
    side: "agent",
    summary: "Rebuild a lost or corrupt task state from the newest checkpoint machine line in memory; new turn, read-only (force: host only)",
    params: S.taskRecover,
    lane: "state",
    readOnly: false,
    handler: ({ root, caller }, p) => root.contract.recoverFromMemory({ force: p.force === true, by: caller.side }),
  }),
  method({
    name: "task.finish",
    side: "agent",
    summary: "Complete the task and save an outcome record to memory; returns task and memory_id",
    params: S.taskFinish,
    lane: "state",
    readOnly: false,
    handler: ({ root, caller }, p) => root.contract.finish(p.summary, caller.side),
  }),
  method({
    name: "turn.begin",
    side: "host",
    summary: "A new user message: advance the turn and revoke the lease",
    params: S.turn,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => ({ task: await root.contract.beginTurn(p.reason) }),
  }),
  method({
    name: "turn.end",
    side: "host",
    summary: "The turn is over: revoke the lease (the turn number stays)",
    params: S.turn,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => ({ task: await root.contract.endTurn(p.reason) }),
  }),
  method({
    name: "writes.enable",
    side: "host",
    summary: "Grant a write lease for this turn only (reason; optional scope patterns, ttl_seconds, max_uses)",
    params: S.writesEnable,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => {
      const task = await root.contract.enableWrites({
        reason: p.reason,
        granted_by: callerName(caller),
        scope: p.scope ?? null,
        ttl_seconds: p.ttl_seconds ?? caller.defaultLeaseTtlSeconds ?? null,
        max_uses: p.max_uses ?? null,
      });
      return { task, lease: task.lease };
    },
  }),
  method({
    name: "writes.request",
    side: "agent",
    summary: "Ask the host for a write lease; recorded in the lease log, never granted by itself",
    params: S.writesRequest,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => {
      const task = await root.contract.requestWrites(p.reason, p.scope ?? null, callerName(caller));
      return { requested: true, granted: false, turn: task.turn_index, task };
    },
  }),
  method({
    name: "writes.require",
    side: "agent",
    summary: "Gate check for an action: ok, or write_gate_violation (read_only, stale_lease, out_of_scope, …)",
    params: S.writesRequire,
    lane: "state",
    // Not read-only: a stale lease is revoked, and a lease with max_uses records each use.
    readOnly: false,
    handler: async ({ root }, p) => ({ ok: true, ...(await root.contract.requireWritable(p.action)) }),
  }),
];
