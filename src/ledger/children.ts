/**
 * Child runs (issue 28): a running run starts a child for a sub-agent's work, with a slice of its
 * own budget and a subset of its own grant. The parent's grant covers the child, so it runs at once
 * (no new request to the host); it can never hold more than the parent had left:
 *
 * | the child's…   | rule                                                                           |
 * |----------------|--------------------------------------------------------------------------------|
 * | tools, sources, send, scope | the parent's, or narrower (each omitted: the parent's); wider is refused |
 * | budget         | every dimension the parent limits needs a limit ≤ what the parent has left       |
 * | time           | its deadline is the parent's (deadline, or start + wall_seconds), or earlier     |
 * | unknown_ceiling| the parent's (an unknown charge counts the same in both)                         |
 * | identity       | its own run id, owner, epoch, receipts; `child_of` names the parent              |
 *
 * While the child is open its slice is reserved in the parent's budget (budget.ts); its spend rolls
 * up to the parent. A parent with open children cannot finish; cancelling it cancels them. One open
 * run per task still holds for top-level runs; a run has at most LIMITS.child_runs_per_run open
 * children, a task LIMITS.child_runs_per_task, LIMITS.child_depth levels deep.
 */
import type { Tx as Transaction } from "../db/database.ts";
import { BUDGET_DIMENSIONS, type BudgetLimits } from "../core/run_rules/budget.ts";
import { invalidParams } from "../core/rpc_error.ts";
import { LimitExceededError } from "../core/errors.ts";
import { LIMITS } from "../core/limits.ts";
import { addEvent, fence, json, type LedgerDeps, now, RUN_ID, seqOf } from "./common.ts";
import { type Budgets, noEffects } from "./budget.ts";
import { authorizationOf, type Authorization, type GrantRecord, readRun, requireStatus, type Run, runRow } from "./run_record.ts";
import { narrowed } from "./runs.ts";

export interface ChildRunInput {
  owner: string;
  owner_ttl_seconds: number | null;
  budget: BudgetLimits;
  narrow: Partial<Authorization>;
  requested_by: string;
  reason: string;
}

/** The parent's last instant for new effects (its deadline, or start + wall_seconds), null without one. */
function deadlineOf(limits: BudgetLimits, createdAt: string): number | null {
  const ends: number[] = [];
  if (limits.deadline !== undefined) ends.push(Date.parse(limits.deadline));
  if (limits.wall_seconds !== undefined) ends.push(Date.parse(createdAt) + limits.wall_seconds * 1000);
  return ends.length ? Math.min(...ends) : null;
}

/** How many runs up the child_of chain `seq` is (0 for a top-level run). */
async function depthOf(tx: Transaction, seq: number): Promise<number> {
  const rs = await tx.execute({
    sql: `WITH RECURSIVE up(seq, depth) AS (
            SELECT child_of, 1 FROM runs WHERE seq = ? AND child_of IS NOT NULL
            UNION ALL SELECT r.child_of, u.depth + 1 FROM runs r JOIN up u ON r.seq = u.seq WHERE r.child_of IS NOT NULL AND u.depth < 100
          ) SELECT COALESCE(MAX(depth), 0) AS d FROM up`,
    args: [seq],
  });
  return Number(rs.rows[0]!.d);
}

/** A child's budget: the slice asked for, checked against what the parent has left now. */
function slice(parentId: string, parentLimits: BudgetLimits, parentCreated: string, remaining: Partial<Record<string, number | null>>, want: BudgetLimits, at: string): BudgetLimits {
  if (want.unknown_ceiling !== undefined) {
    throw invalidParams(`Invalid params for run.child: a child run counts unknown charges at run ${parentId}'s unknown_ceiling; leave budget.unknown_ceiling out`, { field: "budget.unknown_ceiling" });
  }
  const out: BudgetLimits = { ...want };
  const missing = BUDGET_DIMENSIONS.filter((d) => parentLimits[d] !== undefined && want[d] === undefined);
  if (missing.length) {
    const left = missing.map((d) => `${d}: ${remaining[d] ?? "uncertain"} left`).join(", ");
    throw invalidParams(
      `Invalid params for run.child: run ${parentId} limits ${missing.join(", ")} (${left}), so its child needs a slice of each: give budget.${missing.join(", budget.")}, at most what is left`,
      { field: `budget.${missing[0]}`, missing: missing.map((d) => `budget.${d}`), remaining: Object.fromEntries(missing.map((d) => [d, remaining[d] ?? null])) },
    );
  }
  for (const d of BUDGET_DIMENSIONS) {
    if (parentLimits[d] === undefined) continue;
    const left = remaining[d];
    if (left === null || left === undefined || want[d]! > left) {
      throw new LimitExceededError(`budget.${d}`, left ?? 0, want[d]!, d, `give the child at most what run ${parentId} has left (budget.status), or less`);
    }
  }
  if (parentLimits.unknown_ceiling) out.unknown_ceiling = { ...parentLimits.unknown_ceiling };
  const end = deadlineOf(parentLimits, parentCreated);
  const asked = deadlineOf(want, at);
  if (end !== null && (asked === null || asked > end)) {
    // never past the parent's time: the parent's end becomes the child's deadline
    out.deadline = new Date(asked === null ? end : Math.min(asked, end)).toISOString();
    delete out.wall_seconds;
  }
  return out;
}

/** Child runs of the ledger's runs. */
export class Children {
  constructor(private readonly d: LedgerDeps, private readonly budgets: Budgets) {}

  /** A child of a running run, fenced by the parent's epoch: granted at once within the parent's grant and budget. */
  async start(parentId: string, epoch: number, input: ChildRunInput): Promise<Run> {
    const parentSeq = seqOf(RUN_ID, parentId, "run");
    const at = now(this.d);
    const seq = await this.d.db.write(async (tx) => {
      await fence(tx, parentSeq, epoch, at);
      const parent = await runRow(this.d, tx, parentSeq);
      requireStatus(parent, ["running"], "start a child run");
      const depth = await depthOf(tx, parentSeq);
      if (depth + 1 > LIMITS.child_depth) throw new LimitExceededError("child run depth", LIMITS.child_depth, depth + 1, "levels", "start the work from a run higher up");
      const open = await tx.execute({ sql: "SELECT COUNT(*) AS n FROM runs WHERE child_of = ? AND status IN ('running', 'parked')", args: [parentSeq] });
      if (Number(open.rows[0]!.n) >= LIMITS.child_runs_per_run) {
        throw new LimitExceededError("open child runs", LIMITS.child_runs_per_run, Number(open.rows[0]!.n) + 1, "runs", "finish or cancel a child first");
      }
      // and per task, so levels of children cannot multiply into millions of open runs
      const inTask = await tx.execute({ sql: "SELECT COUNT(*) AS n FROM runs WHERE task_id = ? AND child_of IS NOT NULL AND status IN ('running', 'parked')", args: [String(parent.task_id)] });
      if (Number(inTask.rows[0]!.n) >= LIMITS.child_runs_per_task) {
        throw new LimitExceededError("open child runs in the task", LIMITS.child_runs_per_task, Number(inTask.rows[0]!.n) + 1, "runs", "finish or cancel child runs first");
      }
      const parentLimits = json<BudgetLimits>(parent.budget_limits, {});
      const status = await this.budgets.status(parentSeq, parentLimits, tx, String(parent.created_at));
      if (!status.effects_allowed) throw noEffects(parentId, status);
      const budget = slice(parentId, parentLimits, String(parent.created_at), status.remaining, input.budget, at);
      const authorization = narrowed(authorizationOf(parent.authorization), input.narrow, parentId, "a child run");
      const record: GrantRecord = {
        state: "granted",
        requested_by: input.requested_by,
        requested_at: at,
        request: { authorization, budget: input.budget },
        decided_by: `run:${parentId}`,
        decided_at: at,
        reason: input.reason,
        standing: null,
      };
      const rs = await tx.execute({
        sql: `INSERT INTO runs(task_id, child_of, status, owner, epoch, authorization, budget_limits, grant_state, grant_record, created_at, updated_at, owner_ttl_seconds, beat_at)
              VALUES (?, ?, 'running', ?, 1, ?, ?, 'granted', ?, ?, ?, ?, ?) RETURNING seq`,
        args: [String(parent.task_id), parentSeq, input.owner, JSON.stringify(authorization), JSON.stringify(budget), JSON.stringify(record), at, at, input.owner_ttl_seconds, at],
      });
      const seq = Number(rs.rows[0]!.seq);
      await addEvent(tx, seq, 1, "started", { owner: input.owner, requested_by: input.requested_by, child_of: parentId }, at);
      await addEvent(tx, parentSeq, epoch, "child_started", { run_id: RUN_ID.format(seq), owner: input.owner, budget, reason: input.reason }, at);
      return seq;
    });
    return await readRun(this.d, seq);
  }

}
