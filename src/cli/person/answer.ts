/**
 * `longrun answer R_0001 "text" [--data JSON]`: a person answers a research run that is parked for
 * the user (run.park with for_user), host side: run.wake with the answer, which the run's owner reads
 * in run.get and in its next heartbeat's run. Without a run id, the one run parked for the user is
 * answered, and two or more are refused naming them. `longrun list` shows what waits.
 */
import type { Run } from "../../ledger/run_record.ts";
import { asPerson, fail, PersonError, type PersonTarget, printJson } from "./host.ts";

export async function runAnswer(o: PersonTarget & { words: string[]; data?: string }): Promise<number> {
  const [first, ...rest] = o.words;
  const named = first !== undefined && /^R_\d{1,15}$/.test(first);
  const text = (named ? rest : o.words).join(" ").trim();
  if (!text) return fail(o, "answer", new PersonError('an answer needs its text, e.g. longrun answer R_0001 "use the 2025 filings"; nothing was answered'));
  let data: Record<string, unknown> | undefined;
  if (o.data !== undefined) {
    try {
      data = JSON.parse(o.data);
    } catch {
      data = undefined;
    }
    if (!data || typeof data !== "object" || Array.isArray(data)) return fail(o, "answer", new PersonError(`--data ${JSON.stringify(o.data.slice(0, 60))} is not a JSON object such as '{"key":"B"}'; nothing was answered`));
  }
  return asPerson("answer", o, false, async (s) => {
    let runId = named ? first! : null;
    if (!runId) {
      const { runs } = await s.call<{ runs: Run[] }>("run.list", { all_tasks: true });
      const waiting = runs.filter((r) => r.status === "parked" && r.parked_for_user);
      if (waiting.length !== 1) {
        throw new PersonError(
          waiting.length === 0
            ? "no run is parked for the user's answer (`longrun list` shows the open runs); nothing was answered"
            : `${waiting.length} runs wait for an answer (${waiting.map((r) => r.run_id).join(", ")}): name one, e.g. longrun answer ${waiting[0]!.run_id} "…"; nothing was answered`,
        );
      }
      runId = waiting[0]!.run_id;
    }
    const { run } = await s.call<{ run: Run }>("run.wake", { run_id: runId, reason: "the user answered (longrun answer)", answer: { text, ...(data ? { data } : {}) } });
    if (o.json) {
      printJson({ ok: true, root: s.where, run });
      return 0;
    }
    console.log(`answered run ${run.run_id} (task ${run.task_id}): it is ${run.status} again, and its owner reads the answer in run.get`);
    return 0;
  });
}
