/** task.*, turn.* and writes.*: the contract of seed 002 over the protocol. */
import { UnauthorizedError } from "../../core/errors.ts";
import type { Allowance } from "../../core/run_rules/grant.ts";
import { readRunAllowances } from "../../store/root_settings.ts";
import { callerName, method } from "../method.ts";
import { S } from "../schemas.ts";
import { L } from "../ledger_schemas.ts";

/**
 * The standing allowances in force, as run.start reads them (.longrun/settings.json,
 * run_allowances): visible to the host that set them (task.status, host side). A file that
 * cannot be read grants nothing, and says why.
 */
function standingAllowances(path: string): { allowances: Allowance[]; error: string | null } {
  try {
    return { allowances: readRunAllowances(path), error: null };
  } catch (e) {
    return { allowances: [], error: `${(e as Error).message}; no standing allowance is in force` };
  }
}

export const taskMethods = [
  method({
    name: "task.start",
    side: "agent",
    summary:
      "I1: search this root's memory, then create a task and make it current (in_progress, read-only, turn 1); an open current task goes on in the background without its lease; the host may give the task its own terms (constraints and desired_outcome verbatim, bounds on its runs), which its runs inherit and never exceed; returns task, memories, previous_task, terms",
    params: L.taskStart,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => {
      const given = p.constraints !== undefined || p.desired_outcome !== undefined || p.bounds !== undefined;
      if (given && caller.side !== "host") {
        const field = p.constraints !== undefined ? "constraints" : p.desired_outcome !== undefined ? "desired_outcome" : "bounds";
        throw new UnauthorizedError(`Refused: task.start with ${field} is the host's: a task's terms are the user's, set by the host; an agent starts a task with its description (and keywords)`, {
          method: "task.start",
          field,
          side_required: "host",
          side: caller.side,
        });
      }
      if (!given) return { ...(await root.contract.startTask(p.description, p.keywords)), terms: null };
      // the terms are written first, as an intent, then the task, then the terms move onto it in
      // one commit: a crash in between leaves a task whose runs wait for its terms, never unbounded
      const wanted = { constraints: p.constraints ?? [], desired_outcome: p.desired_outcome ?? null, bounds: p.bounds ?? null, set_by: callerName(caller) };
      const intent = await root.runs.intendTerms(p.description, wanted);
      let out;
      try {
        out = await root.contract.startTask(p.description, p.keywords);
      } catch (e) {
        await root.runs.dropIntent(intent).catch(() => {});
        throw e;
      }
      return { ...out, terms: await root.runs.attachTerms(intent, out.task.task_id, p.description, wanted) };
    },
  }),
  method({
    name: "task.status",
    side: "agent",
    summary:
      "The current task's state (or another's, by task_id; null when none), its lease and lease log, any pending checkpoint, the task's runs, its approvals (newest 20: pending and answered), and, for the host, the standing allowances in force (run_allowances, from the root's settings)",
    params: S.taskStatus,
    lane: "read",
    readOnly: true,
    handler: async ({ root, caller }, p) => {
      const out = await root.contract.status(p.task_id);
      const runs = out.task ? await root.runs.listRuns(out.task.task_id) : [];
      const approvals = out.task ? await root.approvals.list(out.task.task_id, undefined, 20) : [];
      // the host's own decisions, shown to the host (the agent meets them as grants on its runs)
      return caller.side === "host" ? { ...out, runs, approvals, run_allowances: standingAllowances(root.paths.settings) } : { ...out, runs, approvals };
    },
  }),
  method({
    name: "task.list",
    side: "agent",
    summary: "Every task of this root, newest first: id, description, status, turn, access mode, which one is current",
    params: S.empty,
    lane: "read",
    readOnly: true,
    handler: async ({ root }) => ({ tasks: await root.state.list() }),
  }),
  method({
    name: "task.switch",
    side: "agent",
    summary: "Make another open task current: the turn ends (the task left loses its lease), the task switched to starts read-only",
    params: S.taskSwitch,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => ({ task: await root.contract.switchTask(p.task_id, p.reason) }),
  }),
  method({
    name: "task.transition",
    side: "agent",
    summary: "A whitelisted status change (to, reason) of the current task or of another by task_id; leaving in_progress revokes the lease; a task with open runs does not end",
    params: S.taskTransition,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => ({ task: await root.contract.transition(p.to, p.reason, caller.side, p.task_id) }),
  }),
  method({
    name: "task.checkpoint",
    side: "agent",
    summary: "I2: save a checkpoint to memory, then write state and return its text, memory_id and the task; pauses the task and ends the lease, except kind: progress; data: the host's own state (a JSON object, given back by task.resume and task.recover); lang: en, zh or ko",
    params: S.taskCheckpoint,
    lane: "state",
    readOnly: false,
    handler: ({ root }, p) => root.contract.checkpoint(p),
  }),
  method({
    name: "task.resume",
    side: "agent",
    summary:
      "New turn, read-only; replays a pending checkpoint once; returns task, recent memories, replay info, the last checkpoint's data and the task's approvals (newest 20, with the host's answers); message_id: the user message's id (the message that began this turn begins no second one)",
    params: S.taskResume,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => {
      const out = await root.contract.resume(p.message_id);
      return { ...out, approvals: await root.approvals.list(out.task.task_id, undefined, 20) };
    },
  }),
  method({
    name: "task.recover",
    side: "agent",
    summary:
      "Rebuild a lost or corrupt task state from the newest checkpoint machine line in memory; new turn, read-only (force: host only); checkpoint_id (host only): rebuild the current task from that older checkpoint instead, over its readable state, recorded in its history; returns the task and that checkpoint's data",
    params: S.taskRecover,
    lane: "state",
    readOnly: false,
    handler: ({ root, caller }, p) => root.contract.recoverFromMemory({ force: p.force === true, by: caller.side, checkpoint_id: p.checkpoint_id }),
  }),
  method({
    name: "task.checkpoints",
    side: "agent",
    summary:
      "A task's checkpoints (the current task's, or another's by task_id), newest first: checkpoint_id, kind (pause or progress) and label, summary (cut in a list), next_step, phase, status, turn, saved_at, memory_id; limit, cursor: next_cursor of the page before",
    params: S.taskCheckpoints,
    lane: "read",
    readOnly: true,
    handler: ({ root }, p) => root.contract.checkpoints(p),
  }),
  method({
    name: "checkpoint.get",
    side: "agent",
    summary: "One checkpoint of a task of this root, whole: its list entry, the task's description, the checkpoint's text and data",
    params: S.checkpointGet,
    lane: "read",
    readOnly: true,
    handler: async ({ root }, p) => ({ checkpoint: await root.contract.getCheckpoint(p.checkpoint_id) }),
  }),
  method({
    name: "task.fork",
    side: "host",
    summary:
      "A new current task that begins where a checkpoint left off: its description (or the one given), phase, next_step and data; status as a recovered task's, turn 1, read-only, forked_from {task_id, checkpoint_id}; never the lease, run grants or terms of the parent; an open current task goes on in the background without its lease; returns task, previous_task, data",
    params: S.taskFork,
    lane: "state",
    readOnly: false,
    handler: ({ root }, p) => root.contract.fork(p.checkpoint_id, p.description),
  }),
  method({
    name: "task.delete",
    side: "host",
    summary:
      "Delete a task of this root (not the current one, none of its runs open): its state, checkpoints and outcome (forgotten), runs with their receipts and charges, artifacts, contexts, adjustments, approvals and its events go; memories saved under it stay unless memories: true; a tombstone stays and the event log says task.deleted; again: already true; reason; returns what went",
    params: S.taskDelete,
    lane: "state",
    readOnly: false,
    handler: ({ root, caller }, p) => root.deleteTask({ task_id: p.task_id, by: callerName(caller), reason: p.reason ?? null, memories: p.memories === true }),
  }),
  method({
    name: "task.finish",
    side: "agent",
    summary: "Complete the task (current, or another by task_id) and save an outcome record to memory; refused while its runs are open unless cancel_runs: true cancels them first",
    params: S.taskFinish,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => {
      const cancelled: string[] = [];
      if (p.cancel_runs && caller.side !== "host") {
        // an agent cancels a run only with its epoch (run.cancel); ending them all at once is the user's call
        throw new UnauthorizedError("Refused: task.finish with cancel_runs is the host's decision; an agent ends its runs with run.finish or run.cancel (with its epoch)", {
          method: "task.finish",
          side_required: "host",
          side: caller.side,
        });
      }
      if (p.cancel_runs) {
        // a finish that would be refused anyway (paused, blocked, the agent verifying itself) cancels nothing
        await root.contract.checkFinishable(caller.side, p.task_id);
        const task = (await root.contract.status(p.task_id)).task;
        if (task) {
          // top-level runs: cancelling one cancels its open child runs, listed with it
          const runs = await root.runs.listRuns(task.task_id);
          for (const run of runs) {
            if (run.child_of !== null || (run.status !== "running" && run.status !== "parked" && run.status !== "requested")) continue;
            await root.runs.cancel(run.run_id, null, "the task was finished with cancel_runs", callerName(caller));
            cancelled.push(run.run_id);
          }
          for (const run of runs) if (run.child_of !== null && (run.status === "running" || run.status === "parked")) cancelled.push(run.run_id);
        }
      }
      return { ...(await root.contract.finish(p.summary, caller.side, p.task_id)), cancelled_runs: cancelled };
    },
  }),
  method({
    name: "turn.begin",
    side: "host",
    summary: "A new user message: advance the turn and revoke the lease; message_id: the message's id (a message that already began this turn, by turn.begin or task.resume, begins no second one)",
    params: S.turnBegin,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => ({ task: await root.contract.beginTurn(p.reason, p.message_id) }),
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
    now: ({ root }, p) => {
      const answer = root.contract.requireWritableNow(p.action);
      return answer && { ok: true, ...answer };
    },
  }),
];
