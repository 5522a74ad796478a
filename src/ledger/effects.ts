/**
 * Tool effects and spending of a run (seed 003, sections 5 and 8). A receipt is durable before
 * its effect runs and settled after; a key that already completed returns the recorded result
 * instead of a new effect; an unknown one is refused until reconciled. Charges may be unknown and
 * count as unknown, never zero; at a limit, new effects and charges are refused.
 */
import type { Tx as Transaction } from "../db/database.ts";
import { beginVerdict, kindCharge, type ReceiptKind, settleAllowed } from "../core/run_rules/receipts.ts";
import { type Amounts, type BudgetDimension, type BudgetLimits, unknownDimensions } from "../core/run_rules/budget.ts";
import { invalidParams } from "../core/rpc_error.ts";
import { BudgetExhaustedError, ConflictError, NotFoundError, StaleEpochError } from "../core/errors.ts";
import { addEvent, CHARGE_ID, fence, json, RECEIPT_ID, type Row, RUN_ID, seqOf } from "./common.ts";
import { GrantLedger } from "./grants.ts";
import { type BudgetStatus, type Receipt, toReceipt } from "./runs.ts";

export interface BeginInput {
  run_id: string;
  epoch: number;
  tool: string;
  /** What the effect is (default `tool_call`): it decides where the effect counts in the budget. */
  kind?: ReceiptKind;
  idempotency_key: string;
  args_digest: string;
  /** The source the effect reads, checked against the run's `sources`. */
  source?: string;
  /** The provider the effect sends data to, checked against the run's `send`. */
  send_to?: string;
}

export interface SettleInput {
  run_id: string;
  epoch: number;
  receipt_id: string;
  outcome: "completed" | "failed";
  result_ref?: string;
  error?: string;
  evidence?: string;
}

export class EffectLedger extends GrantLedger {
  #noEffects(runId: string, status: BudgetStatus): BudgetExhaustedError {
    const why = status.exhausted
      ? `has reached its budget (${status.exhausted_by.join(", ")})`
      : `has ${status.unknown_charges + status.inherited_unknown_charges} charge(s) of unknown amount${status.inherited_unknown_charges ? ` (${status.inherited_unknown_charges} in an earlier run of its chain)` : ""} and no unknown_ceiling for ${status.uncertain.join(", ")}, so what is left is not known`;
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

  /**
   * An unsettled receipt (unknown, or begun and never settled) for the key in an earlier run of
   * the chain (the parent, the parent's parent…): such an effect may have happened, so no
   * continuation begins it again until it is reconciled with evidence. (A completed one in an
   * earlier run is not reused as a result: a continuation's effects are its own.)
   */
  async #unsettledInAncestry(tx: Transaction, runSeq: number, key: string): Promise<Row | null> {
    const rs = await tx.execute({
      sql: `WITH RECURSIVE ancestry(seq, depth) AS (
              SELECT parent_seq, 1 FROM runs WHERE seq = ? AND parent_seq IS NOT NULL
              UNION ALL SELECT r.parent_seq, a.depth + 1 FROM runs r JOIN ancestry a ON r.seq = a.seq WHERE r.parent_seq IS NOT NULL AND a.depth < 1000
            )
            SELECT rc.* FROM receipts rc JOIN ancestry a ON rc.run_seq = a.seq
            WHERE rc.idempotency_key = ? AND rc.status IN ('unknown', 'begun') ORDER BY a.depth ASC, rc.attempt DESC LIMIT 1`,
      args: [runSeq, key],
    });
    return rs.rows[0] ?? null;
  }

  /** Records an effect before it happens (committed before this returns), or replays a completed one. */
  async begin(input: BeginInput): Promise<{ receipt: Receipt; replayed: boolean }> {
    const seq = seqOf(RUN_ID, input.run_id, "run");
    const at = this.now();
    const out = await this.d.db.write(async (tx) => {
      await fence(tx, seq, input.epoch, at);
      const run = await this.runRow(tx, seq);
      this.requireGranted(run);
      const prev = await tx.execute({
        sql: "SELECT * FROM receipts WHERE run_seq = ? AND idempotency_key = ? ORDER BY attempt DESC LIMIT 1",
        args: [seq, input.idempotency_key],
      });
      // this run's own receipt for the key decides; without one, an unsettled one earlier in the chain refuses
      const ownRow = prev.rows[0] ?? null;
      const ancestorRow = ownRow ? null : await this.#unsettledInAncestry(tx, seq, input.idempotency_key);
      const existing = ownRow ? toReceipt(ownRow) : ancestorRow ? toReceipt(ancestorRow) : null;
      const inAncestor = ancestorRow !== null;
      const kind = input.kind ?? "tool_call";
      if (ownRow && existing!.kind !== kind) {
        throw new ConflictError(
          `Refused: idempotency key ${JSON.stringify(input.idempotency_key)}: receipt ${existing!.receipt_id} recorded it as a ${existing!.kind}, not a ${kind}; one key names one effect, so use a new key for a different one`,
          { reason: "receipt_kind_differs", receipt_id: existing!.receipt_id, run_id: existing!.run_id, recorded_kind: existing!.kind },
        );
      }
      const verdict: ReturnType<typeof beginVerdict> = inAncestor
        ? { kind: "refuse", reason: existing!.status === "unknown" ? "unknown" : "in_flight" }
        : beginVerdict(existing, input.args_digest);
      if (verdict.kind === "replay") return { seq: Number(ownRow!.seq), replayed: true };
      if (verdict.kind === "refuse") {
        const id = existing!.receipt_id;
        const where = inAncestor ? ` in earlier run ${existing!.run_id}` : "";
        const why = {
          unknown: `its earlier effect ${id}${where} may have happened (status unknown); reconcile it with receipt.settle and evidence (from this run: it is one of its open items) before anything is re-run`,
          in_flight: `receipt ${id}${where} for it is begun and not settled yet; settle it (or claim its run, which makes it unknown) first`,
          args_differ: `receipt ${id} used the same key with different arguments; use a new idempotency key for a different effect`,
        }[verdict.reason];
        throw new ConflictError(`Refused: idempotency key ${JSON.stringify(input.idempotency_key)}: ${why}`, {
          reason: `receipt_${verdict.reason}`,
          receipt_id: id,
          run_id: existing!.run_id,
          status: existing!.status,
        });
      }
      this.requireStatus(run, ["running"], "begin an effect");
      this.authorizeEffect(run, input);
      const status = await this.budget(seq, json<BudgetLimits>(run.budget_limits, {}), tx, String(run.created_at));
      if (!status.effects_allowed) throw this.#noEffects(input.run_id, status);
      const attempt = verdict.attempt;
      const ins = await tx.execute({
        sql: `INSERT INTO receipts(run_seq, idempotency_key, attempt, tool, kind, args_digest, status, epoch, begun_at)
              VALUES (?, ?, ?, ?, ?, ?, 'begun', ?, ?) RETURNING seq`,
        args: [seq, input.idempotency_key, attempt, input.tool, kind, input.args_digest, input.epoch, at],
      });
      const receiptSeq = Number(ins.rows[0]!.seq);
      // each kind counts where it belongs: a tool call as a tool call, a model request as a request
      const amounts = kindCharge(kind);
      if (Object.keys(amounts).length) {
        await tx.execute({
          sql: "INSERT INTO charges(run_seq, epoch, amounts, unknown, note, receipt_seq, at) VALUES (?, ?, ?, 0, ?, ?, ?)",
          args: [seq, input.epoch, JSON.stringify(amounts), `${kind.replace("_", " ")} ${input.tool}`, receiptSeq, at],
        });
      }
      this.d.crash?.("receipt.begin.before_commit");
      return { seq: receiptSeq, replayed: false };
    });
    this.d.crash?.("receipt.begin.after_commit");
    return { receipt: await this.#receipt(out.seq), replayed: out.replayed };
  }

  async #receipt(seq: number, tx: Transaction | null = null): Promise<Receipt> {
    const rs = await (tx ?? this.d.db).execute({ sql: "SELECT * FROM receipts WHERE seq = ?", args: [seq] });
    if (!rs.rows.length) throw new NotFoundError("receipt", RECEIPT_ID.format(seq));
    return toReceipt(rs.rows[0]!);
  }

  /**
   * Settles an effect: completed (with its result reference) or failed. An unknown receipt may be
   * settled only with evidence (reconciliation). A result from an executor whose epoch is gone is
   * recorded as late and not applied.
   */
  async settle(input: SettleInput): Promise<Receipt> {
    const seq = seqOf(RUN_ID, input.run_id, "run");
    const receiptSeq = seqOf(RECEIPT_ID, input.receipt_id, "receipt");
    const at = this.now();
    try {
      await this.d.db.write(async (tx) => {
        await fence(tx, seq, input.epoch, at);
        const r = await this.#receipt(receiptSeq, tx);
        if (r.run_id !== input.run_id) {
          // an earlier run's unknown effect is reconciled from the continuation that carries it
          const carried = await tx.execute({ sql: "SELECT 1 FROM open_items WHERE run_seq = ? AND receipt_seq = ?", args: [seq, receiptSeq] });
          if (!carried.rows.length) throw new NotFoundError("receipt", input.receipt_id, ` in run ${input.run_id} or among its open items`);
        }
        if (!settleAllowed(r.status, input.outcome, Boolean(input.evidence))) {
          throw new ConflictError(
            r.status === "unknown"
              ? `Receipt ${r.receipt_id} is unknown: settle it only with evidence of what happened (evidence), never by re-running it`
              : `Receipt ${r.receipt_id} is already ${r.status}; a settled effect is not settled again`,
            { reason: "receipt_status", receipt_id: r.receipt_id, status: r.status },
          );
        }
        await tx.execute({
          sql: `UPDATE receipts SET status = ?, result_ref = ?, error = ?, evidence = ?, settled_at = ? WHERE seq = ?`,
          args: [input.outcome, input.result_ref ?? null, input.error ?? null, input.evidence ?? null, at, receiptSeq],
        });
        if (r.status === "unknown") await addEvent(tx, seq, input.epoch, "reconciled", { receipt_id: r.receipt_id, outcome: input.outcome, evidence: input.evidence }, at);
        this.d.crash?.("receipt.settle.before_commit");
      });
    } catch (e) {
      if (e instanceof StaleEpochError) await this.#recordLate(seq, input, e, at);
      throw e;
    }
    this.d.crash?.("receipt.settle.after_commit");
    return this.#receipt(receiptSeq);
  }

  async #recordLate(runSeq: number, input: SettleInput, e: StaleEpochError, at: string): Promise<void> {
    await this.d.db.write((tx) =>
      addEvent(tx, runSeq, e.current_epoch, "late_result", {
        receipt_id: input.receipt_id,
        outcome: input.outcome,
        result_ref: input.result_ref ?? null,
        from_epoch: input.epoch,
        applied: false,
      }, at)
    );
  }

  async list(runId: string, status?: string): Promise<Receipt[]> {
    const seq = seqOf(RUN_ID, runId, "run");
    await this.runRow(null, seq);
    const rs = await this.d.db.execute({
      sql: `SELECT * FROM receipts WHERE run_seq = ? ${status ? "AND status = ?" : ""} ORDER BY seq`,
      args: status ? [seq, status] : [seq],
    });
    return rs.rows.map(toReceipt);
  }

  /**
   * Records spending, always: past a limit too (what an in-flight request really cost is never
   * lost; the limit stops new effects, not accounting). Returns the budget after it.
   */
  async charge(runId: string, epoch: number, amounts: Amounts, unknown: boolean | readonly BudgetDimension[], note: string): Promise<BudgetStatus & { charge_id: string }> {
    const seq = seqOf(RUN_ID, runId, "run");
    const at = this.now();
    return this.d.db.write(async (tx) => {
      await fence(tx, seq, epoch, at);
      const run = await this.runRow(tx, seq);
      const rs = await tx.execute({
        sql: "INSERT INTO charges(run_seq, epoch, amounts, unknown, unknown_dims, note, at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq",
        args: [seq, epoch, JSON.stringify(amounts), unknown === false || (Array.isArray(unknown) && unknown.length === 0) ? 0 : 1, Array.isArray(unknown) ? JSON.stringify(unknown) : null, note, at],
      });
      const status = await this.budget(seq, json<BudgetLimits>(run.budget_limits, {}), tx, String(run.created_at));
      return { ...status, charge_id: CHARGE_ID.format(Number(rs.rows[0]!.seq)) };
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
    const at = this.now();
    return this.d.db.write(async (tx) => {
      await fence(tx, seq, epoch, at);
      const run = await this.runRow(tx, seq);
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
      return this.budget(seq, json<BudgetLimits>(run.budget_limits, {}), tx, String(run.created_at));
    });
  }

  async budgetOf(runId: string): Promise<BudgetStatus> {
    const seq = seqOf(RUN_ID, runId, "run");
    const run = await this.runRow(null, seq);
    return this.budget(seq, json<BudgetLimits>(run.budget_limits, {}), null, String(run.created_at));
  }
}
