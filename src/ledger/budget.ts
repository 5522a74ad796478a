/**
 * A run's spending (seed 003, section 8). Charges are recorded always, past a limit too, of known
 * or unknown amount; an unknown one counts as unknown, never zero, until budget.reconcile fills in
 * what it left unknown. A run's budget status is the pure rule (core/run_rules/budget.ts) over its
 * own charges and the unreconciled unknown charges of earlier runs of its chain, with its child
 * runs rolled up (their spend is its spend; an open child's unspent slice is reserved).
 */
import type { Tx as Transaction } from "../db/database.ts";
import { type Amounts, BUDGET_DIMENSIONS, type BudgetDimension, type BudgetLimits, type BudgetStatus as PureBudgetStatus, budgetStatus, type Charge, unknownDimensions } from "../core/run_rules/budget.ts";
import { invalidParams } from "../core/rpc_error.ts";
import { BudgetExhaustedError, ConflictError, NotFoundError } from "../core/errors.ts";
import { addEvent, ANCESTRY, CHARGE_ID, fence, json, type LedgerDeps, now, type Row, RUN_ID, seqOf } from "./common.ts";
import { runRow } from "./run_record.ts";

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

/** The columns of a charge that chargeOf reads. */
const CHARGE_COLUMNS = "amounts, unknown, unknown_dims, reconciled_amounts, reconciled_at";

/** A charge row as the pure rule counts it; an unknown one that was reconciled counts at its real amounts. */
function chargeOf(r: Row): Charge {
  // reconciled: what it knew when charged, with what was unknown filled in (never replaced)
  if (r.reconciled_amounts !== null && r.reconciled_amounts !== undefined) return { amounts: { ...json<Amounts>(r.amounts, {}), ...json<Amounts>(r.reconciled_amounts, {}) }, unknown: false };
  return { amounts: json(r.amounts, {}), unknown: unknownOf(r) };
}

function unknownOf(r: Row): boolean | BudgetDimension[] {
  if (Number(r.unknown) !== 1) return false;
  return r.unknown_dims === null || r.unknown_dims === undefined ? true : json<BudgetDimension[]>(r.unknown_dims, []);
}

/** Why a run begins no new effect: its budget is reached, or unknown charges leave what is left unknown. */
export function noEffects(runId: string, status: BudgetStatus): BudgetExhaustedError {
  const why = status.exhausted
    ? `has reached its budget (${status.exhausted_by.join(", ")})`
    : `has ${status.unknown_charges + status.inherited_unknown_charges} charge(s) of unknown amount${status.inherited_unknown_charges ? ` (${status.inherited_unknown_charges} in an earlier run of its chain)` : ""}${status.uncertain_children ? ` and ${status.uncertain_children} child run(s) with some` : ""} and no unknown_ceiling for ${status.uncertain.join(", ")}, so what is left is not known`;
  const ids = [...status.unknown_charge_ids, ...status.inherited_unknown.map((c) => `${c.charge_id} on earlier run ${c.run_id}`)];
  const next = status.exhausted
    ? "continue in a new run with its own budget if the user wants more"
    : `record what they cost with budget.reconcile (${ids.join(", ")}), or continue in a new run whose budget sets an unknown_ceiling`;
  return new BudgetExhaustedError(`Refused: run ${runId} ${why}, so no new effects; spending is still recorded and artifacts may still be saved; ${next}`, {
    run_id: runId,
    exhausted_by: status.exhausted_by,
    uncertain: status.uncertain,
    unknown_charge_ids: status.unknown_charge_ids,
    inherited_unknown: status.inherited_unknown.map((c) => ({ charge_id: c.charge_id, run_id: c.run_id, unknown: c.unknown })),
    effective: status.effective,
    limits: status.limits,
  });
}

/** Charges and budget status of the ledger's runs. */
export class Budgets {
  constructor(private readonly d: LedgerDeps) {}

  /** A run's budget status, read in `tx` when given. */
  async status(runSeq: number, limits: BudgetLimits, tx: Transaction | null, startedAt: string): Promise<BudgetStatus> {
    const exec = tx ?? this.d.db;
    const inherited = await this.inheritedCharges(runSeq, tx);
    // an earlier run's unknown adds nothing to this run's spend; what it left unknown stays unknown here
    const carried = inherited.map((c): Charge => ({ amounts: {}, unknown: c.unknown, inherited: true }));
    const own = await exec.execute({ sql: `SELECT seq, ${CHARGE_COLUMNS} FROM charges WHERE run_seq = ? ORDER BY seq`, args: [runSeq] });
    const tree = await this.#subtree(runSeq, tx);
    const children = (tree.byParent.get(runSeq) ?? []).map((c) => tree.rollUp(c));
    const status = budgetStatus(limits, [...own.rows.map(chargeOf), ...carried, ...children], { started_at: startedAt, now: this.d.clock.now() });
    const ids = own.rows.filter((r) => Number(r.unknown) === 1 && r.reconciled_at === null).map((r) => CHARGE_ID.format(Number(r.seq)));
    return { ...status, unknown_charge_ids: ids, inherited_unknown: inherited };
  }

  /** The budget status (the pure rule's) of each child run of `runSeq`, in the order they started. */
  async childStatuses(runSeq: number, tx: Transaction | null = null): Promise<Map<number, PureBudgetStatus>> {
    const tree = await this.#subtree(runSeq, tx);
    return new Map((tree.byParent.get(runSeq) ?? []).map((seq) => [seq, tree.statusOf(seq)]));
  }

  /**
   * Every child run under `runSeq` (at any depth) with its charges, in two statements however many
   * there are (a parent that finished 500 children answers as fast as one that finished none), and
   * each child as a charge of its parent: what it spent, and beyond it what counts toward the
   * parent's limits (an open child's whole slice, or its spend where that is more; an ended one's
   * unknown charges at their ceiling); a child whose spend is uncertain leaves those dimensions
   * uncertain. A child run has no earlier runs of its own (run.child starts none from a chain).
   */
  async #subtree(runSeq: number, tx: Transaction | null) {
    const exec = tx ?? this.d.db;
    const SUBTREE = `WITH RECURSIVE sub(seq) AS (SELECT seq FROM runs WHERE child_of = ? UNION ALL SELECT r.seq FROM runs r JOIN sub s ON r.child_of = s.seq)`;
    const runs = await exec.execute({ sql: `${SUBTREE} SELECT seq, child_of, status, budget_limits, created_at FROM runs WHERE seq IN (SELECT seq FROM sub) ORDER BY seq`, args: [runSeq] });
    const byParent = new Map<number, number[]>();
    const node = new Map<number, { limits: BudgetLimits; open: boolean; created_at: string; charges: Charge[] }>();
    for (const r of runs.rows) {
      const seq = Number(r.seq);
      node.set(seq, { limits: json<BudgetLimits>(r.budget_limits, {}), open: r.status === "running" || r.status === "parked", created_at: String(r.created_at), charges: [] });
      const up = Number(r.child_of);
      byParent.set(up, [...(byParent.get(up) ?? []), seq]);
    }
    if (node.size) {
      const charges = await exec.execute({ sql: `${SUBTREE} SELECT run_seq, ${CHARGE_COLUMNS} FROM charges WHERE run_seq IN (SELECT seq FROM sub) ORDER BY seq`, args: [runSeq] });
      for (const c of charges.rows) node.get(Number(c.run_seq))?.charges.push(chargeOf(c));
    }
    const at = this.d.clock.now();
    const statusOf = (seq: number): PureBudgetStatus => {
      const n = node.get(seq)!;
      return budgetStatus(n.limits, [...n.charges, ...(byParent.get(seq) ?? []).map(rollUp)], { started_at: n.created_at, now: at });
    };
    const rollUp = (seq: number): Charge => {
      const n = node.get(seq)!;
      const s = statusOf(seq);
      const reserved: Amounts = {};
      for (const d of BUDGET_DIMENSIONS) {
        const held = n.open && n.limits[d] !== undefined ? Math.max(n.limits[d]!, s.effective[d]) : s.effective[d];
        if (held > s.spent[d]) reserved[d] = held - s.spent[d];
      }
      return { amounts: s.spent, unknown: s.uncertain.length ? s.uncertain : false, child: true, reserved };
    };
    return { byParent, statusOf, rollUp };
  }

  /** The charges of unknown amount, not reconciled, in the earlier runs of a run's chain. */
  async inheritedCharges(runSeq: number, tx: Transaction | null = null): Promise<OpenCharge[]> {
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

  /**
   * Records spending, always: past a limit too (what an in-flight request really cost is never
   * lost; the limit stops new effects, not accounting). Returns the budget after it.
   */
  async charge(runId: string, epoch: number, amounts: Amounts, unknown: boolean | readonly BudgetDimension[], note: string): Promise<BudgetStatus & { charge_id: string }> {
    const seq = seqOf(RUN_ID, runId, "run");
    const at = now(this.d);
    return this.d.db.write(async (tx) => {
      await fence(tx, seq, epoch, at);
      const run = await runRow(this.d, tx, seq);
      const rs = await tx.execute({
        sql: "INSERT INTO charges(run_seq, epoch, amounts, unknown, unknown_dims, note, at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq",
        args: [seq, epoch, JSON.stringify(amounts), unknown === false || (Array.isArray(unknown) && unknown.length === 0) ? 0 : 1, Array.isArray(unknown) ? JSON.stringify(unknown) : null, note, at],
      });
      const status = await this.status(seq, json<BudgetLimits>(run.budget_limits, {}), tx, String(run.created_at));
      const chargeId = CHARGE_ID.format(Number(rs.rows[0]!.seq));
      // the first charge that reaches a limit is an event (the root's log: a host waiting for it)
      if (status.exhausted) {
        const noted = await tx.execute({ sql: "SELECT 1 FROM run_events WHERE run_seq = ? AND epoch = ? AND kind = 'budget_exhausted' LIMIT 1", args: [seq, epoch] });
        if (!noted.rows.length) await addEvent(tx, seq, epoch, "budget_exhausted", { charge_id: chargeId, exhausted_by: status.exhausted_by }, at);
      }
      return { ...status, charge_id: chargeId };
    });
  }

  /**
   * An unknown charge's real amounts, once known, with the evidence (the original row is kept).
   * Only what the charge left unknown is filled in: its known amounts stay as recorded, and an
   * amount for a dimension it knew is refused (invalid params naming it).
   */
  async reconcileCharge(runId: string, epoch: number, chargeId: string, amounts: Amounts, evidence: string): Promise<BudgetStatus> {
    const seq = seqOf(RUN_ID, runId, "run");
    const chargeSeq = seqOf(CHARGE_ID, chargeId, "charge");
    const at = now(this.d);
    return this.d.db.write(async (tx) => {
      await fence(tx, seq, epoch, at);
      const run = await runRow(this.d, tx, seq);
      const c = await tx.execute({ sql: "SELECT amounts, unknown, unknown_dims, reconciled_at FROM charges WHERE seq = ? AND run_seq = ?", args: [chargeSeq, seq] });
      if (!c.rows.length) throw new NotFoundError("charge", chargeId, ` in run ${runId}`);
      const row = c.rows[0]!;
      if (Number(row.unknown) !== 1 || row.reconciled_at !== null) {
        throw new ConflictError(`Charge ${chargeId} is ${Number(row.unknown) !== 1 ? "known already" : "reconciled already"}; nothing to reconcile`, { reason: "charge_known", charge_id: chargeId });
      }
      // reconciling fills in what was unknown; what the charge knew stays as recorded
      const unknownDims = unknownDimensions({ amounts: json<Amounts>(row.amounts, {}), unknown: row.unknown_dims === null || row.unknown_dims === undefined ? true : json<BudgetDimension[]>(row.unknown_dims, []) });
      const known = (Object.keys(amounts) as BudgetDimension[]).filter((d) => amounts[d] !== undefined && !unknownDims.includes(d));
      if (known.length) {
        throw invalidParams(
          `Invalid params for budget.reconcile: charge ${chargeId} already knows ${known.join(", ")} (recorded when it was charged, kept as it is); ` +
            `give amounts only for what it left unknown: ${unknownDims.join(", ")}`,
          { field: known[0], known_dimensions: known, unknown_dimensions: unknownDims, charge_id: chargeId },
        );
      }
      await tx.execute({
        sql: "UPDATE charges SET reconciled_amounts = ?, reconciled_evidence = ?, reconciled_at = ? WHERE seq = ?",
        args: [JSON.stringify(amounts), evidence, at, chargeSeq],
      });
      await addEvent(tx, seq, epoch, "charge_reconciled", { charge_id: chargeId, amounts, evidence }, at);
      return this.status(seq, json<BudgetLimits>(run.budget_limits, {}), tx, String(run.created_at));
    });
  }

  async budgetOf(runId: string): Promise<BudgetStatus> {
    const seq = seqOf(RUN_ID, runId, "run");
    const run = await runRow(this.d, null, seq);
    return this.status(seq, json<BudgetLimits>(run.budget_limits, {}), null, String(run.created_at));
  }
}
