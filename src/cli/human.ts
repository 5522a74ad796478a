/**
 * `longrun status|resume|checkpoint|finish|recover`: the contract for a person at a terminal, in
 * plain text. A person at the terminal is the host: `finish` accepts a task (also one waiting for
 * verification) and `recover --force` rebuilds it from memory over a readable state.
 * In a directory without a root, every command says so in one line and creates nothing (`status`
 * exits 0: there is nothing to show; the others exit 2). Every failure is one line naming what to
 * do, exit 2: never a stack trace.
 */
import { LongrunError } from "../core/errors.ts";
import type { TaskState } from "../core/task.ts";
import { existsSync } from "node:fs";
import { InvalidRootError, Root, resolveRoot, rootPaths } from "../root/root.ts";
import { rootStore } from "../root/steps.ts";
import type { ServerStore } from "../store/server_config.ts";
import { forgetIdentity } from "../store/root_identity.ts";

function describeTask(t: TaskState | null): string {
  if (!t) return 'no task in this root (`longrun start "what to do"` begins one)';
  const lease = t.lease
    ? `writable for turn ${t.lease.turn} (granted by ${t.lease.granted_by}: ${t.lease.reason}${t.lease.scope ? `; scope ${t.lease.scope.join(", ")}` : ""}${t.lease.max_uses !== null ? `; ${t.lease.uses} of ${t.lease.max_uses} write(s) used` : ""}${t.lease.expires_at ? `; until ${t.lease.expires_at.replace(/\.\d+Z$/, "Z")}` : ""})`
    : "read-only";
  return [
    `task ${t.task_id}: ${t.status}`,
    `  ${t.description.split("\n")[0]}`,
    `  turn ${t.turn_index}; ${lease}`,
    `  phase: ${t.phase || "-"}; next step: ${t.next_step || "-"}`,
    `  version ${t.version}, updated ${t.updated_at}`,
  ].join("\n");
}

export type HumanCommand = "status" | "resume" | "checkpoint" | "finish" | "recover";

export async function runHuman(
  command: HumanCommand,
  o: { root: string | null; summary?: string | boolean; nextStep?: string | boolean; phase?: string | boolean; force?: boolean; acceptMemory?: boolean; server?: ServerStore | null },
): Promise<number> {
  if (o.server && command === "recover" && o.acceptMemory) {
    process.stderr.write("longrun: --accept-memory is for a local root's memory.db; a root on a server keeps its memory there\n");
    return 2;
  }
  let dir = "";
  try {
    if (!o.server) dir = resolveRoot(o.root ?? process.cwd());
  } catch (e) {
    if (e instanceof InvalidRootError) {
      process.stderr.write(`longrun: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  if (!o.server && !existsSync(rootPaths(dir).longrun) && !existsSync(rootPaths(dir).memoryDb)) {
    if (command === "status") {
      console.log(`no longrun root in ${dir} (nothing here yet; a task.start or \`longrun hook install claude\` creates one)`);
      return 0;
    }
    process.stderr.write(`longrun: no longrun root in ${dir}, so there is nothing to ${command} (nothing was created); run it in the project's directory or pass --root DIR\n`);
    return 2;
  }
  try {
    return await runInRoot(command, dir, o);
  } catch (e) {
    // whatever else failed (a directory it may not write, a file it may not read): one line
    process.stderr.write(`longrun: ${command} failed: ${oneLine(e)}\n`);
    return 2;
  }
}

/** An error as one line with the way out: no stack, no driver text across lines. */
export function oneLine(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  const message = String((e as Error)?.message ?? e).split("\n")[0]!;
  if (code === "EACCES" || code === "EPERM") return `${message}; run it as a user who may write the project's directory (its owner), or make the directory writable`;
  if (code === "EROFS") return `${message}: the file system is read-only; run it where the project can be written`;
  if (code === "ENOSPC") return `${message}: the disk is full; free space and run it again`;
  return `${message}; \`longrun doctor\` checks this root`;
}

async function runInRoot(
  command: HumanCommand,
  dir: string,
  o: { root: string | null; summary?: string | boolean; nextStep?: string | boolean; phase?: string | boolean; force?: boolean; acceptMemory?: boolean; server?: ServerStore | null },
): Promise<number> {
  let root: Root;
  try {
    root = !o.server && command === "recover" && o.acceptMemory
      ? await acceptMemory(dir)
      : await Root.openAt(rootStore(dir, o.server ?? null), { searchInWorker: false });
  } catch (e) {
    if (e instanceof LongrunError) {
      process.stderr.write(`longrun: ${e.kind}: ${e.message.split("\n")[0]}\n`);
      return 2;
    }
    if (e instanceof InvalidRootError) {
      // a database that holds another project (a root on a server)
      process.stderr.write(`longrun: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  if (command === "recover" && o.acceptMemory) {
    const s = await root.contract.status().finally(() => root.close());
    console.log(describeTask(s.task));
    if (s.pending_checkpoint && !s.pending_checkpoint.lost) console.log(`a pending checkpoint waits in ${s.pending_checkpoint.path}: \`longrun resume\` saves it`);
    return 0;
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
    } else if (command === "checkpoint") {
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
    } else if (command === "finish") {
      const f = await root.contract.finish(typeof o.summary === "string" ? o.summary : "", "host");
      console.log(describeTask(f.task));
      console.log(`(outcome saved to memory as ${f.memory_id})`);
    } else {
      const r = await root.contract.recoverFromMemory({ force: o.force === true, by: "host" });
      console.log(describeTask(r.task));
      console.log(
        r.memory_id
          ? `(rebuilt from memory ${r.memory_id}${r.quarantined ? `; the unreadable state was kept as ${r.quarantined}` : ""})`
          : r.task
          ? `(the unreadable file was kept as ${r.quarantined}; the task's own state was readable and is unchanged)`
          : `(memory holds no checkpoint to rebuild from; the unreadable state was kept as ${r.quarantined}; task.start begins a new task)`,
      );
    }
    return 0;
  } catch (e) {
    if (e instanceof LongrunError) {
      process.stderr.write(`longrun: ${e.kind}: ${e.message.split("\n")[0]}\n`);
      return 2;
    }
    throw e;
  } finally {
    await root.close();
  }
}

/**
 * `recover --accept-memory`: the root takes the memory.db that is there now (another root's, or a
 * restored copy), or, when there is none, it is empty or it is unreadable, begins a new one (the
 * old file kept aside). Said on stdout, step by step.
 */
async function acceptMemory(dir: string): Promise<Root> {
  const paths = rootPaths(dir);
  for (const moved of forgetIdentity(paths.longrun, paths.memoryDb, new Date(), false)) console.log(`kept aside: ${moved}`);
  try {
    const root = await Root.open(dir, { searchInWorker: false });
    console.log(`this root now uses ${paths.memoryDb}`);
    return root;
  } catch (e) {
    if (!(e instanceof LongrunError) || e.kind !== "memory_corrupt") throw e;
    for (const moved of forgetIdentity(paths.longrun, paths.memoryDb, new Date(), true)) console.log(`kept aside (unreadable): ${moved}`);
    const root = await Root.open(dir, { searchInWorker: false });
    console.log(`a new memory begins in ${paths.memoryDb}`);
    return root;
  }
}
