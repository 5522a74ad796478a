/**
 * `longrun list`: the root's tasks, newest first (id, status, last update, the description's first
 * line; `*` marks the current one), then its open research runs, newest first, then the approvals
 * waiting for an answer. Creates nothing.
 */
import type { TaskSummary } from "../../core/ports.ts";
import type { Run } from "../../ledger/run_record.ts";
import type { Approval } from "../../ledger/approvals.ts";
import { approvalLine } from "./approvals.ts";
import { asPerson, type PersonTarget, printJson, shown } from "./host.ts";

/** Runs still waiting or working (not finished, cancelled, failed or refused). */
const OPEN_RUN = new Set(["requested", "running", "parked"]);

const second = (at: string) => at.replace(/\.\d+Z$/, "Z");

export function runList(o: PersonTarget): Promise<number> {
  return asPerson("list", o, false, async (s) => {
    const { tasks } = await s.call<{ tasks: TaskSummary[] }>("task.list");
    const { runs } = await s.call<{ runs: Run[] }>("run.list", { all_tasks: true });
    const open = runs.filter((r) => OPEN_RUN.has(r.status)).sort((a, b) => b.updated_at.localeCompare(a.updated_at));
    const { approvals } = await s.call<{ approvals: Approval[] }>("approval.list", { all_tasks: true, status: "pending" });
    if (o.json) {
      printJson({ ok: true, root: s.where, tasks, runs: open, approvals });
      return 0;
    }
    if (!tasks.length) {
      console.log(`no tasks in ${s.where} yet (\`longrun start "what to do"\` begins one)`);
      return 0;
    }
    const width = Math.max(...tasks.map((t) => t.status.length));
    for (const t of tasks) {
      console.log(`${t.current ? "*" : " "} ${t.task_id}  ${t.status.padEnd(width)}  ${second(t.updated_at)}  ${shown(t.description.split("\n")[0]!)}`);
    }
    if (open.length) {
      console.log(`open research runs (${open.length}):`);
      for (const r of open) console.log(`  ${r.run_id}  ${r.status}${r.parked_for_user ? " (for the user: `longrun answer`)" : ""}  task ${r.task_id}  owner ${shown(r.owner)}  ${second(r.updated_at)}`);
    }
    if (approvals.length) {
      console.log(`approvals waiting for an answer (${approvals.length}; \`longrun approve\` or \`longrun reject\`):`);
      for (const a of approvals) console.log(`  ${approvalLine(a)}`);
    }
    return 0;
  });
}
