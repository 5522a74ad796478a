/**
 * A run's effects (seed 003, section 5). A receipt is durable before its effect runs and settled
 * after; a key that already completed returns the recorded result instead of a new effect; an
 * unknown one is refused until reconciled with evidence. An effect begins only in a granted,
 * running run, within its authorization and its budget, and each kind counts where it belongs.
 */
import type { Tx as Transaction } from "../db/database.ts";
import type { BudgetLimits } from "../core/run_rules/budget.ts";
import { beginVerdict, kindCharge, type ReceiptKind, settleAllowed } from "../core/run_rules/receipts.ts";
import { ConflictError, NotFoundError, StaleEpochError, UnauthorizedError } from "../core/errors.ts";
import { addEvent, EFFECT_LINEAGE, fence, json, type LedgerDeps, now, RECEIPT_ID, type Row, RUN_ID, seqOf, str } from "./common.ts";
import { type Budgets, noEffects, type OpenCharge } from "./budget.ts";
import { authorizationOf, requireStatus, runRow, shownStatus } from "./run_record.ts";


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
  /** For a model request: the host's digest of what it sent (src/ledger/request_chain.ts); null when none was recorded. */
  sent: SentDigest | null;
}

/** What the host says a model request sent: sha256 hex digests of the whole request, of the question and of each constraint as sent. */
export interface SentDigest {
  digest: string;
  question?: string;
  constraints?: string[];
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
    sent: json<SentDigest | null>(r.sent, null),
  };
}

/** An open item of a run: an unknown effect carried from its chain, or an unknown charge of an earlier run of it. */
export type OpenItem = Receipt | OpenCharge;

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
  /** For a model request: the digest of what was sent (its question and constraints among it). */
  sent?: SentDigest;
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

/** A run the host has not granted begins no effect: the host grants it (run.grant) or refuses it. */
function requireGranted(run: Row): void {
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
function authorizeEffect(run: Row, effect: { tool: string; source?: string; send_to?: string }): void {
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

/** The receipts of the ledger's runs, and what a run carries as open items. */
export class Receipts {
  constructor(private readonly d: LedgerDeps, private readonly budgets: Budgets) {}

  /**
   * An unsettled receipt (unknown, or begun and never settled) for the key in another run of the
   * same work (EFFECT_LINEAGE: an earlier run of the chain, the parent of a child run, a sibling, a
   * child…): such an effect may have happened, so no run of that work begins it again until it is
   * reconciled with evidence. (A completed one in an
   * earlier run is not reused as a result: a continuation's effects are its own.)
   */
  async #unsettledInAncestry(tx: Transaction, runSeq: number, key: string): Promise<Row | null> {
    const rs = await tx.execute({
      sql: `${EFFECT_LINEAGE}
            SELECT rc.* FROM receipts rc JOIN lineage a ON rc.run_seq = a.seq
            WHERE rc.idempotency_key = ? AND rc.status IN ('unknown', 'begun') ORDER BY a.depth ASC, rc.attempt DESC LIMIT 1`,
      args: [runSeq, runSeq, key],
    });
    return rs.rows[0] ?? null;
  }

  /** Records an effect before it happens (committed before this returns), or replays a completed one. */
  async begin(input: BeginInput): Promise<{ receipt: Receipt; replayed: boolean }> {
    const seq = seqOf(RUN_ID, input.run_id, "run");
    const at = now(this.d);
    const out = await this.d.db.write(async (tx) => {
      await fence(tx, seq, input.epoch, at);
      const run = await runRow(this.d, tx, seq);
      requireGranted(run);
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
        const where = inAncestor ? ` in run ${existing!.run_id} of the same work (an earlier run of its chain, or a parent, sibling or child run)` : "";
        const how = inAncestor ? "on that run, or from a continuation that carries it as an open item" : "from this run";
        const why = {
          unknown: `its earlier effect ${id}${where} may have happened (status unknown); reconcile it with receipt.settle and evidence (${how}) before anything is re-run`,
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
      requireStatus(run, ["running"], "begin an effect");
      if (kind === "child_run") {
        // it counts in this run's budget nowhere (the child's own charges roll up), so it must name a real child of this run
        const child = /^R_\d{1,15}$/.test(input.tool) ? await tx.execute({ sql: "SELECT 1 FROM runs WHERE seq = ? AND child_of = ?", args: [seqOf(RUN_ID, input.tool, "run"), seq] }) : null;
        if (!child?.rows.length) {
          throw new ConflictError(
            `Refused: a child_run receipt names a child of run ${input.run_id} as its tool (start one with run.child, then give its run id, e.g. "R_0002"); ${JSON.stringify(input.tool)} is not one. Other effects are tool_call or model_request`,
            { reason: "not_a_child_run", run_id: input.run_id, tool: input.tool },
          );
        }
      } else authorizeEffect(run, input);
      const status = await this.budgets.status(seq, json<BudgetLimits>(run.budget_limits, {}), tx, String(run.created_at));
      if (!status.effects_allowed) throw noEffects(input.run_id, status);
      const attempt = verdict.attempt;
      const ins = await tx.execute({
        sql: `INSERT INTO receipts(run_seq, idempotency_key, attempt, tool, kind, args_digest, status, epoch, begun_at, sent)
              VALUES (?, ?, ?, ?, ?, ?, 'begun', ?, ?, ?) RETURNING seq`,
        args: [seq, input.idempotency_key, attempt, input.tool, kind, input.args_digest, input.epoch, at, input.sent ? JSON.stringify(input.sent) : null],
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
    const at = now(this.d);
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
    await runRow(this.d, null, seq);
    const rs = await this.d.db.execute({
      sql: `SELECT * FROM receipts WHERE run_seq = ? ${status ? "AND status = ?" : ""} ORDER BY seq`,
      args: status ? [seq, status] : [seq],
    });
    return rs.rows.map(toReceipt);
  }

  /** The unknown effects carried into the run, then the unreconciled unknown charges of earlier runs of its chain. */
  async openItems(runSeq: number, tx: Transaction | null = null): Promise<OpenItem[]> {
    const rs = await (tx ?? this.d.db).execute({
      sql: `SELECT r.* FROM open_items o JOIN receipts r ON r.seq = o.receipt_seq
            WHERE o.run_seq = ? AND r.status = 'unknown' ORDER BY r.seq`,
      args: [runSeq],
    });
    return [...rs.rows.map(toReceipt), ...(await this.budgets.inheritedCharges(runSeq, tx))];
  }
}
