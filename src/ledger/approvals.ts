/**
 * Approvals as objects (issue 28): the agent asks before one action (`approval.request {action,
 * args_digest, reason}`), the host answers it (`approve`, `reject`, or `edit` with the arguments it
 * allows instead, and a note), and the agent reads the answer (`approval.get`, `approval.list`, or
 * the same request again, which returns the record it made). Each is one row of `approvals`; the
 * event log records the request and the answer (triggers, migration 15).
 *
 * An approval grants nothing by itself: it is the host's word on one action, which the agent's
 * own tool executor consults. Writes still need the write lease and runs their grants; an
 * approval never widens either.
 *
 * | status | means | next |
 * |---|---|---|
 * | `pending` | asked, not answered | the host's `approve`, `reject` or `edit` |
 * | `approved` | go ahead as asked | final |
 * | `rejected` | do not do it; the note says why | final |
 * | `edited` | go ahead only with `edited_args` | final |
 */
import { ConflictError, LimitExceededError, NotFoundError } from "../core/errors.ts";
import { prefixed, seqOf } from "../core/ids.ts";
import { LIMITS } from "../core/limits.ts";
import type { Clock } from "../core/ports.ts";
import type { Database } from "../db/database.ts";
import { json, type Row, RUN_ID, str } from "./common.ts";

export const APPROVAL_ID = prefixed("A");

export type ApprovalStatus = "pending" | "approved" | "rejected" | "edited";
export type ApprovalDecision = "approve" | "reject" | "edit";

const STATUS_OF: Record<ApprovalDecision, ApprovalStatus> = { approve: "approved", reject: "rejected", edit: "edited" };

export interface Approval {
  approval_id: string;
  task_id: string;
  run_id: string | null;
  action: string;
  /** What the host is asked about, as the agent's digest of the arguments (null: the action alone). */
  args_digest: string | null;
  reason: string;
  status: ApprovalStatus;
  requested_by: string;
  requested_at: string;
  answered_by: string | null;
  answered_at: string | null;
  note: string | null;
  /** With `edited`: the arguments the host allows instead. */
  edited_args: Record<string, unknown> | null;
}

export interface ApprovalRequest {
  task_id: string;
  run_id?: string;
  action: string;
  args_digest?: string;
  reason: string;
  by: string;
}

export class Approvals {
  readonly #db: Database;
  readonly #clock: Clock;

  constructor(d: { db: Database; clock: Clock }) {
    this.#db = d.db;
    this.#clock = d.clock;
  }

  /**
   * Records a request, or returns the one this task already holds for the same run, action and
   * digest (pending or answered: asking again never reopens an answer), `created` saying which.
   */
  async request(r: ApprovalRequest): Promise<{ approval: Approval; created: boolean }> {
    const runSeq = r.run_id === undefined ? null : seqOf(RUN_ID, r.run_id, "run");
    return this.#db.write(async (tx) => {
      // one approval per task, run, action and digest: an answer given for one run is not another's
      const same = await tx.execute({
        sql: "SELECT * FROM approvals WHERE task_id = ? AND run_seq IS ? AND action = ? AND args_digest IS ? ORDER BY seq DESC LIMIT 1",
        args: [r.task_id, runSeq, r.action, r.args_digest ?? null],
      });
      if (same.rows.length) return { approval: toApproval(same.rows[0]!), created: false };
      if (runSeq !== null) {
        const run = await tx.execute({ sql: "SELECT task_id FROM runs WHERE seq = ?", args: [runSeq] });
        if (!run.rows.length || String(run.rows[0]!.task_id) !== r.task_id) throw new NotFoundError("run", r.run_id!, " in the current task");
      }
      const counts = (await tx.execute({ sql: "SELECT COUNT(*) AS root, COALESCE(SUM(task_id = ?), 0) AS task FROM approvals WHERE status = 'pending'", args: [r.task_id] })).rows[0]!;
      // bounded per task and per root: a flood (task after task) cannot bury a real request
      if (Number(counts.task) >= LIMITS.approvals_pending) {
        throw new LimitExceededError("pending approvals of the task", LIMITS.approvals_pending, Number(counts.task) + 1, "items", "wait for the host to answer those it holds (approval.list)");
      }
      if (Number(counts.root) >= LIMITS.approvals_pending_root) {
        throw new LimitExceededError("pending approvals of the root", LIMITS.approvals_pending_root, Number(counts.root) + 1, "items", "wait for the host to answer those it holds (approval.list with all_tasks)");
      }
      const at = this.#clock.now().toISOString();
      const rs = await tx.execute({
        sql: `INSERT INTO approvals(task_id, run_seq, action, args_digest, reason, status, requested_by, requested_at)
              VALUES (?, ?, ?, ?, ?, 'pending', ?, ?) RETURNING *`,
        args: [r.task_id, runSeq, r.action, r.args_digest ?? null, r.reason, r.by, at],
      });
      return { approval: toApproval(rs.rows[0]!), created: true };
    });
  }

  /** The host's answer to a pending request; an answered one is final (conflict naming its answer). */
  async answer(id: string, a: { decision: ApprovalDecision; note?: string; edited_args?: Record<string, unknown>; by: string }): Promise<Approval> {
    const seq = seqOf(APPROVAL_ID, id, "approval");
    return this.#db.write(async (tx) => {
      const at = this.#clock.now().toISOString();
      const rs = await tx.execute({
        sql: `UPDATE approvals SET status = ?, answered_by = ?, answered_at = ?, note = ?, edited_args = ? WHERE seq = ? AND status = 'pending' RETURNING *`,
        args: [STATUS_OF[a.decision], a.by, at, a.note ?? null, a.edited_args ? JSON.stringify(a.edited_args) : null, seq],
      });
      if (rs.rows.length) return toApproval(rs.rows[0]!);
      const found = await tx.execute({ sql: "SELECT status, answered_by FROM approvals WHERE seq = ?", args: [seq] });
      if (!found.rows.length) throw new NotFoundError("approval", id, "; approval.list shows the approvals of a task");
      throw new ConflictError(`Approval ${id} is answered already (${String(found.rows[0]!.status)} by ${String(found.rows[0]!.answered_by)}); an answer is final`, {
        reason: "approval_answered",
        approval_id: id,
        status: String(found.rows[0]!.status),
      });
    });
  }

  async get(id: string): Promise<Approval> {
    const seq = seqOf(APPROVAL_ID, id, "approval");
    const rs = await this.#db.execute({ sql: "SELECT * FROM approvals WHERE seq = ?", args: [seq] });
    if (!rs.rows.length) throw new NotFoundError("approval", id, "; approval.list shows the approvals of a task");
    return toApproval(rs.rows[0]!);
  }

  /** How many approvals match (every task's with `taskId` undefined; `status` filters). */
  async count(taskId: string | undefined, status?: ApprovalStatus): Promise<number> {
    const rs = await this.#db.execute({
      sql: `SELECT COUNT(*) AS n FROM approvals WHERE (? IS NULL OR task_id = ?) AND (? IS NULL OR status = ?)`,
      args: [taskId ?? null, taskId ?? null, status ?? null, status ?? null],
    });
    return Number(rs.rows[0]!.n);
  }

  /** A task's approvals (every task's with `taskId` undefined), newest first; `status` filters. */
  async list(taskId: string | undefined, status?: ApprovalStatus, limit = 100): Promise<Approval[]> {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (taskId !== undefined) {
      where.push("task_id = ?");
      args.push(taskId);
    }
    if (status !== undefined) {
      where.push("status = ?");
      args.push(status);
    }
    const rs = await this.#db.execute({ sql: `SELECT * FROM approvals ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq DESC LIMIT ?`, args: [...args, limit] });
    return rs.rows.map(toApproval);
  }
}

function toApproval(r: Row): Approval {
  return {
    approval_id: APPROVAL_ID.format(Number(r.seq)),
    task_id: String(r.task_id),
    run_id: r.run_seq === null ? null : RUN_ID.format(Number(r.run_seq)),
    action: String(r.action),
    args_digest: str(r.args_digest),
    reason: String(r.reason),
    status: String(r.status) as ApprovalStatus,
    requested_by: String(r.requested_by),
    requested_at: String(r.requested_at),
    answered_by: str(r.answered_by),
    answered_at: str(r.answered_at),
    note: str(r.note),
    edited_args: json<Record<string, unknown> | null>(r.edited_args, null),
  };
}
