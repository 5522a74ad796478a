/**
 * A user task's own terms (issue 23): the constraints, desired outcome and bounds the host sets at
 * task.start, kept verbatim with the task's question (`ledger_tasks`) and binding every run of the
 * task. They are written in two steps around the task's creation (intendTerms, attachTerms); a
 * crash between the two is completed, or fails closed, when a run is decided (termsFor).
 */
import type { Database, Tx as Transaction } from "../db/database.ts";
import type { BudgetLimits } from "../core/run_rules/budget.ts";
import { UnauthorizedError } from "../core/errors.ts";
import { describeWider, type TaskBounds, widerThanBounds } from "../core/run_rules/grant.ts";
import { json, type LedgerDeps, now } from "./common.ts";
import type { Authorization } from "./run_record.ts";

/** The user task's own terms, set by the host at task.start: kept verbatim, inherited by its runs. */
export interface TaskTerms {
  constraints: string[];
  desired_outcome: string | null;
  /** What no run of the task may exceed (null: no bounds given). */
  bounds: TaskBounds | null;
  set_by: string;
}

/** Refuses a run whose authorization or budget goes beyond its task's bounds, naming what is wider. */
export function requireWithinTerms(terms: TaskTerms | null, taskId: string, auth: Authorization, budget: BudgetLimits): void {
  if (!terms?.bounds) return;
  const wider = widerThanBounds(terms.bounds, auth, budget);
  if (!wider.length) return;
  throw new UnauthorizedError(`Refused: task ${taskId}'s terms (set by the host) bound its runs, and this run would go beyond them: ${describeWider(wider)}; ask within them`, {
    reason: "wider_than_task_terms",
    task_id: taskId,
    wider,
    bounds: terms.bounds,
  });
}

/** The key prefix of a terms intent in `ledger_tasks` (RunLedger.intendTerms): never a task id. */
export const TERMS_INTENT = "terms-intent:";

/** A task whose terms were meant and never written begins no run (fail closed). */
export function termsMissing(taskId: string): UnauthorizedError {
  return new UnauthorizedError(
    `Refused: task ${taskId} was started with terms that were never written to it (the process stopped between the two writes) and it cannot be told which task they were for, ` +
      `so its runs are refused rather than run without bounds; start the task again with its terms (task.start, host side)`,
    { reason: "task_terms_missing", task_id: taskId },
  );
}

/** The terms of the ledger's tasks: recorded, read, and completed after a crash. */
export class Terms {
  constructor(private readonly d: LedgerDeps) {}

  /**
   * The first of task.start's two writes when the host gives terms: the terms, kept verbatim as an
   * intent (a `ledger_tasks` row keyed `terms-intent:…`, not a task), before the task exists. The
   * task is created by the contract in a transaction of its own; `attachTerms` then moves the terms
   * onto it and drops the intent in one commit. A crash between the two leaves a task without terms
   * and the intent beside it: `termsFor` completes the write (or, when it cannot tell which task the
   * intent was for, refuses the task's runs), so a task started with bounds never runs unbounded.
   */
  async intendTerms(question: string, terms: TaskTerms): Promise<string> {
    const id = `${TERMS_INTENT}${crypto.randomUUID()}`;
    await this.d.db.write(async (tx) => {
      await tx.execute({
        sql: "INSERT INTO ledger_tasks(task_id, question, constraints, terms, created_at) VALUES (?, ?, ?, ?, ?)",
        args: [id, question, JSON.stringify(terms.constraints), JSON.stringify(terms), now(this.d)],
      });
    });
    return id;
  }

  /** The task was never created (task.start failed): its intent goes. */
  async dropIntent(intentId: string): Promise<void> {
    await this.d.db.write(async (tx) => {
      await tx.execute({ sql: "DELETE FROM ledger_tasks WHERE task_id = ?", args: [intentId] });
    });
  }

  /** The second write: the task's terms recorded with its question and the intent dropped, one commit; returns them. */
  async attachTerms(intentId: string, taskId: string, question: string, terms: TaskTerms): Promise<TaskTerms> {
    this.d.crash?.("task_terms.before_commit");
    await this.d.db.write(async (tx) => {
      await this.#writeTerms(tx, taskId, question, terms);
      await tx.execute({ sql: "DELETE FROM ledger_tasks WHERE task_id = ?", args: [intentId] });
    });
    return terms;
  }

  async #writeTerms(tx: Transaction, taskId: string, question: string, terms: TaskTerms): Promise<void> {
    await tx.execute({
      sql: `INSERT INTO ledger_tasks(task_id, question, constraints, terms, created_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(task_id) DO UPDATE SET terms = excluded.terms, constraints = excluded.constraints`,
      args: [taskId, question, JSON.stringify(terms.constraints), JSON.stringify(terms), now(this.d)],
    });
  }

  /** Records a task's own terms (host-set) with its question, verbatim; returns them. */
  async setTerms(taskId: string, question: string, terms: TaskTerms): Promise<TaskTerms> {
    await this.d.db.write((tx) => this.#writeTerms(tx, taskId, question, terms));
    return terms;
  }

  /** A task's own terms, or null when the host gave none. */
  async terms(taskId: string): Promise<TaskTerms | null> {
    const rs = await this.d.db.execute({ sql: "SELECT terms FROM ledger_tasks WHERE task_id = ?", args: [taskId] });
    return json<TaskTerms | null>(rs.rows[0]?.terms, null);
  }

  /**
   * The terms intents that may be this task's: same question, written before the task was created,
   * while the task itself has no terms (empty when it has them, or when none was ever intended).
   */
  async intentsFor(exec: Transaction | Database, taskId: string): Promise<{ id: string; at: string; question: string; terms: TaskTerms }[]> {
    const rs = await exec.execute({
      sql: `SELECT i.task_id AS id, i.created_at AS at, i.question, i.terms FROM tasks t
            JOIN ledger_tasks i ON i.task_id LIKE '${TERMS_INTENT}%' AND i.question = json_extract(t.state, '$.description') AND i.created_at <= json_extract(t.state, '$.created_at')
            WHERE t.task_id = ? AND NOT EXISTS (SELECT 1 FROM ledger_tasks l WHERE l.task_id = t.task_id AND l.terms IS NOT NULL)
            ORDER BY i.created_at`,
      args: [taskId],
    });
    return rs.rows.map((r) => ({ id: String(r.id), at: String(r.at), question: String(r.question), terms: json<TaskTerms>(r.terms, null as unknown as TaskTerms) }));
  }

  /**
   * A task's terms for deciding a run, failing closed: when task.start's terms were written as an
   * intent and the process died before they reached the task, they are attached now (the host's own
   * write, completed) if exactly this task can be the one they were for; if more than one task or
   * intent fits, the task's runs are refused (`task_terms_missing`) rather than run unbounded.
   */
  async termsFor(taskId: string): Promise<TaskTerms | null> {
    const terms = await this.terms(taskId);
    if (terms) return terms;
    const intents = await this.intentsFor(this.d.db, taskId);
    if (!intents.length) return null;
    return this.d.db.write(async (tx) => {
      const found = await this.intentsFor(tx, taskId);
      if (!found.length) return json<TaskTerms | null>((await tx.execute({ sql: "SELECT terms FROM ledger_tasks WHERE task_id = ?", args: [taskId] })).rows[0]?.terms, null);
      const intent = found[0]!;
      // the tasks this intent may have been for: its question, created after it, still without terms
      const fits = await tx.execute({
        sql: `SELECT t.task_id FROM tasks t WHERE json_extract(t.state, '$.description') = ? AND json_extract(t.state, '$.created_at') >= ?
              AND NOT EXISTS (SELECT 1 FROM ledger_tasks l WHERE l.task_id = t.task_id AND l.terms IS NOT NULL)`,
        args: [intent.question, intent.at],
      });
      if (found.length !== 1 || fits.rows.length !== 1 || String(fits.rows[0]!.task_id) !== taskId) throw termsMissing(taskId);
      await this.#writeTerms(tx, taskId, intent.question, intent.terms);
      await tx.execute({ sql: "DELETE FROM ledger_tasks WHERE task_id = ?", args: [intent.id] });
      return intent.terms;
    });
  }
}
