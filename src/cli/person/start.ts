/**
 * `longrun start "description"`: a person begins a task (task.start, host side): memory is
 * searched first and the related records are shown; the task starts in progress, read-only, turn 1.
 * Where a task is still open it refuses, saying which and what to do: a person at a shell does not
 * leave a task running in the background by accident (a host over the protocol may).
 */
import type { MemoryHit } from "../../core/ports.ts";
import { isTerminal } from "../../core/status.ts";
import type { TaskState } from "../../core/task.ts";
import { asPerson, fail, PersonError, type PersonTarget, printJson, shown } from "./host.ts";

/** What to do about an open task, by its status. */
function wayOut(t: TaskState): string {
  if (t.status === "paused") return "`longrun resume` continues it, `longrun finish` accepts it";
  if (t.status === "waiting_verification") return "`longrun finish` accepts it";
  return "`longrun finish` accepts it when it is done, `longrun status` shows it";
}

export async function runStart(o: PersonTarget & { description: string }): Promise<number> {
  // checked before the root is opened: a start refused for its words creates no root
  if (!o.description.trim()) return fail(o, "start", new PersonError('a task needs a description, e.g. longrun start "fix the flaky login test"; nothing was started'));
  return asPerson("start", o, true, async (s) => {
    const { task: open } = await s.call<{ task: TaskState | null }>("task.status");
    if (open && !isTerminal(open.status)) {
      throw new PersonError(
        `task ${open.task_id} is still open (${open.status}: ${JSON.stringify(open.description.split("\n")[0]!.slice(0, 80))}): ${wayOut(open)}; nothing was started`,
      );
    }
    const { task, memories } = await s.call<{ task: TaskState; memories: MemoryHit[] }>("task.start", { description: o.description });
    if (o.json) {
      printJson({ ok: true, root: s.where, task, memories });
      return 0;
    }
    console.log(`started task ${task.task_id} in ${s.where}: ${task.status}, read-only, turn ${task.turn_index}`);
    console.log(`  ${shown(task.description.split("\n")[0]!)}`);
    if (memories.length) {
      console.log(`related memory (${memories.length}):`);
      for (const m of memories) console.log(`  ${m.id} ${shown(m.title)}`);
    }
    console.log('writes wait for a grant: `longrun grant "reason"` (or /approve in Claude Code)');
    return 0;
  });
}
