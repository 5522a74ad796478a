/**
 * What the user asked along the way (seed 003, section 4): adjustments, the user's words verbatim,
 * then `handed` (which request carried them) and `satisfied` (which artifact version addresses
 * them), three facts with three timestamps; every handoff and satisfaction is kept, in order.
 */
import { ConflictError, NotFoundError } from "../core/errors.ts";
import { ADJUSTMENT_ID, fence, type LedgerDeps, now, RECEIPT_ID, type Row, RUN_ID, seqOf, str } from "./common.ts";
import type { Artifacts } from "./artifacts.ts";
import { runTask } from "./run_record.ts";

export interface AdjustmentEvent {
  kind: "received" | "handed" | "satisfied";
  run_id: string | null;
  request_id: string | null;
  artifact: string | null;
  version: number | null;
  at: string;
}

export interface Adjustment {
  adjustment_id: string;
  task_id: string;
  run_id: string | null;
  text: string;
  received_at: string;
  /** The latest handoff and satisfaction; `history` keeps every one, in order. */
  handed: { request_id: string; run_id: string; at: string } | null;
  satisfied: { artifact: string; version: number; at: string } | null;
  history: AdjustmentEvent[];
}

function toAdjustment(r: Row): Adjustment {
  return {
    adjustment_id: ADJUSTMENT_ID.format(Number(r.seq)),
    task_id: String(r.task_id),
    run_id: r.run_seq === null ? null : RUN_ID.format(Number(r.run_seq)),
    text: String(r.text),
    received_at: String(r.received_at),
    handed: r.handed_at === null ? null : { request_id: String(r.handed_request_id), run_id: RUN_ID.format(Number(r.handed_run_seq)), at: String(r.handed_at) },
    satisfied: r.satisfied_at === null ? null : { artifact: String(r.satisfied_artifact), version: Number(r.satisfied_version), at: String(r.satisfied_at) },
    history: [],
  };
}

/** The adjustments of the ledger's tasks. */
export class Adjustments {
  constructor(private readonly d: LedgerDeps, private readonly artifacts: Artifacts) {}

  /** Host side: the user's words, stored exactly as given. */
  async receive(taskId: string, runId: string | null, text: string): Promise<Adjustment> {
    const runSeq = runId ? (await runTask(this.d, runId)).seq : null;
    const at = now(this.d);
    const seq = await this.d.db.write(async (tx) => {
      // the newest receipt and artifact version at this moment: only later ones can have answered it
      const rs = await tx.execute({
        sql: `INSERT INTO adjustments(task_id, run_seq, text, received_at, receipts_before, artifacts_before)
              VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) FROM receipts), (SELECT COALESCE(MAX(rowid), 0) FROM artifacts)) RETURNING seq`,
        args: [taskId, runSeq, text, at],
      });
      const seq = Number(rs.rows[0]!.seq);
      await tx.execute({ sql: "INSERT INTO adjustment_events(adjustment_seq, kind, run_seq, at) VALUES (?, 'received', ?, ?)", args: [seq, runSeq, at] });
      return seq;
    });
    return this.#adjustment(ADJUSTMENT_ID.format(seq));
  }

  async #adjustment(id: string): Promise<Adjustment> {
    const seq = seqOf(ADJUSTMENT_ID, id, "adjustment");
    const rs = await this.d.db.execute({ sql: "SELECT * FROM adjustments WHERE seq = ?", args: [seq] });
    if (!rs.rows.length) throw new NotFoundError("adjustment", id);
    return (await this.#withHistory([toAdjustment(rs.rows[0]!)]))[0]!;
  }

  async #withHistory(adjs: Adjustment[]): Promise<Adjustment[]> {
    for (const a of adjs) {
      const ev = await this.d.db.execute({ sql: "SELECT * FROM adjustment_events WHERE adjustment_seq = ? ORDER BY seq", args: [seqOf(ADJUSTMENT_ID, a.adjustment_id, "adjustment")] });
      a.history = ev.rows.map((e) => ({
        kind: String(e.kind) as AdjustmentEvent["kind"],
        run_id: e.run_seq === null ? null : RUN_ID.format(Number(e.run_seq)),
        request_id: str(e.request_id),
        artifact: str(e.artifact),
        version: e.version === null ? null : Number(e.version),
        at: String(e.at),
      }));
    }
    return adjs;
  }

  /**
   * A request really carried the adjustment: which one, in which run (fenced by the run's epoch).
   * The request must be recorded: a receipt of that run (record each model request with
   * receipt.begin), so a handoff is evidence, not a free string. Every handoff is appended.
   */
  async handoff(id: string, runId: string, epoch: number, requestId: string): Promise<Adjustment> {
    const adj = await this.#adjustment(id);
    const run = await runTask(this.d, runId);
    if (run.task_id !== adj.task_id) {
      throw new ConflictError(`Adjustment ${id} belongs to task ${adj.task_id}, not to run ${runId}'s task ${run.task_id}`, { reason: "other_task" });
    }
    const receiptSeq = RECEIPT_ID.parse(requestId);
    const at = now(this.d);
    await this.d.db.write(async (tx) => {
      await fence(tx, run.seq, epoch, at);
      const rc = receiptSeq === null ? null : (await tx.execute({ sql: "SELECT begun_at FROM receipts WHERE seq = ? AND run_seq = ?", args: [receiptSeq, run.seq] })).rows[0];
      if (!rc) {
        throw new NotFoundError("request", requestId, ` among run ${runId}'s receipts; record the model request with receipt.begin first and hand the adjustment to that receipt (RC_…)`);
      }
      const before = (await tx.execute({ sql: "SELECT receipts_before FROM adjustments WHERE seq = ?", args: [seqOf(ADJUSTMENT_ID, id, "adjustment")] })).rows[0]?.receipts_before;
      if (before !== null && before !== undefined && receiptSeq! <= Number(before)) {
        throw new ConflictError(`Refused: request ${requestId} began before adjustment ${id} was received (${adj.received_at}); it cannot have carried it: hand it to a later request`, {
          reason: "request_before_adjustment",
          request_id: requestId,
        });
      }
      await tx.execute({
        sql: "UPDATE adjustments SET handed_request_id = ?, handed_run_seq = ?, handed_at = ? WHERE seq = ?",
        args: [requestId, run.seq, at, seqOf(ADJUSTMENT_ID, id, "adjustment")],
      });
      await tx.execute({
        sql: "INSERT INTO adjustment_events(adjustment_seq, kind, run_seq, request_id, at) VALUES (?, 'handed', ?, ?, ?)",
        args: [seqOf(ADJUSTMENT_ID, id, "adjustment"), run.seq, requestId, at],
      });
    });
    return this.#adjustment(id);
  }

  /**
   * An artifact version addresses the adjustment. It must exist, the adjustment must have been
   * handed first, and the version must have been made after the adjustment was received (a report
   * written before cannot address it). Every satisfaction is appended.
   */
  async satisfy(id: string, artifact: string, version: number): Promise<Adjustment> {
    const adj = await this.#adjustment(id);
    if (!adj.handed) {
      throw new ConflictError(`Adjustment ${id} was never handed to a request (adjust.handoff), so nothing can have addressed it yet`, { reason: "not_handed" });
    }
    const v = await this.artifacts.version(adj.task_id, artifact, version);
    const order = await this.d.db.execute({
      sql: "SELECT a.artifacts_before AS before, (SELECT rowid FROM artifacts WHERE task_id = ? AND name = ? AND version = ?) AS at FROM adjustments a WHERE a.seq = ?",
      args: [adj.task_id, artifact, version, seqOf(ADJUSTMENT_ID, id, "adjustment")],
    });
    const o = order.rows[0]!;
    const madeBefore = o.before === null ? v.created_at <= adj.received_at : Number(o.at) <= Number(o.before);
    if (madeBefore) {
      throw new ConflictError(
        `Refused: ${artifact}@${version} (created ${v.created_at}) was saved before adjustment ${id} was received (${adj.received_at}), so it cannot address it; ` +
          `save a new version that addresses it, then satisfy with that one`,
        { reason: "version_before_adjustment", artifact, version, created_at: v.created_at, received_at: adj.received_at },
      );
    }
    const at = now(this.d);
    await this.d.db.write(async (tx) => {
      await tx.execute({
        sql: "UPDATE adjustments SET satisfied_artifact = ?, satisfied_version = ?, satisfied_at = ? WHERE seq = ?",
        args: [artifact, version, at, seqOf(ADJUSTMENT_ID, id, "adjustment")],
      });
      await tx.execute({
        sql: "INSERT INTO adjustment_events(adjustment_seq, kind, artifact, version, at) VALUES (?, 'satisfied', ?, ?, ?)",
        args: [seqOf(ADJUSTMENT_ID, id, "adjustment"), artifact, version, at],
      });
    });
    return this.#adjustment(id);
  }

  async adjustments(taskId: string): Promise<Adjustment[]> {
    const rs = await this.d.db.execute({ sql: "SELECT * FROM adjustments WHERE task_id = ? ORDER BY seq", args: [taskId] });
    return this.#withHistory(rs.rows.map(toAdjustment));
  }
}
