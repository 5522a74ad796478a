/**
 * A run as stored and as shown (seed 003, section 1): its authorization, status, grant record and
 * the host's answer, read from its `runs` row; and the checks every step on a run starts from
 * (the run exists, its status allows the step).
 */
import type { Tx as Transaction } from "../db/database.ts";
import type { BudgetLimits } from "../core/run_rules/budget.ts";
import { ConflictError, NotFoundError } from "../core/errors.ts";
import type { Permissions } from "../core/run_rules/grant.ts";
import { type Liveness, livenessOf } from "../core/run_rules/liveness.ts";
import { json, type LedgerDeps, type Row, RUN_ID, seqOf, str } from "./common.ts";

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

export interface Run extends Liveness {
  run_id: string;
  task_id: string;
  parent_run_id: string | null;
  /** The run that started this one as its child (run.child), null for a top-level run. */
  child_of: string | null;
  status: RunStatus;
  owner: string;
  epoch: number;
  authorization: Authorization;
  budget_limits: BudgetLimits;
  parked_on: string | null;
  /** Parked for the user: only the host wakes it, with its answer. */
  parked_for_user: boolean;
  /** When a running longrun process wakes it (parked with wake_at), null otherwise. */
  wake_at: string | null;
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

/** A run as shown at `now`: its owner's liveness is computed from the clock, never stored. */
export function toRun(r: Row, now: Date): Run {
  const status = shownStatus(r);
  const ttl = r.owner_ttl_seconds === null || r.owner_ttl_seconds === undefined ? null : Number(r.owner_ttl_seconds);
  return {
    run_id: RUN_ID.format(Number(r.seq)),
    task_id: String(r.task_id),
    parent_run_id: r.parent_seq === null ? null : RUN_ID.format(Number(r.parent_seq)),
    child_of: r.child_of === null || r.child_of === undefined ? null : RUN_ID.format(Number(r.child_of)),
    status,
    owner: String(r.owner),
    epoch: Number(r.epoch),
    authorization: authorizationOf(r.authorization),
    budget_limits: json<BudgetLimits>(r.budget_limits, {}),
    parked_on: str(r.parked_on),
    parked_for_user: Number(r.parked_for_user ?? 0) === 1,
    wake_at: str(r.wake_at),
    answer: json<HostAnswer | null>(r.answer, null),
    grant: json<GrantRecord | null>(r.grant_record, null),
    outcome: str(r.outcome),
    gaps: json<string[]>(r.gaps, []),
    created_at: String(r.created_at),
    updated_at: String(r.updated_at),
    ended_at: str(r.ended_at),
    ...livenessOf(status, ttl, str(r.beat_at), now),
  };
}

/** A run's row, read in `tx` when given; an unknown run is `not_found`. */
export async function runRow(d: LedgerDeps, tx: Transaction | null, runSeq: number): Promise<Row> {
  const exec = tx ?? d.db;
  const rs = await exec.execute({ sql: "SELECT * FROM runs WHERE seq = ?", args: [runSeq] });
  if (!rs.rows.length) throw new NotFoundError("run", RUN_ID.format(runSeq), "; run.start creates one");
  return rs.rows[0]!;
}

/** A run as shown now, by the ledger's clock. */
export async function readRun(d: LedgerDeps, runSeq: number): Promise<Run> {
  return toRun(await runRow(d, null, runSeq), d.clock.now());
}

/** Refuses (`conflict`, `run_status`) unless the run shows one of the `allowed` statuses. */
export function requireStatus(run: Row, allowed: RunStatus[], doing: string): void {
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

/** The run an adjustment, artifact or context read names: its seq, task and authorization. */
export async function runTask(d: LedgerDeps, runId: string): Promise<{ seq: number; task_id: string; authorization: Authorization }> {
  const seq = seqOf(RUN_ID, runId, "run");
  const rs = await d.db.execute({ sql: "SELECT task_id, authorization FROM runs WHERE seq = ?", args: [seq] });
  if (!rs.rows.length) throw new NotFoundError("run", runId);
  return { seq, task_id: String(rs.rows[0]!.task_id), authorization: authorizationOf(rs.rows[0]!.authorization) };
}
