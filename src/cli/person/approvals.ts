/**
 * A person answers the agent's approval requests (approval.*, host side): `longrun approvals`
 * lists those waiting (every task's), `longrun approve A_0001 [note] [--edit JSON]` approves one (or,
 * with `--edit`, allows it only with those arguments), `longrun reject A_0001 "note"` refuses it.
 * An answer is final; the agent reads it on its next call.
 */
import type { Approval } from "../../ledger/approvals.ts";
import { asPerson, fail, PersonError, type PersonTarget, printJson, shown } from "./host.ts";

const second = (at: string) => at.replace(/\.\d+Z$/, "Z");

/** One approval in a line: id, status, task, the action and the agent's reason. */
export function approvalLine(a: Approval): string {
  const answer = a.status === "pending" ? "" : `  -> ${a.status}${a.note ? `: ${shown(a.note.slice(0, 120))}` : ""}`;
  return `${a.approval_id}  ${a.status}  task ${a.task_id}${a.run_id ? ` run ${a.run_id}` : ""}  ${second(a.requested_at)}  ${shown(a.action)}${a.args_digest ? ` [${a.args_digest}]` : ""}  "${shown(a.reason.slice(0, 120))}"${answer}`;
}

export function runApprovals(o: PersonTarget): Promise<number> {
  return asPerson("approvals", o, false, async (s) => {
    const { approvals, total } = await s.call<{ approvals: Approval[]; total: number }>("approval.list", { all_tasks: true, status: "pending" });
    if (o.json) {
      printJson({ ok: true, root: s.where, approvals, total });
      return 0;
    }
    if (!approvals.length) {
      console.log(`no approval waits for an answer in ${s.where}`);
      return 0;
    }
    for (const a of approvals) console.log(approvalLine(a));
    if (total > approvals.length) console.log(`(the newest ${approvals.length} of ${total} waiting; answer these and run it again for the rest)`);
    console.log('answer with `longrun approve A_… ["note"]` or `longrun reject A_… "why"`');
    return 0;
  });
}

export async function runAnswerApproval(o: PersonTarget & { verb: "approve" | "reject"; words: string[]; edit?: string }): Promise<number> {
  const [id, ...rest] = o.words;
  if (id === undefined || !/^A_\d{1,15}$/.test(id)) {
    return fail(o, o.verb, new PersonError(`name the approval, e.g. longrun ${o.verb} A_0001${o.verb === "reject" ? ' "why not"' : ""} (\`longrun approvals\` lists them); nothing was answered`));
  }
  const note = rest.join(" ").trim() || undefined;
  if (o.verb === "reject" && !note) return fail(o, "reject", new PersonError(`a rejection says why, e.g. longrun reject ${id} "not before the review"; nothing was answered`));
  let edited: Record<string, unknown> | undefined;
  if (o.edit !== undefined) {
    if (o.verb !== "approve") return fail(o, o.verb, new PersonError("--edit is an option of longrun approve; nothing was answered"));
    try {
      edited = JSON.parse(o.edit);
    } catch {
      edited = undefined;
    }
    if (!edited || typeof edited !== "object" || Array.isArray(edited)) return fail(o, "approve", new PersonError(`--edit ${JSON.stringify(o.edit.slice(0, 60))} is not a JSON object of the allowed arguments, such as '{"to":["alice@example.org"]}'; nothing was answered`));
  }
  return asPerson(o.verb, o, false, async (s) => {
    const decision = o.verb === "reject" ? "reject" : edited ? "edit" : "approve";
    const { approval } = await s.call<{ approval: Approval }>("approval.answer", { approval_id: id, decision, ...(note ? { note } : {}), ...(edited ? { edited_args: edited } : {}) });
    if (o.json) {
      printJson({ ok: true, root: s.where, approval });
      return 0;
    }
    console.log(`${approval.approval_id} ${approval.status} (${shown(approval.action)}, task ${approval.task_id}): the agent reads it on its next call`);
    return 0;
  });
}
