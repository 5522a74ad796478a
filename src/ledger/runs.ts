/**
 * Runs and their ownership (seed 003, sections 1, 5, 6, 8): a run belongs to a task, has its own
 * id, an authorization snapshot, budget limits, a status, an owner and a fencing epoch. Four ways
 * back in: observe (`get`, changes nothing), same-run recovery (`claim`: new epoch, same id,
 * authorization, budget and receipts; begun receipts become unknown), explicit continuation
 * (`continueRun`: a new run linked to its parent, inheriting the task's constraints and the
 * recorded permissions, with its own budget, carrying unresolved unknowns as open items), and a
 * new task (never inherits anything). What a run is as stored is run_record.ts; what it does after
 * it starts is lifecycle.ts.
 */
import type { Tx as Transaction } from "../db/database.ts";
import type { BudgetLimits } from "../core/run_rules/budget.ts";
import { ConflictError, NoActiveTaskError, UnauthorizedError } from "../core/errors.ts";
import { widerItems } from "../core/run_rules/grant.ts";
import { mayClaim } from "../core/run_rules/liveness.ts";
import { RECEIPT_KINDS, type ReceiptKind } from "../core/run_rules/receipts.ts";
import type { TaskState } from "../core/task.ts";
import { addEvent, ANCESTRY, json, type LedgerDeps, now, RUN_ID, seqOf } from "./common.ts";
import { requestChain } from "./request_chain.ts";
import { latestCheckpoint, type RunCheckpoint } from "./lifecycle.ts";
import type { BudgetStatus, Budgets } from "./budget.ts";
import { type OpenItem, type Receipt, type Receipts, toReceipt } from "./receipts.ts";
import { type Authorization, authorizationOf, type GrantRecord, readRun, requireStatus, type Run, runRow, shownStatus, toRun } from "./run_record.ts";
import { type TaskTerms, type Terms, termsMissing } from "./terms.ts";

export type RunSummary = Run & { budget: BudgetStatus; open_items: number; checkpoint: RunCheckpoint | null };

/** A continuation's (or child's) authorization: the parent's, narrowed where asked; anything wider is refused. */
export function narrowed(parent: Authorization, narrow: Partial<Authorization>, parentId: string, what = "a continuation"): Authorization {
  const out: Authorization = { ...parent };
  for (const k of ["tools", "sources", "send", "scope"] as const) {
    const want = narrow[k];
    if (want === undefined) continue;
    const wider = widerItems(parent[k], want);
    if (wider.length) {
      throw new UnauthorizedError(
        `Refused: ${what} may narrow run ${parentId}'s ${k}, never widen them: ${wider.map((x) => JSON.stringify(x)).join(", ")} ` +
          `${wider.length === 1 ? "is" : "are"} not in ${parent[k].join(", ") || "nothing"}; start a new task for new permissions`,
        { field: k, wider, allowed: parent[k] },
      );
    }
    out[k] = [...want];
  }
  return out;
}

/** The host's grant made with the request: by the host calling itself, or by a standing allowance. */
export interface GrantNow {
  by: string;
  reason: string;
  standing: string | null;
  /** The budget granted (a standing allowance may narrow the one asked for). */
  budget: BudgetLimits;
}

export interface StartRunInput {
  owner: string;
  /** Seconds the owner may go without a beat before the run shows stale_owner (null: never stale). */
  owner_ttl_seconds: number | null;
  authorization: Authorization;
  budget: BudgetLimits;
  constraints: string[];
  /** Who asked (`agent:http`, `host:stdio`). */
  requested_by: string;
  /** Granted at once, or null: the run waits as a request until the host grants or refuses it. */
  grant: GrantNow | null;
}

/** A continuation: its task, owner and own budget; the parent's lists it narrows; who asked, and the grant made with it. */
export interface ContinueRunInput {
  task_id: string;
  owner: string;
  budget: BudgetLimits;
  narrow: Partial<Authorization>;
  requested_by: string;
  grant: GrantNow | null;
  /** Called with the continuation's authorization before it is written (throws to refuse). */
  check?: (authorization: Authorization) => void;
}

/** The grant columns of a new run: a request (stored parked), or a run granted at once. */
function grantColumns(input: { authorization: Authorization; budget: BudgetLimits; requested_by: string; grant: GrantNow | null }, at: string) {
  const record: GrantRecord = {
    state: input.grant ? "granted" : "requested",
    requested_by: input.requested_by,
    requested_at: at,
    request: { authorization: input.authorization, budget: input.budget },
    decided_by: input.grant?.by ?? null,
    decided_at: input.grant ? at : null,
    reason: input.grant?.reason ?? null,
    standing: input.grant?.standing ?? null,
  };
  return {
    status: input.grant ? "running" : "parked",
    grant_state: record.state,
    record: JSON.stringify(record),
    budget: JSON.stringify(input.grant ? input.grant.budget : input.budget),
  };
}

/** Who claims a run: the caller's side and name, the standbys the root's settings name, and the new owner's TTL. */
export interface ClaimBy {
  side: "host" | "agent";
  name: string;
  standbys: readonly string[];
  /** The new owner's time to live in seconds (null: untracked; undefined: the run's own is kept). */
  ttl?: number | null;
}

/** Why a stale run is not the caller's to claim: only the host or a named standby takes it over. */
function staleClaimRefused(run: Run, owner: string): UnauthorizedError {
  return new UnauthorizedError(
    `Refused: run ${run.run_id} is stale_owner since ${run.stale_since} (owner ${run.owner} missed its ${run.owner_ttl_seconds} s time to live); ` +
      `only the host, or a standby the root's .longrun/settings.json names in standby_owners, may claim it, and ${JSON.stringify(owner)} is not one`,
    { reason: "stale_owner", run_id: run.run_id, owner: run.owner, stale_since: run.stale_since, claimant: owner, setting: "standby_owners" },
  );
}

/** The ledger's runs: started, continued, claimed and observed. */
export class Runs {
  constructor(private readonly d: LedgerDeps, private readonly terms: Terms, private readonly budgets: Budgets, private readonly receipts: Receipts) {}

  /** A run for the active task, epoch 1. The task's question is recorded verbatim with its constraints. */
  async start(task: TaskState | null, input: StartRunInput): Promise<Run> {
    if (!task || task.status === "completed" || task.status === "failed") {
      throw new NoActiveTaskError("No active task in this root: call task.start before run.start (a run belongs to a task)");
    }
    const at = now(this.d);
    const seq = await this.d.db.write(async (tx) => {
      await this.#requireRunnable(tx, task.task_id, "run.start");
      await tx.execute({
        sql: "INSERT INTO ledger_tasks(task_id, question, constraints, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(task_id) DO NOTHING",
        args: [task.task_id, task.description, JSON.stringify(input.constraints), at],
      });
      if (input.constraints.length) {
        // Later constraints are added, never replacing the ones recorded first.
        const cur = await tx.execute({ sql: "SELECT constraints FROM ledger_tasks WHERE task_id = ?", args: [task.task_id] });
        const merged = [...new Set([...json<string[]>(cur.rows[0]!.constraints, []), ...input.constraints])];
        await tx.execute({ sql: "UPDATE ledger_tasks SET constraints = ? WHERE task_id = ?", args: [JSON.stringify(merged), task.task_id] });
      }
      const g = grantColumns(input, at);
      const rs = await tx.execute({
        sql: `INSERT INTO runs(task_id, status, owner, epoch, authorization, budget_limits, grant_state, grant_record, created_at, updated_at, owner_ttl_seconds, beat_at)
              VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
        args: [task.task_id, g.status, input.owner, JSON.stringify(input.authorization), g.budget, g.grant_state, g.record, at, at, input.owner_ttl_seconds, at],
      });
      const seq = Number(rs.rows[0]!.seq);
      await addEvent(tx, seq, 1, input.grant ? "started" : "requested", { owner: input.owner, requested_by: input.requested_by }, at);
      if (input.grant) await addEvent(tx, seq, 1, "granted", { by: input.grant.by, reason: input.grant.reason, standing: input.grant.standing }, at);
      return seq;
    });
    return await readRun(this.d, seq);
  }

  /**
   * In the transaction that creates a run: its task must be open (read from the task table, so a
   * task.finish committing at the same moment cannot slip past), and the task must have no other
   * run running or parked. A missing process is no licence to start another research.
   */
  async #requireRunnable(tx: Transaction, taskId: string, what: string): Promise<void> {
    const task = await tx.execute({ sql: "SELECT status FROM tasks WHERE task_id = ?", args: [taskId] });
    const status = task.rows[0] ? String(task.rows[0].status) : null;
    if (status === null || status === "completed" || status === "failed") {
      throw new NoActiveTaskError(`${what}: task ${taskId} is ${status ?? "gone"}; a run belongs to an open task (task.start begins one)`, { task_id: taskId, status });
    }
    // terms task.start meant to write and never did: no run until they are on the task (termsFor)
    if ((await this.terms.intentsFor(tx, taskId)).length) throw termsMissing(taskId);
    // top-level runs only: a child run (children.ts) works inside its parent's grant and budget
    const active = await tx.execute({ sql: "SELECT seq, status, owner, epoch FROM runs WHERE task_id = ? AND status IN ('running', 'parked') AND child_of IS NULL ORDER BY seq LIMIT 1", args: [taskId] });
    const r = active.rows[0];
    if (r) {
      const id = RUN_ID.format(Number(r.seq));
      throw new ConflictError(
        `Refused: ${what}: task ${taskId} already has run ${id} (${String(r.status)}, owner ${String(r.owner)}, epoch ${Number(r.epoch)}); ` +
          `a missing process is no licence to start another: observe it with run.get, take it over with run.claim, or end it (run.finish, run.cancel) first`,
        { reason: "run_active", task_id: taskId, run_id: id, status: String(r.status), epoch: Number(r.epoch) },
      );
    }
  }

  /** The runs of a task (or of the root), newest first, each with its budget and open items: what a reopened page needs. */
  async listRuns(taskId?: string): Promise<RunSummary[]> {
    const rs = await this.d.db.execute({
      // top-level runs first (their budgets hold their children's): many children never push a parent off the list
      sql: `SELECT * FROM runs ${taskId ? "WHERE task_id = ?" : ""} ORDER BY child_of IS NOT NULL, seq DESC LIMIT 500`,
      args: taskId ? [taskId] : [],
    });
    const out: RunSummary[] = [];
    for (const row of rs.rows) {
      const run = toRun(row, this.d.clock.now());
      const seq = Number(row.seq);
      out.push({ ...run, budget: await this.budgets.status(seq, run.budget_limits, null, run.created_at), open_items: (await this.receipts.openItems(seq)).length, checkpoint: await latestCheckpoint(this.d, seq) });
    }
    return out;
  }

  /** Observe: everything about a run, changing nothing. */
  async get(runId: string) {
    const seq = seqOf(RUN_ID, runId, "run");
    const run = await readRun(this.d, seq);
    const task = await this.d.db.execute({ sql: "SELECT question, constraints, terms FROM ledger_tasks WHERE task_id = ?", args: [run.task_id] });
    const terms = json<TaskTerms | null>(task.rows[0]?.terms, null);
    const receipts = (await this.d.db.execute({ sql: "SELECT * FROM receipts WHERE run_seq = ? ORDER BY seq", args: [seq] })).rows.map(toReceipt);
    const counts: Record<string, number> = { begun: 0, completed: 0, failed: 0, unknown: 0 };
    const byKind = Object.fromEntries(RECEIPT_KINDS.map((k) => [k, 0])) as Record<ReceiptKind, number>;
    for (const r of receipts) {
      counts[r.status] = (counts[r.status] ?? 0) + 1;
      byKind[r.kind] = (byKind[r.kind] ?? 0) + 1;
    }
    // its child runs: who, how far, what they spent and what their receipts say (rolled up in budget)
    const children = [];
    const spend = await this.budgets.childStatuses(seq);
    const childCounts = await this.d.db.execute({
      sql: "SELECT run_seq, status, COUNT(*) AS n FROM receipts WHERE run_seq IN (SELECT seq FROM runs WHERE child_of = ?) GROUP BY run_seq, status",
      args: [seq],
    });
    const countsOf = new Map<number, Record<string, number>>();
    for (const r of childCounts.rows) countsOf.set(Number(r.run_seq), { ...countsOf.get(Number(r.run_seq)), [String(r.status)]: Number(r.n) });
    for (const c of (await this.d.db.execute({ sql: "SELECT * FROM runs WHERE child_of = ? ORDER BY seq", args: [seq] })).rows) {
      const child = toRun(c, this.d.clock.now());
      const counts = countsOf.get(Number(c.seq)) ?? {};
      const s = spend.get(Number(c.seq))!;
      children.push({
        run_id: child.run_id,
        status: child.status,
        owner: child.owner,
        stale_owner: child.stale_owner,
        budget_limits: child.budget_limits,
        spent: s.spent,
        uncertain: s.uncertain,
        receipt_counts: Object.fromEntries(["begun", "completed", "failed", "unknown"].map((k) => [k, counts[k] ?? 0])),
      });
    }
    const events = (await this.d.db.execute({ sql: "SELECT * FROM run_events WHERE run_seq = ? ORDER BY seq DESC LIMIT 50", args: [seq] })).rows
      .map((e) => ({ kind: String(e.kind), epoch: Number(e.epoch), detail: json<Record<string, unknown>>(e.detail, {}), at: String(e.at) }))
      .reverse();
    return {
      run,
      question: task.rows[0] ? String(task.rows[0].question) : null,
      constraints: task.rows[0] ? json<string[]>(task.rows[0].constraints, []) : [],
      desired_outcome: terms?.desired_outcome ?? null,
      bounds: terms?.bounds ?? null,
      budget: await this.budgets.status(seq, run.budget_limits, null, run.created_at),
      receipt_counts: counts,
      receipts_by_kind: byKind,
      unknown_receipts: receipts.filter((r) => r.status === "unknown"),
      open_items: await this.receipts.openItems(seq),
      checkpoint: await latestCheckpoint(this.d, seq),
      children,
      // the run's model requests against the task's question and constraints (request_chain.ts)
      request_chain: requestChain(task.rows[0] ? String(task.rows[0].question) : null, task.rows[0] ? json<string[]>(task.rows[0].constraints, []) : [], receipts),
      events,
    };
  }

  /**
   * Same-run recovery: a new owner at epoch + 1; what was begun and never settled becomes unknown.
   * A run whose owner is live (or tracks no liveness) anyone may claim, as always; a stale one only
   * the host or a standby `by.standbys` names (mayClaim). The claim is the new owner's first beat;
   * `ttl` (undefined: the run's TTL is kept) sets its time to live.
   */
  async claim(runId: string, owner: string, by: ClaimBy): Promise<{ run: Run; newly_unknown: Receipt[]; checkpoint: RunCheckpoint | null }> {
    const seq = seqOf(RUN_ID, runId, "run");
    const at = now(this.d);
    const unknown = await this.d.db.write(async (tx) => {
      const run = await runRow(this.d, tx, seq);
      requireStatus(run, ["running", "parked"], "be claimed");
      const shown = toRun(run, this.d.clock.now());
      if (!mayClaim(shown.stale_owner, by.side, owner, by.standbys)) throw staleClaimRefused(shown, owner);
      const epoch = Number(run.epoch) + 1;
      const ttl = by.ttl === undefined ? shown.owner_ttl_seconds : by.ttl;
      await tx.execute({
        sql: "UPDATE runs SET epoch = ?, owner = ?, owner_ttl_seconds = ?, beat_at = ?, updated_at = ? WHERE seq = ? AND epoch = ?",
        args: [epoch, owner, ttl, at, at, seq, Number(run.epoch)],
      });
      const marked = await tx.execute({
        sql: "UPDATE receipts SET status = 'unknown', unknown_at = ? WHERE run_seq = ? AND status = 'begun' RETURNING *",
        args: [at, seq],
      });
      await addEvent(tx, seq, epoch, "claimed", {
        owner,
        previous_owner: String(run.owner),
        previous_epoch: Number(run.epoch),
        receipts_now_unknown: marked.rows.length,
        stale_owner: shown.stale_owner,
        stale_since: shown.stale_since,
        by: by.name,
      }, at);
      return marked.rows.map(toReceipt);
    });
    return { run: await readRun(this.d, seq), newly_unknown: unknown, checkpoint: await latestCheckpoint(this.d, seq) };
  }

  /**
   * Explicit continuation: a new run of an open task (the caller's current one), linked to its
   * parent. It may narrow the parent's tools, sources and scope, never widen them; its allowance is
   * given explicitly (never the parent's by default); the unknown effects of the parent, of its child
   * runs and of the parent's own open items travel as open items, never as results.
   */
  async continueRun(
    parentId: string,
    input: ContinueRunInput,
  ): Promise<{ run: Run; open_items: OpenItem[] }> {
    const parentSeq = seqOf(RUN_ID, parentId, "run");
    const at = now(this.d);
    const seq = await this.d.db.write(async (tx) => {
      const parent = await runRow(this.d, tx, parentSeq);
      const parentStatus = shownStatus(parent);
      if (parentStatus === "running" || parentStatus === "parked" || parentStatus === "requested") {
        throw new ConflictError(`Run ${parentId} is still ${parentStatus}; finish or cancel it before continuing it in a new run (or claim it to recover the same run)`, {
          reason: "run_status",
          run_id: parentId,
          status: parentStatus,
        });
      }
      if (parentStatus === "refused") {
        throw new ConflictError(`Run ${parentId} was refused by the host: it was never granted, so there is nothing to continue; ask for a new run with run.start`, {
          reason: "run_status",
          run_id: parentId,
          status: parentStatus,
        });
      }
      await this.#requireRunnable(tx, input.task_id, "run.continue");
      const authorization = narrowed(authorizationOf(parent.authorization), input.narrow, parentId);
      input.check?.(authorization);
      const g = grantColumns({ ...input, authorization }, at);
      const rs = await tx.execute({
        sql: `INSERT INTO runs(task_id, parent_seq, status, owner, epoch, authorization, budget_limits, grant_state, grant_record, created_at, updated_at)
              VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?) RETURNING seq`,
        args: [input.task_id, parentSeq, g.status, input.owner, JSON.stringify(authorization), g.budget, g.grant_state, g.record, at, at],
      });
      const seq = Number(rs.rows[0]!.seq);
      if (input.task_id !== String(parent.task_id)) {
        await tx.execute({
          sql: "INSERT INTO ledger_tasks(task_id, question, constraints, created_at) SELECT ?, question, constraints, ? FROM ledger_tasks WHERE task_id = ? ON CONFLICT(task_id) DO NOTHING",
          args: [input.task_id, at, String(parent.task_id)],
        });
      }
      await tx.execute({
        // the unknown effects of the chain so far (the parent, its children, what it carried…)
        sql: `${ANCESTRY}
              INSERT INTO open_items(run_seq, receipt_seq, carried_at)
              SELECT ?, r.seq, ? FROM receipts r
              WHERE r.status = 'unknown' AND (r.run_seq IN (SELECT seq FROM ancestry) OR r.seq IN (SELECT receipt_seq FROM open_items WHERE run_seq = ?))`,
        args: [seq, seq, at, parentSeq],
      });
      await addEvent(tx, seq, 1, "continued", { parent_run_id: parentId, owner: input.owner, task_id: input.task_id, requested_by: input.requested_by }, at);
      if (input.grant) await addEvent(tx, seq, 1, "granted", { by: input.grant.by, reason: input.grant.reason, standing: input.grant.standing }, at);
      await addEvent(tx, parentSeq, Number(parent.epoch), "continued_by", { run_id: RUN_ID.format(seq) }, at);
      return seq;
    });
    return { run: await readRun(this.d, seq), open_items: await this.receipts.openItems(seq) };
  }
}
