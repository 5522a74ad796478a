/**
 * Tool effects and spending of a run (seed 003, sections 5 and 8). A receipt is durable before
 * its effect runs and settled after; a key that already completed returns the recorded result
 * instead of a new effect; an unknown one is refused until reconciled. Charges may be unknown and
 * count as unknown, never zero; at a limit, new effects and charges are refused.
 */
import type { Tx as Transaction } from "../memory/db.ts";
import { settleAllowed, beginVerdict } from "../core/ledger/receipts.ts";
import type { Amounts, BudgetLimits, BudgetStatus } from "../core/ledger/budget.ts";
import { BudgetExhaustedError, ConflictError, NotFoundError, StaleEpochError } from "../core/errors.ts";
import { addEvent, fence, json, RECEIPT_ID, RUN_ID, seqOf } from "./common.ts";
import { type Receipt, RunLedger, toReceipt } from "./runs.ts";

export interface BeginInput {
  run_id: string;
  epoch: number;
  tool: string;
  idempotency_key: string;
  args_digest: string;
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

export class EffectLedger extends RunLedger {
  #exhausted(runId: string, status: BudgetStatus, what: string): BudgetExhaustedError {
    return new BudgetExhaustedError(
      `Refused: run ${runId} has reached its budget (${status.exhausted_by.join(", ")}), so no new ${what}; ` +
        `saved artifacts stay readable and may still be saved; continue in a new run with its own budget if the user wants more`,
      { run_id: runId, exhausted_by: status.exhausted_by, effective: status.effective, limits: status.limits },
    );
  }

  /** Records an effect before it happens (committed before this returns), or replays a completed one. */
  async begin(input: BeginInput): Promise<{ receipt: Receipt; replayed: boolean }> {
    const seq = seqOf(RUN_ID, input.run_id, "run");
    const at = this.now();
    const out = await this.d.db.write(async (tx) => {
      await fence(tx, seq, input.epoch, at);
      const run = await this.runRow(tx, seq);
      const prev = await tx.execute({
        sql: "SELECT * FROM receipts WHERE run_seq = ? AND idempotency_key = ? ORDER BY attempt DESC LIMIT 1",
        args: [seq, input.idempotency_key],
      });
      const existing = prev.rows[0] ? toReceipt(prev.rows[0]) : null;
      const verdict = beginVerdict(existing, input.args_digest);
      if (verdict.kind === "replay") return { seq: Number(prev.rows[0]!.seq), replayed: true };
      if (verdict.kind === "refuse") {
        const id = existing!.receipt_id;
        const why = {
          unknown: `its earlier effect ${id} may have happened (status unknown); reconcile it with receipt.settle and evidence before anything is re-run`,
          in_flight: `receipt ${id} for it is begun and not settled yet; settle it first`,
          args_differ: `receipt ${id} used the same key with different arguments; use a new idempotency key for a different effect`,
        }[verdict.reason];
        throw new ConflictError(`Refused: idempotency key ${JSON.stringify(input.idempotency_key)}: ${why}`, {
          reason: `receipt_${verdict.reason}`,
          receipt_id: id,
          status: existing!.status,
        });
      }
      this.requireStatus(run, ["running"], "begin an effect");
      this.authorizeTool(run, input.tool);
      const status = await this.budget(seq, json<BudgetLimits>(run.budget_limits, {}), tx);
      if (status.exhausted) throw this.#exhausted(input.run_id, status, "effects");
      const ins = await tx.execute({
        sql: `INSERT INTO receipts(run_seq, idempotency_key, attempt, tool, args_digest, status, epoch, begun_at)
              VALUES (?, ?, ?, ?, ?, 'begun', ?, ?) RETURNING seq`,
        args: [seq, input.idempotency_key, verdict.attempt, input.tool, input.args_digest, input.epoch, at],
      });
      const receiptSeq = Number(ins.rows[0]!.seq);
      await tx.execute({
        sql: "INSERT INTO charges(run_seq, epoch, amounts, unknown, note, receipt_seq, at) VALUES (?, ?, ?, 0, ?, ?, ?)",
        args: [seq, input.epoch, JSON.stringify({ tool_calls: 1 }), `tool call ${input.tool}`, receiptSeq, at],
      });
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
        if (r.run_id !== input.run_id) throw new NotFoundError("receipt", input.receipt_id, ` in run ${input.run_id}`);
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

  /** Records spending. Refused (nothing recorded) once the run is at a limit. */
  async charge(runId: string, epoch: number, amounts: Amounts, unknown: boolean, note: string): Promise<BudgetStatus> {
    const seq = seqOf(RUN_ID, runId, "run");
    const at = this.now();
    return this.d.db.write(async (tx) => {
      await fence(tx, seq, epoch, at);
      const run = await this.runRow(tx, seq);
      const limits = json<BudgetLimits>(run.budget_limits, {});
      const before = await this.budget(seq, limits, tx);
      if (before.exhausted) throw this.#exhausted(runId, before, "charges");
      await tx.execute({
        sql: "INSERT INTO charges(run_seq, epoch, amounts, unknown, note, at) VALUES (?, ?, ?, ?, ?, ?)",
        args: [seq, epoch, JSON.stringify(amounts), unknown ? 1 : 0, note, at],
      });
      return this.budget(seq, limits, tx);
    });
  }

  async budgetOf(runId: string): Promise<BudgetStatus> {
    const seq = seqOf(RUN_ID, runId, "run");
    const run = await this.runRow(null, seq);
    return this.budget(seq, json<BudgetLimits>(run.budget_limits, {}));
  }
}
