/**
 * approval.*: the agent asks before one action, the host answers (src/ledger/approvals.ts). An
 * approval grants nothing by itself: writes still need the lease, runs their grants.
 */
import { ConflictError, NoActiveTaskError } from "../../core/errors.ts";
import { isTerminal } from "../../core/status.ts";
import { L } from "../ledger_schemas.ts";
import { callerName, method } from "../method.ts";
import { currentTaskId } from "./runs.ts";

export const approvalMethods = [
  method({
    name: "approval.request",
    side: "agent",
    summary:
      "Ask the host before one action of the current task (action, args_digest: a digest of its arguments, reason, run_id?): a pending approval the host answers; the same request again returns the record it made (created: false), with its answer once there is one. Grants nothing by itself: writes still need the lease, runs their grant",
    params: L.approvalRequest,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => {
      const task = await root.state.load();
      if (!task) throw new NoActiveTaskError("No task in this root: call task.start first (an approval belongs to a task)");
      if (isTerminal(task.status)) throw new ConflictError(`Not requested: task ${task.task_id} is ${task.status}; a finished task asks for nothing`, { reason: "task_finished", task_id: task.task_id });
      return root.approvals.request({ ...p, task_id: task.task_id, by: callerName(caller) });
    },
  }),
  method({
    name: "approval.answer",
    side: "host",
    summary: "Answer a pending approval: decision approve, reject or edit (edited_args: what is allowed instead), note; final once given; returns the approval",
    params: L.approvalAnswer,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => ({
      approval: await root.approvals.answer(p.approval_id, { decision: p.decision, note: p.note, edited_args: p.edited_args, by: callerName(caller) }),
    }),
  }),
  method({
    name: "approval.get",
    side: "agent",
    summary: "One approval with its answer: status pending, approved, rejected or edited; answered_by, note, edited_args",
    params: L.approvalGet,
    lane: "read",
    readOnly: true,
    handler: async ({ root }, p) => ({ approval: await root.approvals.get(p.approval_id) }),
  }),
  method({
    name: "approval.list",
    side: "agent",
    summary: "The approvals of the current task (or task_id, or every task with all_tasks), newest first, the newest 100; total: how many match; status filters (pending: what waits for the host)",
    params: L.approvalList,
    lane: "read",
    readOnly: true,
    handler: async ({ root }, p) => {
      const taskId = p.all_tasks ? undefined : (p.task_id ?? (await currentTaskId(root)));
      return { task_id: taskId ?? null, approvals: await root.approvals.list(taskId, p.status), total: await root.approvals.count(taskId, p.status) };
    },
  }),
];
