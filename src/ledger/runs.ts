/**
 * Runs and their ownership (seed 003, sections 1, 5, 6, 8): a run belongs to a task, has its own
 * id, an authorization snapshot, budget limits, a status, an owner and a fencing epoch. Four ways
 * back in: observe (`get`, changes nothing), same-run recovery (`claim`: new epoch, same id,
 * authorization, budget and receipts; begun receipts become unknown), explicit continuation
 * (`continueRun`: a new run linked to its parent, inheriting the task's constraints and the
 * recorded permissions, with its own budget, carrying unresolved unknowns as open items), and a
 * new task (never inherits anything).
 */
import type { Database, Tx as Transaction } from "../db/database.ts";
import { type Amounts, type BudgetDimension, budgetStatus, unknownDimensions, type BudgetLimits, type BudgetStatus as PureBudgetStatus, type Charge } from "../core/run_rules/budget.ts";
import { ConflictError, NoActiveTaskError, NotFoundError, UnauthorizedError } from "../core/errors.ts";
import { describeWider, type Permissions, type TaskBounds, widerItems, widerThanBounds } from "../core/run_rules/grant.ts";
import { RECEIPT_KINDS, type ReceiptKind } from "../core/run_rules/receipts.ts";
import type { TaskState } from "../core/task.ts";
import { addEvent, CHARGE_ID, fence, json, type LedgerDeps, RECEIPT_ID, type Row, RUN_ID, seqOf, str } from "./common.ts";

/**
 * A charge of unknown amount in an earlier run of the chain, not reconciled yet: an open item of
 * every continuation after it (reconciled on the run that recorded it, with budget.reconcile).
 */
export interface OpenCharge {
  charge_id: string;
  run_id: string;
  /** The dimensions it left unknown. */
  unknown: BudgetDimension[];
  amounts: Amounts;
  note: string;
  at: string;
}

/**
 * A run's budget status, with the ids of its own charges still of unknown amount (for
 * budget.reconcile) and the unknown charges of earlier runs of its chain that bear on it.
 */
export type BudgetStatus = PureBudgetStatus & { unknown_charge_ids: string[]; inherited_unknown: OpenCharge[] };

/** The earlier runs of a run's chain (parent, its parent…), as a recursive CTE named `ancestry(seq, depth)`. */
export const ANCESTRY = `WITH RECURSIVE ancestry(seq, depth) AS (
    SELECT parent_seq, 1 FROM runs WHERE seq = ? AND parent_seq IS NOT NULL
    UNION ALL SELECT r.parent_seq, a.depth + 1 FROM runs r JOIN ancestry a ON r.seq = a.seq WHERE r.parent_seq IS NOT NULL AND a.depth < 1000
  )`;

function unknownOf(r: Row): boolean | BudgetDimension[] {
  if (Number(r.unknown) !== 1) return false;
  return r.unknown_dims === null || r.unknown_dims === undefined ? true : json<BudgetDimension[]>(r.unknown_dims, []);
}

/** What a run may use: tools, sources, the providers data may be sent to (`send`), and its scope. */
export type Authorization = Permissions;

const NO_AUTHORIZATION: Authorization = { tools: [], sources: [], send: [], scope: [] };

/** A run's authorization as stored (runs from before `send` existed send nowhere). */
export function authorizationOf(v: unknown): Authorization {
  return { ...NO_AUTHORIZATION, ...json<Partial<Authorization>>(v, {}) };
}

/** `requested`: asked for by the agent side, waiting for the host; `refused`: the host said no. */
export type RunStatus = "requested" | "running" | "parked" | "finished" | "cancelled" | "failed" | "refused";

/** Who asked for a run, what was asked, and what the host decided, by whom, when and why. */
export interface GrantRecord {
  state: "requested" | "granted" | "refused";
  requested_by: string;
  requested_at: string;
  request: { authorization: Authorization; budget: BudgetLimits };
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
  /** The standing allowance (root settings) that granted it, when one did. */
  standing: string | null;
}

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
function termsMissing(taskId: string): UnauthorizedError {
  return new UnauthorizedError(
    `Refused: task ${taskId} was started with terms that were never written to it (the process stopped between the two writes) and it cannot be told which task they were for, ` +
      `so its runs are refused rather than run without bounds; start the task again with its terms (task.start, host side)`,
    { reason: "task_terms_missing", task_id: taskId },
  );
}

/** The host's answer that woke a run parked for the user. */
export interface HostAnswer {
  text: string;
  data: Record<string, unknown> | null;
  by: string;
  at: string;
}

/** The status a run shows: a request is stored parked, a refusal cancelled (schema version 8). */
export function shownStatus(r: Row): RunStatus {
  const grant = str(r.grant_state);
  if (grant === "requested" && String(r.status) === "parked") return "requested";
  if (grant === "refused") return "refused";
  return String(r.status) as RunStatus;
}

export interface Run {
  run_id: string;
  task_id: string;
  parent_run_id: string | null;
  status: RunStatus;
  owner: string;
  epoch: number;
  authorization: Authorization;
  budget_limits: BudgetLimits;
  parked_on: string | null;
  /** Parked for the user: only the host wakes it, with its answer. */
  parked_for_user: boolean;
  /** The host's answer that last woke it (null when none). */
  answer: HostAnswer | null;
  /** The request and the host's decision (null for a run from before grants). */
  grant: GrantRecord | null;
  outcome: string | null;
  gaps: string[];
  created_at: string;
  updated_at: string;
  ended_at: string | null;
}

export interface Receipt {
  receipt_id: string;
  run_id: string;
  idempotency_key: string;
  attempt: number;
  tool: string;
  /** A tool call, a model request or a child run: where it counts in the budget. */
  kind: ReceiptKind;
  args_digest: string;
  status: "begun" | "completed" | "failed" | "unknown";
  epoch: number;
  result_ref: string | null;
  error: string | null;
  evidence: string | null;
  begun_at: string;
  settled_at: string | null;
  unknown_at: string | null;
}

export function toRun(r: Row): Run {
  return {
    run_id: RUN_ID.format(Number(r.seq)),
    task_id: String(r.task_id),
    parent_run_id: r.parent_seq === null ? null : RUN_ID.format(Number(r.parent_seq)),
    status: shownStatus(r),
    owner: String(r.owner),
    epoch: Number(r.epoch),
    authorization: authorizationOf(r.authorization),
    budget_limits: json<BudgetLimits>(r.budget_limits, {}),
    parked_on: str(r.parked_on),
    parked_for_user: Number(r.parked_for_user ?? 0) === 1,
    answer: json<HostAnswer | null>(r.answer, null),
    grant: json<GrantRecord | null>(r.grant_record, null),
    outcome: str(r.outcome),
    gaps: json<string[]>(r.gaps, []),
    created_at: String(r.created_at),
    updated_at: String(r.updated_at),
    ended_at: str(r.ended_at),
  };
}

export function toReceipt(r: Row): Receipt {
  return {
    receipt_id: RECEIPT_ID.format(Number(r.seq)),
    run_id: RUN_ID.format(Number(r.run_seq)),
    idempotency_key: String(r.idempotency_key),
    attempt: Number(r.attempt),
    tool: String(r.tool),
    kind: (str(r.kind) ?? "tool_call") as ReceiptKind,
    args_digest: String(r.args_digest),
    status: String(r.status) as Receipt["status"],
    epoch: Number(r.epoch),
    result_ref: str(r.result_ref),
    error: str(r.error),
    evidence: str(r.evidence),
    begun_at: String(r.begun_at),
    settled_at: str(r.settled_at),
    unknown_at: str(r.unknown_at),
  };
}

export interface RunCheckpoint {
  epoch: number;
  settled: string[];
  open: string[];
  note: string;
  at: string;
}

export type RunSummary = Run & { budget: BudgetStatus; open_items: number; checkpoint: RunCheckpoint | null };

/** An open item of a run: an unknown effect carried from its chain, or an unknown charge of an earlier run of it. */
export type OpenItem = Receipt | OpenCharge;

/** A continuation's authorization: the parent's, narrowed where asked; anything wider is refused. */
function narrowed(parent: Authorization, narrow: Partial<Authorization>, parentId: string): Authorization {
  const out: Authorization = { ...parent };
  for (const k of ["tools", "sources", "send", "scope"] as const) {
    const want = narrow[k];
    if (want === undefined) continue;
    const wider = widerItems(parent[k], want);
    if (wider.length) {
      throw new UnauthorizedError(
        `Refused: a continuation may narrow run ${parentId}'s ${k}, never widen them: ${wider.map((x) => JSON.stringify(x)).join(", ")} ` +
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
  authorization: Authorization;
  budget: BudgetLimits;
  constraints: string[];
  /** Who asked (`agent:http`, `host:stdio`). */
  requested_by: string;
  /** Granted at once, or null: the run waits as a request until the host grants or refuses it. */
  grant: GrantNow | null;
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

export class RunLedger {
  constructor(protected readonly d: LedgerDeps) {}

  protected now(): string {
    return this.d.clock.now().toISOString();
  }

  protected async runRow(tx: Transaction | null, runSeq: number): Promise<Row> {
    const exec = tx ?? this.d.db;
    const rs = await exec.execute({ sql: "SELECT * FROM runs WHERE seq = ?", args: [runSeq] });
    if (!rs.rows.length) throw new NotFoundError("run", RUN_ID.format(runSeq), "; run.start creates one");
    return rs.rows[0]!;
  }

  protected requireStatus(run: Row, allowed: RunStatus[], doing: string): void {
    const status = shownStatus(run);
    if (!allowed.includes(status)) {
      const hint = status === "requested" ? "; a requested run waits for the host: run.grant or run.refuse" : "";
      throw new ConflictError(`Run ${RUN_ID.format(Number(run.seq))} is ${status}; it cannot ${doing} (it must be ${allowed.join(" or ")})${hint}`, {
        reason: "run_status",
        run_id: RUN_ID.format(Number(run.seq)),
        status,
      });
    }
  }

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
        args: [id, question, JSON.stringify(terms.constraints), JSON.stringify(terms), this.now()],
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
      args: [taskId, question, JSON.stringify(terms.constraints), JSON.stringify(terms), this.now()],
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
  protected async intentsFor(exec: Transaction | Database, taskId: string): Promise<{ id: string; at: string; question: string; terms: TaskTerms }[]> {
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

  /** A run for the active task, epoch 1. The task's question is recorded verbatim with its constraints. */
  async start(task: TaskState | null, input: StartRunInput): Promise<Run> {
    if (!task || task.status === "completed" || task.status === "failed") {
      throw new NoActiveTaskError("No active task in this root: call task.start before run.start (a run belongs to a task)");
    }
    const at = this.now();
    const seq = await this.d.db.write(async (tx) => {
      await this.requireRunnable(tx, task.task_id, "run.start");
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
        sql: `INSERT INTO runs(task_id, status, owner, epoch, authorization, budget_limits, grant_state, grant_record, created_at, updated_at)
              VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?) RETURNING seq`,
        args: [task.task_id, g.status, input.owner, JSON.stringify(input.authorization), g.budget, g.grant_state, g.record, at, at],
      });
      const seq = Number(rs.rows[0]!.seq);
      await addEvent(tx, seq, 1, input.grant ? "started" : "requested", { owner: input.owner, requested_by: input.requested_by }, at);
      if (input.grant) await addEvent(tx, seq, 1, "granted", { by: input.grant.by, reason: input.grant.reason, standing: input.grant.standing }, at);
      return seq;
    });
    return toRun(await this.runRow(null, seq));
  }

  /**
   * In the transaction that creates a run: its task must be open (read from the task table, so a
   * task.finish committing at the same moment cannot slip past), and the task must have no other
   * run running or parked. A missing process is no licence to start another research.
   */
  protected async requireRunnable(tx: Transaction, taskId: string, what: string): Promise<void> {
    const task = await tx.execute({ sql: "SELECT status FROM tasks WHERE task_id = ?", args: [taskId] });
    const status = task.rows[0] ? String(task.rows[0].status) : null;
    if (status === null || status === "completed" || status === "failed") {
      throw new NoActiveTaskError(`${what}: task ${taskId} is ${status ?? "gone"}; a run belongs to an open task (task.start begins one)`, { task_id: taskId, status });
    }
    // terms task.start meant to write and never did: no run until they are on the task (termsFor)
    if ((await this.intentsFor(tx, taskId)).length) throw termsMissing(taskId);
    const active = await tx.execute({ sql: "SELECT seq, status, owner, epoch FROM runs WHERE task_id = ? AND status IN ('running', 'parked') ORDER BY seq LIMIT 1", args: [taskId] });
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
      sql: `SELECT * FROM runs ${taskId ? "WHERE task_id = ?" : ""} ORDER BY seq DESC LIMIT 500`,
      args: taskId ? [taskId] : [],
    });
    const out: RunSummary[] = [];
    for (const row of rs.rows) {
      const run = toRun(row);
      const seq = Number(row.seq);
      out.push({ ...run, budget: await this.budget(seq, run.budget_limits, null, run.created_at), open_items: (await this.openItems(seq)).length, checkpoint: await this.latestCheckpoint(seq) });
    }
    return out;
  }

  /** A run's own working summary: what is settled and what is open (recovery reads the newest). */
  async checkpoint(runId: string, epoch: number, settled: string[], open: string[], note: string): Promise<RunCheckpoint> {
    const seq = seqOf(RUN_ID, runId, "run");
    const at = this.now();
    await this.d.db.write(async (tx) => {
      await fence(tx, seq, epoch, at);
      const run = await this.runRow(tx, seq);
      this.requireStatus(run, ["running", "parked"], "take a checkpoint");
      await tx.execute({
        sql: "INSERT INTO run_checkpoints(run_seq, epoch, settled, open, note, at) VALUES (?, ?, ?, ?, ?, ?)",
        args: [seq, epoch, JSON.stringify(settled), JSON.stringify(open), note, at],
      });
      await addEvent(tx, seq, epoch, "checkpoint", { settled: settled.length, open: open.length }, at);
    });
    return (await this.latestCheckpoint(seq))!;
  }

  protected async latestCheckpoint(runSeq: number): Promise<RunCheckpoint | null> {
    const rs = await this.d.db.execute({ sql: "SELECT * FROM run_checkpoints WHERE run_seq = ? ORDER BY seq DESC LIMIT 1", args: [runSeq] });
    const r = rs.rows[0];
    return r ? { epoch: Number(r.epoch), settled: json<string[]>(r.settled, []), open: json<string[]>(r.open, []), note: String(r.note), at: String(r.at) } : null;
  }

  /** Observe: everything about a run, changing nothing. */
  async get(runId: string) {
    const seq = seqOf(RUN_ID, runId, "run");
    const run = toRun(await this.runRow(null, seq));
    const task = await this.d.db.execute({ sql: "SELECT question, constraints, terms FROM ledger_tasks WHERE task_id = ?", args: [run.task_id] });
    const terms = json<TaskTerms | null>(task.rows[0]?.terms, null);
    const receipts = (await this.d.db.execute({ sql: "SELECT * FROM receipts WHERE run_seq = ? ORDER BY seq", args: [seq] })).rows.map(toReceipt);
    const counts: Record<string, number> = { begun: 0, completed: 0, failed: 0, unknown: 0 };
    const byKind = Object.fromEntries(RECEIPT_KINDS.map((k) => [k, 0])) as Record<ReceiptKind, number>;
    for (const r of receipts) {
      counts[r.status] = (counts[r.status] ?? 0) + 1;
      byKind[r.kind] = (byKind[r.kind] ?? 0) + 1;
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
      budget: await this.budget(seq, run.budget_limits, null, run.created_at),
      receipt_counts: counts,
      receipts_by_kind: byKind,
      unknown_receipts: receipts.filter((r) => r.status === "unknown"),
      open_items: await this.openItems(seq),
      checkpoint: await this.latestCheckpoint(seq),
      events,
    };
  }

  /** The unknown effects carried into the run, then the unreconciled unknown charges of earlier runs of its chain. */
  protected async openItems(runSeq: number, tx: Transaction | null = null): Promise<OpenItem[]> {
    const rs = await (tx ?? this.d.db).execute({
      sql: `SELECT r.* FROM open_items o JOIN receipts r ON r.seq = o.receipt_seq
            WHERE o.run_seq = ? AND r.status = 'unknown' ORDER BY r.seq`,
      args: [runSeq],
    });
    return [...rs.rows.map(toReceipt), ...(await this.inheritedCharges(runSeq, tx))];
  }

  /** The charges of unknown amount, not reconciled, in the earlier runs of a run's chain. */
  protected async inheritedCharges(runSeq: number, tx: Transaction | null = null): Promise<OpenCharge[]> {
    const rs = await (tx ?? this.d.db).execute({
      sql: `${ANCESTRY}
            SELECT c.* FROM charges c JOIN ancestry a ON c.run_seq = a.seq
            WHERE c.unknown = 1 AND c.reconciled_at IS NULL ORDER BY c.seq`,
      args: [runSeq],
    });
    return rs.rows.map((r) => {
      const amounts = json<Amounts>(r.amounts, {});
      return {
        charge_id: CHARGE_ID.format(Number(r.seq)),
        run_id: RUN_ID.format(Number(r.run_seq)),
        unknown: unknownDimensions({ amounts, unknown: unknownOf(r) }),
        amounts,
        note: String(r.note ?? ""),
        at: String(r.at),
      };
    });
  }

  /** Same-run recovery: a new owner at epoch + 1; what was begun and never settled becomes unknown. */
  async claim(runId: string, owner: string): Promise<{ run: Run; newly_unknown: Receipt[]; checkpoint: RunCheckpoint | null }> {
    const seq = seqOf(RUN_ID, runId, "run");
    const at = this.now();
    const unknown = await this.d.db.write(async (tx) => {
      const run = await this.runRow(tx, seq);
      this.requireStatus(run, ["running", "parked"], "be claimed");
      const epoch = Number(run.epoch) + 1;
      await tx.execute({ sql: "UPDATE runs SET epoch = ?, owner = ?, updated_at = ? WHERE seq = ? AND epoch = ?", args: [epoch, owner, at, seq, Number(run.epoch)] });
      const marked = await tx.execute({
        sql: "UPDATE receipts SET status = 'unknown', unknown_at = ? WHERE run_seq = ? AND status = 'begun' RETURNING *",
        args: [at, seq],
      });
      await addEvent(tx, seq, epoch, "claimed", { owner, previous_owner: String(run.owner), previous_epoch: Number(run.epoch), receipts_now_unknown: marked.rows.length }, at);
      return marked.rows.map(toReceipt);
    });
    return { run: toRun(await this.runRow(null, seq)), newly_unknown: unknown, checkpoint: await this.latestCheckpoint(seq) };
  }

  /**
   * Explicit continuation: a new run of an open task (the caller's current one), linked to its
   * parent. It may narrow the parent's tools, sources and scope, never widen them; its allowance is
   * given explicitly (never the parent's by default); the parent's unknown effects (and the parent's
   * own open items) travel as open items, never as results.
   */
  async continueRun(
    parentId: string,
    input: { task_id: string; owner: string; budget: BudgetLimits; narrow: Partial<Authorization>; requested_by: string; grant: GrantNow | null; check?: (authorization: Authorization) => void },
  ): Promise<{ run: Run; open_items: OpenItem[] }> {
    const parentSeq = seqOf(RUN_ID, parentId, "run");
    const at = this.now();
    const seq = await this.d.db.write(async (tx) => {
      const parent = await this.runRow(tx, parentSeq);
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
      await this.requireRunnable(tx, input.task_id, "run.continue");
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
        sql: `INSERT INTO open_items(run_seq, receipt_seq, carried_at)
              SELECT ?, r.seq, ? FROM receipts r
              WHERE r.status = 'unknown' AND (r.run_seq = ? OR r.seq IN (SELECT receipt_seq FROM open_items WHERE run_seq = ?))`,
        args: [seq, at, parentSeq, parentSeq],
      });
      await addEvent(tx, seq, 1, "continued", { parent_run_id: parentId, owner: input.owner, task_id: input.task_id, requested_by: input.requested_by }, at);
      if (input.grant) await addEvent(tx, seq, 1, "granted", { by: input.grant.by, reason: input.grant.reason, standing: input.grant.standing }, at);
      await addEvent(tx, parentSeq, Number(parent.epoch), "continued_by", { run_id: RUN_ID.format(seq) }, at);
      return seq;
    });
    return { run: toRun(await this.runRow(null, seq)), open_items: await this.openItems(seq) };
  }

  /** A fenced change of a run's lifecycle, with its cause recorded as an event. */
  protected async lifecycle(
    runId: string,
    epoch: number | null,
    allowed: RunStatus[],
    doing: string,
    set: { status?: RunStatus; parked_on?: string | null; parked_for_user?: boolean; answer?: string; outcome?: string; gaps?: string[]; ended?: boolean },
    event: string,
    detail: Record<string, unknown>,
    check?: (run: Row) => void,
  ): Promise<Run> {
    const seq = seqOf(RUN_ID, runId, "run");
    const at = this.now();
    await this.d.db.write(async (tx) => {
      if (epoch !== null) await fence(tx, seq, epoch, at);
      const run = await this.runRow(tx, seq);
      this.requireStatus(run, allowed, doing);
      check?.(run);
      await tx.execute({
        sql: `UPDATE runs SET status = COALESCE(?, status), parked_on = ?, parked_for_user = COALESCE(?, parked_for_user), answer = COALESCE(?, answer),
              outcome = COALESCE(?, outcome), gaps = COALESCE(?, gaps),
              ended_at = CASE WHEN ? THEN ? ELSE ended_at END, updated_at = ? WHERE seq = ?`,
        args: [
          set.status ?? null,
          set.parked_on === undefined ? str(run.parked_on) : set.parked_on,
          set.parked_for_user === undefined ? null : set.parked_for_user ? 1 : 0,
          set.answer ?? null,
          set.outcome ?? null,
          set.gaps ? JSON.stringify(set.gaps) : null,
          set.ended ? 1 : 0,
          at,
          at,
          seq,
        ],
      });
      await addEvent(tx, seq, Number(run.epoch), event, detail, at);
    });
    return toRun(await this.runRow(null, seq));
  }

  /** Park a running run; parked `forUser`, only the host wakes it, with its answer. */
  park(runId: string, epoch: number, waitingFor: string, forUser = false): Promise<Run> {
    return this.lifecycle(runId, epoch, ["running"], "park", { status: "parked", parked_on: waitingFor, parked_for_user: forUser }, "parked", { waiting_for: waitingFor, for_user: forUser });
  }

  /**
   * Wake a parked run. A run parked for the user is the host's to wake (`by` a host), and the
   * host's answer is delivered to it (kept on the run: run.get and run.claim return it).
   */
  wake(runId: string, epoch: number | null, reason: string, by: { side: "host" | "agent"; name: string }, answer: { text: string; data?: Record<string, unknown> } | null): Promise<Run> {
    const at = this.now();
    const stored = answer ? JSON.stringify({ text: answer.text, data: answer.data ?? null, by: by.name, at } satisfies HostAnswer) : undefined;
    return this.lifecycle(runId, epoch, ["parked"], "wake", { status: "running", parked_on: null, parked_for_user: false, answer: stored }, "woken", { reason, by: by.name, answer: answer ? { text: answer.text, data: answer.data ?? null } : null }, (run) => {
      if (by.side !== "host" && Number(run.parked_for_user ?? 0) === 1) {
        throw new UnauthorizedError(
          `Refused: run ${runId} is parked for the user (${str(run.parked_on) ?? "an answer"}); only the host wakes it, with the user's answer (run.wake with answer, host side)`,
          { reason: "parked_for_user", run_id: runId, method: "run.wake", side_required: "host", side: by.side },
        );
      }
    });
  }

  /** Stop the current request so the next adopts an adjustment. The run goes on running. */
  yieldRequest(runId: string, epoch: number, reason: string, requestId: string | null, adjustmentId: string | null): Promise<Run> {
    return this.lifecycle(runId, epoch, ["running"], "yield a request", {}, "yielded", { reason, request_id: requestId, adjustment_id: adjustmentId });
  }

  /** The user stops the whole run. The host may cancel without an epoch; an agent must carry its epoch. */
  cancel(runId: string, epoch: number | null, reason: string, by: string): Promise<Run> {
    return this.lifecycle(runId, epoch, ["running", "parked", "requested"], "be cancelled", { status: "cancelled", parked_on: null, ended: true }, "cancelled", { reason, by });
  }

  /** The end of a run: its outcome and the gaps that remain open. A normal end never closes them. */
  finish(runId: string, epoch: number, outcome: string, gaps: string[], status: "finished" | "failed"): Promise<Run> {
    return this.lifecycle(runId, epoch, ["running", "parked"], "finish", { status, outcome, gaps, parked_on: null, ended: true }, status, { outcome, gaps });
  }

  /** A run's charges; an unknown one that was reconciled counts at its real amounts. */
  protected async charges(runSeq: number, tx: Transaction | null = null): Promise<Charge[]> {
    const exec = tx ?? this.d.db;
    const rs = await exec.execute({ sql: "SELECT amounts, unknown, unknown_dims, reconciled_amounts FROM charges WHERE run_seq = ?", args: [runSeq] });
    return rs.rows.map((r): Charge => {
      // reconciled: what it knew when charged, with what was unknown filled in (never replaced)
      if (r.reconciled_amounts !== null && r.reconciled_amounts !== undefined) return { amounts: { ...json<Amounts>(r.amounts, {}), ...json<Amounts>(r.reconciled_amounts, {}) }, unknown: false };
      return { amounts: json(r.amounts, {}), unknown: unknownOf(r) };
    });
  }

  protected async budget(runSeq: number, limits: BudgetLimits, tx: Transaction | null, startedAt: string): Promise<BudgetStatus> {
    const inherited = await this.inheritedCharges(runSeq, tx);
    // an earlier run's unknown adds nothing to this run's spend; what it left unknown stays unknown here
    const carried = inherited.map((c): Charge => ({ amounts: {}, unknown: c.unknown, inherited: true }));
    const status = budgetStatus(limits, [...(await this.charges(runSeq, tx)), ...carried], { started_at: startedAt, now: this.d.clock.now() });
    const ids = await (tx ?? this.d.db).execute({ sql: "SELECT seq FROM charges WHERE run_seq = ? AND unknown = 1 AND reconciled_at IS NULL ORDER BY seq", args: [runSeq] });
    return { ...status, unknown_charge_ids: ids.rows.map((r) => CHARGE_ID.format(Number(r.seq))), inherited_unknown: inherited };
  }

  /** A run the host has not granted begins no effect: the host grants it (run.grant) or refuses it. */
  protected requireGranted(run: Row): void {
    if (shownStatus(run) !== "requested") return;
    const id = RUN_ID.format(Number(run.seq));
    throw new UnauthorizedError(
      `Refused: run ${id} is a request the host has not granted yet, so it begins no effect; the host must grant it (run.grant, as asked or narrowed) or refuse it (run.refuse); observe it with run.get`,
      { reason: "run_not_granted", run_id: id, status: "requested", next: "run.grant" },
    );
  }

  /**
   * An effect's tool, the source it reads and the provider it sends data to must each be in the
   * run's authorization (`tools`, `sources`, `send`; `"*"` allows any).
   */
  protected authorizeEffect(run: Row, effect: { tool: string; source?: string; send_to?: string }): void {
    const auth = authorizationOf(run.authorization);
    const id = RUN_ID.format(Number(run.seq));
    const checks = [
      { field: "tools", value: effect.tool, what: "tool" },
      { field: "sources", value: effect.source, what: "source" },
      { field: "send", value: effect.send_to, what: "sending data to" },
    ] as const;
    for (const c of checks) {
      if (c.value === undefined) continue;
      const allowed = auth[c.field];
      if (allowed.includes(c.value) || allowed.includes("*")) continue;
      throw new UnauthorizedError(
        `Refused: ${c.what} ${JSON.stringify(c.value)} is not in run ${id}'s authorization (${c.field}: ${allowed.join(", ") || "none"}); ` +
          `a run's permissions are what the host granted; ask for more in a new run or continuation`,
        { run_id: id, field: c.field, [c.field === "tools" ? "tool" : c.field === "sources" ? "source" : "send_to"]: c.value, allowed },
      );
    }
  }
}
