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

  /** A run's charges; an unknown one that was reconciled counts at its real amounts. */
  async #charges(runSeq: number, tx: Transaction | null = null): Promise<Charge[]> {
    const exec = tx ?? this.d.db;
    const rs = await exec.execute({ sql: "SELECT amounts, unknown, unknown_dims, reconciled_amounts FROM charges WHERE run_seq = ?", args: [runSeq] });
    return rs.rows.map((r): Charge => {
      // reconciled: what it knew when charged, with what was unknown filled in (never replaced)
      if (r.reconciled_amounts !== null && r.reconciled_amounts !== undefined) return { amounts: { ...json<Amounts>(r.amounts, {}), ...json<Amounts>(r.reconciled_amounts, {}) }, unknown: false };
      return { amounts: json(r.amounts, {}), unknown: unknownOf(r) };
    });
  }

  /** A run's budget status, read in `tx` when given. */
  async status(runSeq: number, limits: BudgetLimits, tx: Transaction | null, startedAt: string): Promise<BudgetStatus> {
    const inherited = await this.inheritedCharges(runSeq, tx);
    // an earlier run's unknown adds nothing to this run's spend; what it left unknown stays unknown here
    const carried = inherited.map((c): Charge => ({ amounts: {}, unknown: c.unknown, inherited: true }));
    const children = await this.#children(runSeq, tx);
    const status = budgetStatus(limits, [...(await this.#charges(runSeq, tx)), ...carried, ...children], { started_at: startedAt, now: this.d.clock.now() });
    const ids = await (tx ?? this.d.db).execute({ sql: "SELECT seq FROM charges WHERE run_seq = ? AND unknown = 1 AND reconciled_at IS NULL ORDER BY seq", args: [runSeq] });
    return { ...status, unknown_charge_ids: ids.rows.map((r) => CHARGE_ID.format(Number(r.seq))), inherited_unknown: inherited };
  }

  /**
   * A run's child runs as charges: what each spent, and beyond it what counts toward the parent's
   * limits (an open child's whole slice, or its spend where that is more; an ended one's unknown
   * charges at their ceiling); a child whose spend is uncertain leaves those dimensions uncertain.
   */
  async #children(runSeq: number, tx: Transaction | null): Promise<Charge[]> {
    const rs = await (tx ?? this.d.db).execute({ sql: "SELECT seq, status, budget_limits, created_at FROM runs WHERE child_of = ? ORDER BY seq", args: [runSeq] });
    const out: Charge[] = [];
    for (const r of rs.rows) {
      const limits = json<BudgetLimits>(r.budget_limits, {});
      const s = await this.status(Number(r.seq), limits, tx, String(r.created_at));
      const open = r.status === "running" || r.status === "parked";
      const reserved: Amounts = {};
      for (const d of BUDGET_DIMENSIONS) {
        const held = open && limits[d] !== undefined ? Math.max(limits[d]!, s.effective[d]) : s.effective[d];
        if (held > s.spent[d]) reserved[d] = held - s.spent[d];
      }
      out.push({ amounts: s.spent, unknown: s.uncertain.length ? s.uncertain : false, child: true, reserved });
    }
    return out;
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
