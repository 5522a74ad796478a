/** run.*, receipt.* and budget.*: the run ledger of seed 003 over the protocol. */
import { LimitExceededError, NoActiveTaskError, UnauthorizedError } from "../../core/errors.ts";
import type { BudgetLimits } from "../../core/run_rules/budget.ts";
import { allowanceGrant, type Permissions } from "../../core/run_rules/grant.ts";
import type { GrantNow } from "../../ledger/runs.ts";
import { requireWithinTerms } from "../../ledger/terms.ts";
import { readRunAllowances, readStandbyOwners } from "../../store/root_settings.ts";
import { LIMITS } from "../../core/limits.ts";
import type { Root } from "../../root/root.ts";
import { sha256Hex } from "../../store/blobs.ts";
import { totalOf } from "../../core/run_rules/budget.ts";
import { L } from "../ledger_schemas.ts";
import { type Caller, callerName, method } from "../method.ts";
import { invalidParams } from "../errors.ts";

/** JSON with object keys sorted, so equal arguments always give the same digest. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The current task, which must be open (a new run or continuation belongs to an open task). */
async function openTaskId(root: Root, what: string): Promise<string> {
  const task = await root.state.load();
  if (!task || task.status === "completed" || task.status === "failed") {
    throw new NoActiveTaskError(`${what}: ${task ? `the current task ${task.task_id} is ${task.status}` : "no task in this root"}; a run belongs to an open task (task.start begins one)`);
  }
  return task.task_id;
}

/** The task the call is about: the root's current task (finished ones included, for reading). */
export async function currentTaskId(root: Root): Promise<string> {
  const task = await root.state.load();
  if (!task) throw new NoActiveTaskError("No task in this root: call task.start first (runs, artifacts and adjustments belong to a task)");
  return task.task_id;
}

/**
 * Whether a run asked for now is granted at once: always when the host asks (the host granting
 * itself), by a standing allowance of the root's settings when one covers it (never for a
 * continuation: continuing is the user's explicit choice), else not (it waits as a request).
 */
function grantNow(root: Root, caller: Caller, want: Permissions, budget: BudgetLimits, reason: string | undefined, standing: boolean): GrantNow | null {
  if (caller.side === "host") return { by: callerName(caller), reason: reason ?? "asked by the host", standing: null, budget };
  if (!standing) return null;
  let allowances;
  try {
    allowances = readRunAllowances(root.paths.settings);
  } catch {
    return null; // unreadable settings grant nothing: the request waits for the host
  }
  for (const a of allowances) {
    const granted = allowanceGrant(a, want, budget);
    if (granted) return { by: "host:settings", reason: `standing allowance ${JSON.stringify(a.name)}`, standing: a.name, budget: granted };
  }
  return null;
}

/** The standbys the root's settings name; an unreadable file names none (only the host claims a stale run). */
function standbyOwners(root: Root): string[] {
  try {
    return readStandbyOwners(root.paths.settings);
  } catch {
    return [];
  }
}

/** A wake time as stored (UTC, ms), refused when further ahead than LIMITS.wake_at_days. */
function wakeTime(root: Root, wakeAt: string | undefined): string | null {
  if (wakeAt === undefined) return null;
  const t = Date.parse(wakeAt);
  const ahead = (t - root.runs.now().getTime()) / 86_400_000;
  if (Number.isNaN(t)) throw invalidParams("Invalid params for run.park: wake_at is an ISO 8601 instant such as 2026-12-01T18:00:00Z", { field: "wake_at" });
  if (ahead > LIMITS.wake_at_days) throw new LimitExceededError("wake_at", LIMITS.wake_at_days, Math.ceil(ahead), "days ahead", "park it for less long, and park it again when it wakes");
  return new Date(t).toISOString();
}

/** Host-only params of an agent-side method are refused from the agent, naming them. */
function hostOnly(caller: Caller, method: string, field: string, given: boolean, why: string): void {
  if (given && caller.side !== "host") {
    throw new UnauthorizedError(`Refused: ${method} with ${field} is the host's: ${why}`, { method, field, side_required: "host", side: caller.side });
  }
}

export const runMethods = [
  method({
    name: "run.start",
    side: "agent",
    summary:
      "Start a run of the current task: owner, authorization (tools, sources, send: where data may go, scope), budget limits; epoch 1. From the agent side it is a request (status requested) until the host grants it (run.grant) or a standing allowance of the root's settings covers it; from the host it is granted at once",
    params: L.runStart,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => {
      const authorization = { tools: p.tools ?? [], sources: p.sources ?? [], send: p.send ?? [], scope: p.scope ?? [] };
      const budget = p.budget ?? {};
      const task = await root.state.load();
      if (task) requireWithinTerms(await root.runs.termsFor(task.task_id), task.task_id, authorization, budget);
      return {
        run: await root.runs.start(task, {
          owner: p.owner,
          authorization,
          budget,
          constraints: p.constraints ?? [],
          owner_ttl_seconds: p.owner_ttl_seconds ?? null,
          requested_by: callerName(caller),
          grant: grantNow(root, caller, authorization, budget, p.reason, true),
        }),
      };
    },
  }),
  method({
    name: "run.grant",
    side: "host",
    summary:
      "Grant a requested run (or continuation) as asked or narrowed: tools, sources, send, scope, budget, deadline (each omitted: as asked; never wider than the request); recorded with who, when and why",
    params: L.runGrant,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => {
      const budget = p.budget || p.deadline ? { ...(p.budget ?? (await root.runs.get(p.run_id)).run.grant?.request.budget ?? {}), ...(p.deadline ? { deadline: p.deadline } : {}) } : undefined;
      return {
        run: await root.runs.grant(p.run_id, {
          narrow: { tools: p.tools, sources: p.sources, send: p.send, scope: p.scope },
          budget,
          by: callerName(caller),
          reason: p.reason,
        }),
      };
    },
  }),
  method({
    name: "run.refuse",
    side: "host",
    summary: "Refuse a requested run (or continuation) with a reason: it ends as refused and never begins an effect; recorded with who and when",
    params: L.runRefuse,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => ({ run: await root.runs.refuse(p.run_id, callerName(caller), p.reason) }),
  }),
  method({
    name: "run.get",
    side: "agent",
    summary: "Observe a run (reconnect): status, owner, epoch, question, budget, receipts counted by status and by kind, unknown receipts, open items, events; changes nothing",
    params: L.runId,
    lane: "read",
    readOnly: true,
    handler: ({ root }, p) => root.runs.get(p.run_id),
  }),
  method({
    name: "run.claim",
    side: "agent",
    summary:
      "Same-run recovery: take ownership at a new epoch (the old owner's next step is stale_epoch); begun-but-unsettled receipts become unknown; owner_ttl_seconds sets the new owner's time to live. A run whose owner is stale_owner is claimed only by the host or a standby the root's settings name (standby_owners)",
    params: L.runClaim,
    lane: "state",
    readOnly: false,
    handler: ({ root, caller }, p) =>
      root.runs.claim(p.run_id, p.owner, { side: caller.side, name: callerName(caller), standbys: standbyOwners(root), ttl: p.owner_ttl_seconds }),
  }),
  method({
    name: "run.heartbeat",
    side: "agent",
    summary:
      "The owner's beat, fenced by its epoch: keeps the run from going stale_owner (owner_ttl_seconds) and answers what the owner must know now: stop is null (go on), cancelled, budget_exhausted, deadline (its time budget is up) or superseded (a newer epoch owns the run; nothing recorded)",
    params: L.runHeartbeat,
    lane: "state",
    readOnly: false,
    handler: ({ root }, p) => root.runs.heartbeat(p.run_id, p.epoch),
  }),
  method({
    name: "run.continue",
    side: "agent",
    summary:
      "Explicit continuation in the current (open) task: a new run linked to its parent, its permissions narrowed or kept (never widened), an explicit budget, the parent's unknowns as open items. From the agent side it is a request until the host grants it (continuing past a stop is the user's choice); from the host it is granted at once",
    params: L.runContinue,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => {
      const taskId = await openTaskId(root, "run.continue");
      const terms = await root.runs.termsFor(taskId);
      return root.runs.continueRun(p.parent_run_id, {
        task_id: taskId,
        check: (authorization) => requireWithinTerms(terms, taskId, authorization, p.budget),
        owner: p.owner,
        budget: p.budget,
        narrow: { tools: p.tools, sources: p.sources, send: p.send, scope: p.scope },
        requested_by: callerName(caller),
        grant: grantNow(root, caller, { tools: [], sources: [], send: [], scope: [] }, p.budget, p.reason, false),
      });
    },
  }),
  method({
    name: "run.child",
    side: "agent",
    summary:
      "Start a child run of a running run (a sub-agent's work), fenced by the parent's epoch: its own id, owner and receipts; a slice of the parent's budget (a limit for every dimension the parent limits, at most what it has left, reserved while the child is open) and the parent's tools, sources, send and scope or fewer; granted at once within the parent's grant. Its spend rolls up to the parent; cancelling the parent cancels it; the parent cannot finish while it is open",
    params: L.runChild,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => ({
      run: await root.runs.child(p.run_id, p.epoch, {
        owner: p.owner,
        owner_ttl_seconds: p.owner_ttl_seconds ?? null,
        budget: p.budget,
        narrow: { tools: p.tools, sources: p.sources, send: p.send, scope: p.scope },
        requested_by: callerName(caller),
        reason: p.reason ?? "a child run",
      }),
    }),
  }),
  method({
    name: "run.list",
    side: "agent",
    summary: "The runs of the current task (or of task_id, or of every task with all_tasks): status, owner, epoch, budget, open items, newest checkpoint; and the task's total spend",
    params: L.runList,
    lane: "read",
    readOnly: true,
    handler: async ({ root }, p) => {
      const taskId = p.all_tasks ? undefined : (p.task_id ?? (await currentTaskId(root)));
      const runs = await root.runs.listRuns(taskId);
      // a child's spend is in its parent's already: the total counts top-level runs (its unknown charges, each run's own)
      const total = totalOf(runs.filter((r) => r.child_of === null).map((r) => r.budget));
      return { task_id: taskId ?? null, runs, total: { ...total, unknown_charges: runs.reduce((n, r) => n + r.budget.unknown_charges, 0) } };
    },
  }),
  method({
    name: "run.checkpoint",
    side: "agent",
    summary: "A run's own working summary (what is settled, what is open, the methods that failed, the next step), fenced by its epoch; run.get and run.claim return the newest",
    params: L.runCheckpoint,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => ({ checkpoint: await root.runs.checkpoint(p.run_id, p.epoch, { settled: p.settled, open: p.open, failed: p.failed ?? [], next_step: p.next_step ?? "", note: p.note ?? "" }) }),
  }),
  method({
    name: "run.park",
    side: "agent",
    summary:
      "Park a running run with what it waits for; wake_at: a running longrun process (serve, http, mcp) wakes it then, once, also when it falls due while none ran (at the next start); for_user: true parks it for the user, and only the host wakes it, with the answer (or wake_at, without one)",
    params: L.runPark,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => ({ run: await root.runs.park(p.run_id, p.epoch, p.waiting_for, p.for_user === true, wakeTime(root, p.wake_at)) }),
  }),
  method({
    name: "run.wake",
    side: "agent",
    summary:
      "Wake a parked run; identity, receipts and budget are kept. A run parked for the user is woken by the host only, with its answer (text, data), delivered to the run (run.get, run.claim); the host may omit the epoch",
    params: L.runWake,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => {
      hostOnly(caller, "run.wake", "answer", p.answer !== undefined, "the answer is the user's, given through the host");
      if (p.epoch === undefined && caller.side !== "host") {
        throw invalidParams("Invalid params for run.wake: an agent must carry its epoch (only the host may wake without one)", { field: "epoch" });
      }
      if (p.answer?.data !== undefined) {
        const size = JSON.stringify(p.answer.data).length;
        if (size > LIMITS.checkpoint_data_chars) throw new LimitExceededError("answer.data", LIMITS.checkpoint_data_chars, size, "characters");
      }
      return { run: await root.runs.wake(p.run_id, p.epoch ?? null, p.reason ?? "woken", { side: caller.side, name: callerName(caller) }, p.answer ?? null) };
    },
  }),
  method({
    name: "run.yield",
    side: "agent",
    summary: "Stop the current request so the next one adopts an adjustment; recorded as a yield, the run keeps running",
    params: L.runYield,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => ({ run: await root.runs.yieldRequest(p.run_id, p.epoch, p.reason, p.request_id ?? null, p.adjustment_id ?? null) }),
  }),
  method({
    name: "run.cancel",
    side: "agent",
    summary: "The user stops the whole run (recorded as a cancel, distinct from a yield); the host may omit the epoch",
    params: L.runCancel,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => {
      if (p.epoch === undefined && caller.side !== "host") {
        throw invalidParams("Invalid params for run.cancel: an agent must carry its epoch (only the host may cancel without one)", { field: "epoch" });
      }
      return { run: await root.runs.cancel(p.run_id, p.epoch ?? null, p.reason, callerName(caller)) };
    },
  }),
  method({
    name: "run.finish",
    side: "agent",
    summary: "End a run with its outcome and the gaps still open (a normal end never claims the gaps are closed); each gap is the task's, with an id (the open gap of the same text is that one); returns run and gaps",
    params: L.runFinish,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => {
      const run = await root.runs.finish(p.run_id, p.epoch, p.outcome, p.gaps ?? [], p.status ?? "finished");
      const named = new Set((p.gaps ?? []).map((g) => g.trim()));
      return { run, gaps: named.size ? (await root.deliverables.gaps(run.task_id, "open")).filter((g) => named.has(g.text)) : [] };
    },
  }),
  method({
    name: "receipt.begin",
    side: "agent",
    summary:
      "Record an effect before it runs (durable on return): kind tool_call (default, counts a tool call), model_request (counts a request) or child_run (its tool is a child run of this run, from run.child: counts here nowhere, the child's own spend rolls up); the tool, the source it reads (source) and the provider it sends data to (send_to) must be in the run's grant; a requested run begins nothing; a key that completed returns its result with replayed: true; sent (model_request): the host's sha256 digests of the request, its question and each constraint as sent, shown by run.get's request_chain",
    params: L.receiptBegin,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => {
      if ((p.args === undefined) === (p.args_digest === undefined)) {
        throw invalidParams("Invalid params for receipt.begin: give exactly one of args (hashed here) or args_digest (sha256 hex)", { field: "args" });
      }
      if (p.sent && p.kind !== "model_request") {
        throw invalidParams("Invalid params for receipt.begin: sent (the digest of what a model request sent) goes with kind: model_request", { field: "sent" });
      }
      const digest = p.args_digest ?? sha256Hex(canonicalJson(p.args));
      return root.runs.begin({ run_id: p.run_id, epoch: p.epoch, tool: p.tool, kind: p.kind, idempotency_key: p.idempotency_key, args_digest: digest, source: p.source, send_to: p.send_to, sent: p.sent });
    },
  }),
  method({
    name: "receipt.settle",
    side: "agent",
    summary: "Settle an effect: completed (result_ref) or failed (error); an unknown one only with evidence",
    params: L.receiptSettle,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => {
      if (p.outcome === "completed" && !p.result_ref) {
        throw invalidParams("Invalid params for receipt.settle: a completed effect needs result_ref (where its result is)", { field: "result_ref" });
      }
      return { receipt: await root.runs.settle(p) };
    },
  }),
  method({
    name: "receipt.list",
    side: "agent",
    summary: "A run's receipts, optionally by status (unknown ones stay listed until reconciled)",
    params: L.receiptList,
    lane: "read",
    readOnly: true,
    handler: async ({ root }, p) => ({ receipts: await root.runs.list(p.run_id, p.status) }),
  }),
  method({
    name: "budget.charge",
    side: "agent",
    summary: "Record spending (requests, tokens, tool calls, cost), always, also past a limit; unknown: true counts it as unknown, never zero; returns charge_id and the budget",
    params: L.budgetCharge,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => {
      const { run_id, epoch, unknown, note, root: _r, ...amounts } = p;
      const { charge_id, ...budget } = await root.runs.charge(run_id, epoch, amounts, unknown ?? false, note ?? "");
      return { charge_id, budget };
    },
  }),
  method({
    name: "budget.reconcile",
    side: "agent",
    summary: "Record what an unknown charge really cost, with evidence (the original row is kept); an uncertain budget becomes known again",
    params: L.budgetReconcile,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => {
      const { run_id, epoch, charge_id, evidence, root: _r, ...amounts } = p;
      return { budget: await root.runs.reconcileCharge(run_id, epoch, charge_id, amounts, evidence) };
    },
  }),
  method({
    name: "budget.status",
    side: "agent",
    summary: "A run's limits, spend, unknown charges (ids), effective spend, remaining (null where uncertain), time left, whether new effects are allowed and the policy",
    params: L.runId,
    lane: "read",
    readOnly: true,
    handler: async ({ root }, p) => ({ budget: await root.runs.budgetOf(p.run_id) }),
  }),
];
