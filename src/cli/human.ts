/** `longrun status|resume|checkpoint`: the contract for a person at a terminal, in plain text. */
import { LongrunError } from "../core/errors.ts";
import type { TaskState } from "../core/task.ts";
import { InvalidRootError, Root } from "../root.ts";

function describeTask(t: TaskState | null): string {
  if (!t) return "no task in this root (task.start creates one)";
  const lease = t.lease
    ? `writable for turn ${t.lease.turn} (granted by ${t.lease.granted_by}: ${t.lease.reason}${t.lease.scope ? `; scope ${t.lease.scope.join(", ")}` : ""})`
    : "read-only";
  return [
    `task ${t.task_id}: ${t.status}`,
    `  ${t.description.split("\n")[0]}`,
    `  turn ${t.turn_index}; ${lease}`,
    `  phase: ${t.phase || "-"}; next step: ${t.next_step || "-"}`,
    `  version ${t.version}, updated ${t.updated_at}`,
  ].join("\n");
}

export async function runHuman(
  command: "status" | "resume" | "checkpoint",
  o: { root: string | null; summary?: string | boolean; nextStep?: string | boolean; phase?: string | boolean },
): Promise<number> {
  let root: Root;
  try {
    root = await Root.open(o.root ?? process.cwd(), { searchInWorker: false });
  } catch (e) {
    if (e instanceof InvalidRootError) {
      process.stderr.write(`longrun: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  try {
    if (command === "status") {
      const s = await root.contract.status();
      console.log(describeTask(s.task));
      if (s.pending_checkpoint) console.log(`pending checkpoint ${s.pending_checkpoint.checkpoint_id} in ${s.pending_checkpoint.path}: ${s.pending_checkpoint.error ?? "not yet saved"}`);
    } else if (command === "resume") {
      const r = await root.contract.resume();
      console.log(describeTask(r.task));
      if (r.replayed) console.log(`replayed pending checkpoint into memory as ${r.replayed.memory_id}`);
      for (const m of r.memories) console.log(`  ${m.id} ${m.title}`);
    } else {
      if (typeof o.summary !== "string" || typeof o.nextStep !== "string") {
        process.stderr.write("longrun: checkpoint needs --summary and --next-step\n");
        return 2;
      }
      const cp = await root.contract.checkpoint({
        summary: o.summary,
        next_step: o.nextStep,
        phase: typeof o.phase === "string" ? o.phase : undefined,
        kind: "cli",
      });
      console.log(cp.text);
      console.log(`(saved to memory as ${cp.memory_id})`);
    }
    return 0;
  } catch (e) {
    if (e instanceof LongrunError) {
      process.stderr.write(`longrun: ${e.kind}: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    await root.close();
  }
}
