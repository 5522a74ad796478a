/**
 * The run ledger (seed 003) as the root exposes it, `root.runs`: one face over its parts, one
 * concept a file. A task's terms (terms.ts); runs, their recovery and continuation (runs.ts), as
 * stored (run_record.ts); what happens to a run once begun (lifecycle.ts); the host's grants
 * (grants.ts); effects and their receipts (receipts.ts); spending (budget.ts); the owner's
 * heartbeat (liveness.ts), child runs (children.ts) and what a running process does on time (waker.ts). The parts share one
 * database, blob store and clock, and every run write is fenced by the run's epoch (common.ts).
 * What a run delivers (adjustments, artifacts, context) is the other face, deliverables.ts.
 */
import type { Amounts, BudgetDimension } from "../core/run_rules/budget.ts";
import type { TaskState } from "../core/task.ts";
import type { LedgerDeps } from "./common.ts";
import { type BudgetStatus, Budgets } from "./budget.ts";
import { type GrantInput, Grants } from "./grants.ts";
import { Lifecycle, type RunCheckpoint, type RunCheckpointInput } from "./lifecycle.ts";
import { type ChildRunInput, Children } from "./children.ts";
import { type BeginInput, type OpenItem, type Receipt, Receipts, type SettleInput } from "./receipts.ts";
import type { Run } from "./run_record.ts";
import { type ClaimBy, type ContinueRunInput, Runs, type RunSummary, type StartRunInput } from "./runs.ts";
import { type HeartbeatAnswer, Liveness } from "./liveness.ts";
import { nextInstantOf, RunWaker } from "./waker.ts";
import { type TaskTerms, Terms } from "./terms.ts";

/** Runs, their ownership, grants, receipts and budgets: each method is its part's (see the files named above). */
export class RunLedger {
  readonly #terms: Terms;
  readonly #runs: Runs;
  readonly #lifecycle: Lifecycle;
  readonly #grants: Grants;
  readonly #receipts: Receipts;
  readonly #budgets: Budgets;
  readonly #liveness: Liveness;
  readonly #children: Children;
  readonly #d: LedgerDeps;
  #waker: RunWaker | null = null;

  constructor(d: LedgerDeps) {
    this.#d = d;
    this.#terms = new Terms(d);
    this.#budgets = new Budgets(d);
    this.#receipts = new Receipts(d, this.#budgets);
    this.#runs = new Runs(d, this.#terms, this.#budgets, this.#receipts);
    this.#lifecycle = new Lifecycle(d);
    this.#grants = new Grants(d);
    this.#liveness = new Liveness(d, this.#budgets);
    this.#children = new Children(d, this.#budgets);
  }

  /**
   * Starts acting on time for this root's runs (waker.ts): wakes, time budgets, stale owners; a
   * long-running process calls it once per open root. Returns how to stop it (before closing the database).
   */
  startWaker(): () => Promise<void> {
    const waker = (this.#waker ??= new RunWaker(this.#d));
    waker.start();
    return () => waker.stop();
  }

  /** The ledger's clock (what every row records and every view computes liveness from). */
  now(): Date {
    return this.#d.clock.now();
  }

  /** A run changed here: the timer fires by its next instant (a wake, a time limit, a TTL). */
  #due<T extends { run: Run } | Run>(out: T): T {
    this.#waker?.rearm(nextInstantOf("run" in out ? out.run : out));
    return out;
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
  async start(task: TaskState | null, input: StartRunInput): Promise<Run> {
    return this.#due(await this.#runs.start(task, input));
  }
  listRuns(taskId?: string): Promise<RunSummary[]> {
    return this.#runs.listRuns(taskId);
  }
  get(runId: string): ReturnType<Runs["get"]> {
    return this.#runs.get(runId);
  }
  async claim(runId: string, owner: string, by: ClaimBy): Promise<{ run: Run; newly_unknown: Receipt[]; checkpoint: RunCheckpoint | null }> {
    return this.#due(await this.#runs.claim(runId, owner, by));
  }

  // the owner's liveness (liveness.ts)
  heartbeat(runId: string, epoch: number): Promise<HeartbeatAnswer> {
    return this.#liveness.heartbeat(runId, epoch);
  }
  continueRun(parentId: string, input: ContinueRunInput): Promise<{ run: Run; open_items: OpenItem[] }> {
    return this.#runs.continueRun(parentId, input);
  }

  // child runs (children.ts)
  async child(parentId: string, epoch: number, input: ChildRunInput): Promise<Run> {
    return this.#due(await this.#children.start(parentId, epoch, input));
  }

  // a begun run's lifecycle (lifecycle.ts)
  async park(runId: string, epoch: number, waitingFor: string, forUser = false, wakeAt: string | null = null): Promise<Run> {
    return this.#due(await this.#lifecycle.park(runId, epoch, waitingFor, forUser, wakeAt));
  }
  async wake(runId: string, epoch: number | null, reason: string, by: { side: "host" | "agent"; name: string }, answer: { text: string; data?: Record<string, unknown> } | null): Promise<Run> {
    return this.#due(await this.#lifecycle.wake(runId, epoch, reason, by, answer));
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
  checkpoint(runId: string, epoch: number, c: RunCheckpointInput): Promise<RunCheckpoint> {
    return this.#lifecycle.checkpoint(runId, epoch, c);
  }

  // the host's decision on a requested run (grants.ts)
  async grant(runId: string, input: GrantInput): Promise<Run> {
    return this.#due(await this.#grants.grant(runId, input));
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
