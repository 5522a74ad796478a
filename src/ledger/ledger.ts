/**
 * The run ledger (seed 003) as the root exposes it, `root.runs`: one face over its parts, one
 * concept a file. A task's terms (terms.ts); runs, their recovery and continuation (runs.ts), as
 * stored (run_record.ts); what happens to a run once begun (lifecycle.ts); the host's grants
 * (grants.ts); effects and their receipts (receipts.ts); spending (budget.ts). The parts share one
 * database, blob store and clock, and every run write is fenced by the run's epoch (common.ts).
 * What a run delivers (adjustments, artifacts, context) is the other face, deliverables.ts.
 */
import type { Amounts, BudgetDimension } from "../core/run_rules/budget.ts";
import type { TaskState } from "../core/task.ts";
import type { LedgerDeps } from "./common.ts";
import { type BudgetStatus, Budgets } from "./budget.ts";
import { type GrantInput, Grants } from "./grants.ts";
import { Lifecycle, type RunCheckpoint } from "./lifecycle.ts";
import { type BeginInput, type OpenItem, type Receipt, Receipts, type SettleInput } from "./receipts.ts";
import type { Run } from "./run_record.ts";
import { type ContinueRunInput, Runs, type RunSummary, type StartRunInput } from "./runs.ts";
import { type TaskTerms, Terms } from "./terms.ts";

/** Runs, their ownership, grants, receipts and budgets: each method is its part's (see the files named above). */
export class RunLedger {
  readonly #terms: Terms;
  readonly #runs: Runs;
  readonly #lifecycle: Lifecycle;
  readonly #grants: Grants;
  readonly #receipts: Receipts;
  readonly #budgets: Budgets;

  constructor(d: LedgerDeps) {
    this.#terms = new Terms(d);
    this.#budgets = new Budgets(d);
    this.#receipts = new Receipts(d, this.#budgets);
    this.#runs = new Runs(d, this.#terms, this.#budgets, this.#receipts);
    this.#lifecycle = new Lifecycle(d);
    this.#grants = new Grants(d);
  }

  // a task's terms (terms.ts)
  intendTerms(question: string, terms: TaskTerms): Promise<string> {
    return this.#terms.intendTerms(question, terms);
  }
  dropIntent(intentId: string): Promise<void> {
    return this.#terms.dropIntent(intentId);
  }
  attachTerms(intentId: string, taskId: string, question: string, terms: TaskTerms): Promise<TaskTerms> {
    return this.#terms.attachTerms(intentId, taskId, question, terms);
  }
  setTerms(taskId: string, question: string, terms: TaskTerms): Promise<TaskTerms> {
    return this.#terms.setTerms(taskId, question, terms);
  }
  terms(taskId: string): Promise<TaskTerms | null> {
    return this.#terms.terms(taskId);
  }
  termsFor(taskId: string): Promise<TaskTerms | null> {
    return this.#terms.termsFor(taskId);
  }

  // runs (runs.ts)
  start(task: TaskState | null, input: StartRunInput): Promise<Run> {
    return this.#runs.start(task, input);
  }
  listRuns(taskId?: string): Promise<RunSummary[]> {
    return this.#runs.listRuns(taskId);
  }
  get(runId: string): ReturnType<Runs["get"]> {
    return this.#runs.get(runId);
  }
  claim(runId: string, owner: string): Promise<{ run: Run; newly_unknown: Receipt[]; checkpoint: RunCheckpoint | null }> {
    return this.#runs.claim(runId, owner);
  }
  continueRun(parentId: string, input: ContinueRunInput): Promise<{ run: Run; open_items: OpenItem[] }> {
    return this.#runs.continueRun(parentId, input);
  }

  // a begun run's lifecycle (lifecycle.ts)
  park(runId: string, epoch: number, waitingFor: string, forUser = false): Promise<Run> {
    return this.#lifecycle.park(runId, epoch, waitingFor, forUser);
  }
  wake(runId: string, epoch: number | null, reason: string, by: { side: "host" | "agent"; name: string }, answer: { text: string; data?: Record<string, unknown> } | null): Promise<Run> {
    return this.#lifecycle.wake(runId, epoch, reason, by, answer);
  }
  yieldRequest(runId: string, epoch: number, reason: string, requestId: string | null, adjustmentId: string | null): Promise<Run> {
    return this.#lifecycle.yieldRequest(runId, epoch, reason, requestId, adjustmentId);
  }
  cancel(runId: string, epoch: number | null, reason: string, by: string): Promise<Run> {
    return this.#lifecycle.cancel(runId, epoch, reason, by);
  }
  finish(runId: string, epoch: number, outcome: string, gaps: string[], status: "finished" | "failed"): Promise<Run> {
    return this.#lifecycle.finish(runId, epoch, outcome, gaps, status);
  }
  checkpoint(runId: string, epoch: number, settled: string[], open: string[], note: string): Promise<RunCheckpoint> {
    return this.#lifecycle.checkpoint(runId, epoch, settled, open, note);
  }

  // the host's decision on a requested run (grants.ts)
  grant(runId: string, input: GrantInput): Promise<Run> {
    return this.#grants.grant(runId, input);
  }
  refuse(runId: string, by: string, reason: string): Promise<Run> {
    return this.#grants.refuse(runId, by, reason);
  }

  // effects (receipts.ts)
  begin(input: BeginInput): Promise<{ receipt: Receipt; replayed: boolean }> {
    return this.#receipts.begin(input);
  }
  settle(input: SettleInput): Promise<Receipt> {
    return this.#receipts.settle(input);
  }
  list(runId: string, status?: string): Promise<Receipt[]> {
    return this.#receipts.list(runId, status);
  }

  // spending (budget.ts)
  charge(runId: string, epoch: number, amounts: Amounts, unknown: boolean | readonly BudgetDimension[], note: string): Promise<BudgetStatus & { charge_id: string }> {
    return this.#budgets.charge(runId, epoch, amounts, unknown, note);
  }
  reconcileCharge(runId: string, epoch: number, chargeId: string, amounts: Amounts, evidence: string): Promise<BudgetStatus> {
    return this.#budgets.reconcileCharge(runId, epoch, chargeId, amounts, evidence);
  }
  budgetOf(runId: string): Promise<BudgetStatus> {
    return this.#budgets.budgetOf(runId);
  }
}
