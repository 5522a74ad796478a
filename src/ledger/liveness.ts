/**
 * Owner liveness of the ledger's runs (issue 28): the owner's heartbeat, fenced by its epoch, and
 * the `stale_owner` event, recorded once per missed beat by whoever notices first (a running
 * process's timer, waker.ts, or the owner's own late beat). Whether a run is stale is never read
 * from these rows alone: every view computes it from the clock (core/run_rules/liveness.ts).
 */
import type { Tx as Transaction } from "../db/database.ts";
import { ConflictError, StaleEpochError } from "../core/errors.ts";
import { heartbeatStop, type HeartbeatStop, staleAt } from "../core/run_rules/liveness.ts";
import type { BudgetLimits } from "../core/run_rules/budget.ts";
import { addEvent, json, type LedgerDeps, type Row, RUN_ID, seqOf, str } from "./common.ts";
import type { Budgets } from "./budget.ts";
import { readRun, type Run, runRow, shownStatus } from "./run_record.ts";

/** What a heartbeat answers: the run as it is now, and what the owner must stop for (null: go on). */
export interface HeartbeatAnswer {
  run: Run;
  stop: HeartbeatStop;
}

/**
 * Records a `stale_owner` event for a running run whose owner let its TTL pass at `at`, once per
 * missed beat (a compare-and-set on the beat it is for). True when this call recorded it.
 */
export async function noteStale(tx: Transaction, r: Row, at: Date): Promise<boolean> {
  const ttl = r.owner_ttl_seconds === null || r.owner_ttl_seconds === undefined ? null : Number(r.owner_ttl_seconds);
  const beat = str(r.beat_at);
  const since = staleAt(ttl, beat);
  if (since === null || at.getTime() < since || String(r.status) !== "running" || str(r.stale_noted_beat) === beat) return false;
  const rs = await tx.execute({
    sql: "UPDATE runs SET stale_noted_beat = beat_at WHERE seq = ? AND status = 'running' AND beat_at = ? AND (stale_noted_beat IS NULL OR stale_noted_beat != beat_at)",
    args: [Number(r.seq), beat],
  });
  if (rs.rowsAffected !== 1) return false;
  await addEvent(tx, Number(r.seq), Number(r.epoch), "stale_owner", { owner: String(r.owner), owner_ttl_seconds: ttl, last_beat_at: beat, stale_since: new Date(since).toISOString() }, at.toISOString());
  return true;
}

/** The owner's side of liveness: its heartbeat. */
export class Liveness {
  constructor(private readonly d: LedgerDeps, private readonly budgets: Budgets) {}

  /**
   * The owner's beat at `epoch`: recorded when it is the run's epoch; an older epoch records
   * nothing and is told `superseded`. The answer says what the owner must know now: the run was
   * cancelled, its time is up (`deadline`), another limit is reached (`budget_exhausted`).
   */
  async heartbeat(runId: string, epoch: number): Promise<HeartbeatAnswer> {
    const seq = seqOf(RUN_ID, runId, "run");
    const clock = this.d.clock.now();
    const at = clock.toISOString();
    const stop = await this.d.db.write(async (tx) => {
      const run = await runRow(this.d, tx, seq);
      const current = Number(run.epoch);
      if (epoch > current) throw new StaleEpochError(runId, epoch, current);
      const status = shownStatus(run);
      if (epoch === current && !["running", "parked", "requested", "cancelled"].includes(status)) {
        throw new ConflictError(`Run ${runId} is ${status}; it has no owner to beat for (heartbeats are for a running, parked or requested run)`, { reason: "run_status", run_id: runId, status });
      }
      const budget = await this.budgets.status(seq, json<BudgetLimits>(run.budget_limits, {}), tx, String(run.created_at));
      const stop = heartbeatStop(epoch, current, status, budget);
      if (stop === "superseded" || status === "cancelled") return stop;
      // a beat after the TTL passed: the staleness it ends is recorded first
      await noteStale(tx, run, clock);
      await tx.execute({ sql: "UPDATE runs SET beat_at = ?, updated_at = ? WHERE seq = ? AND epoch = ?", args: [at, at, seq, epoch] });
      return stop;
    });
    return { run: await readRun(this.d, seq), stop };
  }
}
