/**
 * A run's lifecycle once it has begun (seed 003, sections 6 and 8): park it (waiting for something,
 * or for the user: then only the host wakes it, with the user's answer), wake it, yield its current
 * request so the next adopts an adjustment, cancel it, finish it with its outcome and open gaps;
 * along the way, checkpoint what is settled and what is open (recovery reads the newest).
 * Each step is fenced by the run's epoch (the host may wake and cancel without one) and recorded
 * as an event.
 */
import type { Tx as Transaction } from "../db/database.ts";
import { ConflictError, UnauthorizedError } from "../core/errors.ts";
import { addEvent, fence, json, type LedgerDeps, now, type Row, RUN_ID, seqOf, str } from "./common.ts";
import { openGapsIn } from "./gaps.ts";
import { type HostAnswer, requireStatus, readRun, type Run, runRow, type RunStatus } from "./run_record.ts";

/** A run's own working summary: what is settled, what is open, the methods that failed, the next step. */
export interface RunCheckpoint {
  epoch: number;
  settled: string[];
  open: string[];
  /** Methods tried that did not work (so a successor does not try them again). */
  failed: string[];
  next_step: string;
  note: string;
  at: string;
}

/** What a run checkpoint records, beyond its run and epoch. */
export type RunCheckpointInput = Omit<RunCheckpoint, "epoch" | "at">;

/** A run's newest checkpoint (null before its first). */
export async function latestCheckpoint(d: LedgerDeps, runSeq: number): Promise<RunCheckpoint | null> {
  const rs = await d.db.execute({ sql: "SELECT * FROM run_checkpoints WHERE run_seq = ? ORDER BY seq DESC LIMIT 1", args: [runSeq] });
  const r = rs.rows[0];
  return r
    ? { epoch: Number(r.epoch), settled: json<string[]>(r.settled, []), open: json<string[]>(r.open, []), failed: json<string[]>(r.failed, []), next_step: String(r.next_step ?? ""), note: String(r.note), at: String(r.at) }
    : null;
}

/** The lifecycle steps of the ledger's runs. */
export class Lifecycle {
  constructor(private readonly d: LedgerDeps) {}

  /** A fenced change of a run's lifecycle, with its cause recorded as an event. */
  async #step(
    runId: string,
    epoch: number | null,
    allowed: RunStatus[],
    doing: string,
    set: { status?: RunStatus; parked_on?: string | null; parked_for_user?: boolean; wake_at?: string | null; beat?: boolean; answer?: string; outcome?: string; gaps?: string[]; ended?: boolean },
    event: string,
    detail: Record<string, unknown>,
    check?: (run: Row, tx: Transaction) => void | Promise<void>,
    then?: (tx: Transaction, run: Row, at: string) => Promise<void>,
  ): Promise<Run> {
    const seq = seqOf(RUN_ID, runId, "run");
    const at = now(this.d);
    await this.d.db.write(async (tx) => {
      if (epoch !== null) await fence(tx, seq, epoch, at);
      const run = await runRow(this.d, tx, seq);
      requireStatus(run, allowed, doing);
      await check?.(run, tx);
      await tx.execute({
        sql: `UPDATE runs SET status = COALESCE(?, status), parked_on = ?, parked_for_user = COALESCE(?, parked_for_user), wake_at = ?, beat_at = COALESCE(?, beat_at), answer = COALESCE(?, answer),
              outcome = COALESCE(?, outcome), gaps = COALESCE(?, gaps),
              ended_at = CASE WHEN ? THEN ? ELSE ended_at END, updated_at = ? WHERE seq = ?`,
        args: [
          set.status ?? null,
          set.parked_on === undefined ? str(run.parked_on) : set.parked_on,
          set.parked_for_user === undefined ? null : set.parked_for_user ? 1 : 0,
          set.wake_at === undefined ? str(run.wake_at) : set.wake_at,
          set.beat ? at : null,
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
      await then?.(tx, run, at);
    });
    return await readRun(this.d, seq);
  }

  /**
   * Park a running run; parked `forUser`, only the host wakes it, with its answer. With `wakeAt`, a
   * running longrun process wakes it at that time (waker.ts), once, also after a restart.
   */
  park(runId: string, epoch: number, waitingFor: string, forUser = false, wakeAt: string | null = null): Promise<Run> {
    return this.#step(runId, epoch, ["running"], "park", { status: "parked", parked_on: waitingFor, parked_for_user: forUser, wake_at: wakeAt }, "parked", { waiting_for: waitingFor, for_user: forUser, wake_at: wakeAt });
  }

  /**
   * Wake a parked run. A run parked for the user is the host's to wake (`by` a host), and the
   * host's answer is delivered to it (kept on the run: run.get and run.claim return it).
   */
  wake(runId: string, epoch: number | null, reason: string, by: { side: "host" | "agent"; name: string }, answer: { text: string; data?: Record<string, unknown> } | null): Promise<Run> {
    const at = now(this.d);
    const stored = answer ? JSON.stringify({ text: answer.text, data: answer.data ?? null, by: by.name, at } satisfies HostAnswer) : undefined;
    return this.#step(runId, epoch, ["parked"], "wake", { status: "running", parked_on: null, parked_for_user: false, wake_at: null, beat: true, answer: stored }, "woken", { reason, by: by.name, answer: answer ? { text: answer.text, data: answer.data ?? null } : null }, (run) => {
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
    return this.#step(runId, epoch, ["running"], "yield a request", {}, "yielded", { reason, request_id: requestId, adjustment_id: adjustmentId });
  }

  /** The user stops the whole run. The host may cancel without an epoch; an agent must carry its epoch. */
  cancel(runId: string, epoch: number | null, reason: string, by: string): Promise<Run> {
    return this.#step(runId, epoch, ["running", "parked", "requested"], "be cancelled", { status: "cancelled", parked_on: null, wake_at: null, ended: true }, "cancelled", { reason, by }, undefined, async (tx, run, at) => {
      // the stop reaches the run's open child runs (and theirs): each cancelled, with why
      const open = await tx.execute({
        sql: `WITH RECURSIVE down(seq) AS (SELECT seq FROM runs WHERE child_of = ? UNION ALL SELECT r.seq FROM runs r JOIN down ON r.child_of = down.seq)
              UPDATE runs SET status = 'cancelled', parked_on = NULL, wake_at = NULL, ended_at = ?, updated_at = ?
              WHERE seq IN (SELECT seq FROM down) AND status IN ('running', 'parked') RETURNING seq, epoch`,
        args: [Number(run.seq), at, at],
      });
      for (const c of open.rows) await addEvent(tx, Number(c.seq), Number(c.epoch), "cancelled", { reason: `parent run ${runId} was cancelled: ${reason}`, by }, at);
    });
  }

  /** The end of a run: its outcome and the gaps that remain open. A normal end never closes them. */
  finish(runId: string, epoch: number, outcome: string, gaps: string[], status: "finished" | "failed"): Promise<Run> {
    return this.#step(runId, epoch, ["running", "parked"], "finish", { status, outcome, gaps, parked_on: null, wake_at: null, ended: true }, status, { outcome, gaps }, async (run, tx) => {
      const open = await tx.execute({ sql: "SELECT seq FROM runs WHERE child_of = ? AND status IN ('running', 'parked') ORDER BY seq", args: [Number(run.seq)] });
      if (open.rows.length) {
        const ids = open.rows.map((r) => RUN_ID.format(Number(r.seq)));
        throw new ConflictError(`Refused: run ${runId} has open child runs (${ids.join(", ")}); finish or cancel them first, or cancel this run (which cancels them)`, {
          reason: "children_open",
          run_id: runId,
          children: ids,
        });
      }
      // the gaps it leaves are the task's, with ids (src/ledger/gaps.ts): the same text as one still open is that one
      await openGapsIn(tx, String(run.task_id), gaps, { run_seq: Number(run.seq), by: `run:${runId}`, at: now(this.d) });
    });
  }

  /** A run's own working summary: what is settled, open, failed and next (recovery reads the newest). */
  async checkpoint(runId: string, epoch: number, c: RunCheckpointInput): Promise<RunCheckpoint> {
    const seq = seqOf(RUN_ID, runId, "run");
    const at = now(this.d);
    await this.d.db.write(async (tx) => {
      await fence(tx, seq, epoch, at);
      const run = await runRow(this.d, tx, seq);
      requireStatus(run, ["running", "parked"], "take a checkpoint");
      await tx.execute({
        sql: "INSERT INTO run_checkpoints(run_seq, epoch, settled, open, failed, next_step, note, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        args: [seq, epoch, JSON.stringify(c.settled), JSON.stringify(c.open), JSON.stringify(c.failed), c.next_step, c.note, at],
      });
      await addEvent(tx, seq, epoch, "checkpoint", { settled: c.settled.length, open: c.open.length, failed: c.failed.length }, at);
    });
    return (await latestCheckpoint(this.d, seq))!;
  }
}
