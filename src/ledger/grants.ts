/**
 * The host's decision on a requested run (issue 23, mirroring write leases): a run or a
 * continuation the agent side asks for waits as `requested` and begins no effect until the host
 * grants it, as asked or narrowed (never wider: src/core/run_rules/grant.ts), or refuses it with a
 * reason. Both are recorded on the run (`grant`: who asked, what, who decided, when, why) and as
 * events. The run's clock (wall time) starts when it is granted.
 */
import type { BudgetLimits } from "../core/run_rules/budget.ts";
import { describeWider, GRANT_LISTS, type Permissions, widerBudget, widerPermissions } from "../core/run_rules/grant.ts";
import { ConflictError, UnauthorizedError } from "../core/errors.ts";
import { addEvent, json, type LedgerDeps, now, RUN_ID, seqOf } from "./common.ts";
import { type GrantRecord, type Run, readRun, runRow, shownStatus } from "./run_record.ts";

export interface GrantInput {
  /** Narrower lists (omitted: as asked). */
  narrow: Partial<Permissions>;
  /** The budget granted (omitted: as asked); never wider than the request's. */
  budget?: BudgetLimits;
  by: string;
  reason: string;
}

/** The host's grants and refusals of the ledger's requested runs. */
export class Grants {
  constructor(private readonly d: LedgerDeps) {}

  async #decide(runId: string, decide: (record: GrantRecord) => { set: Record<string, unknown>; record: GrantRecord; event: string; detail: Record<string, unknown> }): Promise<Run> {
    const seq = seqOf(RUN_ID, runId, "run");
    const at = now(this.d);
    await this.d.db.write(async (tx) => {
      const run = await runRow(this.d, tx, seq);
      if (shownStatus(run) !== "requested") {
        throw new ConflictError(`Run ${runId} is ${shownStatus(run)}, not a request waiting for the host; only a requested run is granted or refused`, {
          reason: "run_status",
          run_id: runId,
          status: shownStatus(run),
        });
      }
      const record = json<GrantRecord>(run.grant_record, null as unknown as GrantRecord);
      const d = decide(record);
      const cols = Object.keys(d.set);
      const rs = await tx.execute({
        sql: `UPDATE runs SET ${cols.map((c) => `${c} = ?`).join(", ")}, grant_record = ?, updated_at = ? WHERE seq = ? AND grant_state = 'requested' AND status = 'parked'`,
        args: [...cols.map((c) => d.set[c] as string | number), JSON.stringify(d.record), at, seq],
      });
      if (rs.rowsAffected !== 1) throw new ConflictError(`Run ${runId} changed underneath; read it with run.get and decide again`, { reason: "cas", run_id: runId });
      await addEvent(tx, seq, Number(run.epoch), d.event, d.detail, at);
    });
    return await readRun(this.d, seq);
  }

  /** Grant a requested run as asked or narrowed; anything wider than the request is refused (`unauthorized`, naming it). */
  grant(runId: string, input: GrantInput): Promise<Run> {
    const at = now(this.d);
    return this.#decide(runId, (record) => {
      const asked = record.request;
      const authorization = { ...asked.authorization };
      for (const k of GRANT_LISTS) if (input.narrow[k] !== undefined) authorization[k] = [...input.narrow[k]!];
      const budget = input.budget ?? asked.budget;
      const wider = [...widerPermissions(asked.authorization, authorization), ...widerBudget(asked.budget, budget)];
      if (wider.length) {
        throw new UnauthorizedError(`Refused: a grant may give what run ${runId} asked for or less, never more: ${describeWider(wider)}`, {
          reason: "wider_than_request",
          run_id: runId,
          wider,
          requested: asked,
        });
      }
      const narrowed = wider.length === 0 && (JSON.stringify(authorization) !== JSON.stringify(asked.authorization) || JSON.stringify(budget) !== JSON.stringify(asked.budget));
      return {
        set: { status: "running", grant_state: "granted", authorization: JSON.stringify(authorization), budget_limits: JSON.stringify(budget), created_at: at, beat_at: at },
        record: { ...record, state: "granted", decided_by: input.by, decided_at: at, reason: input.reason, standing: null },
        event: "granted",
        detail: { by: input.by, reason: input.reason, narrowed },
      };
    });
  }

  /** Refuse a requested run: it ends (shown `refused`) and never begins an effect. */
  refuse(runId: string, by: string, reason: string): Promise<Run> {
    const at = now(this.d);
    return this.#decide(runId, (record) => ({
      set: { status: "cancelled", grant_state: "refused", ended_at: at },
      record: { ...record, state: "refused", decided_by: by, decided_at: at, reason, standing: null },
      event: "refused",
      detail: { by, reason },
    }));
  }
}
