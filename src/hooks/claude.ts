/**
 * The Claude Code adapter: one function per hook event, each taking the hook's JSON input and
 * returning the JSON to print (Claude Code's documented hook output). The per-event command
 * (`longrun hook claude <Event>`) runs one of these and exits.
 *
 * - UserPromptSubmit: the message boundary the seed could not see. Begins a turn (or resumes a
 *   paused task); an approval line typed by the user grants the lease for this turn.
 * - PreToolUse: the gate. Write tools get allow or deny with a reason; longrun's own files and
 *   host-side commands are always denied. Reads nothing but state.json (no libSQL, no Worker).
 * - SessionStart: resume. Stop / PreCompact: checkpoint when a task is in progress.
 */
import { TaskContract } from "../core/contract.ts";
import { CheckpointWriteError, LongrunError, WriteGateViolation } from "../core/errors.ts";
import type { MemoryStore } from "../core/ports.ts";
import type { TaskState } from "../core/task.ts";
import { FilePendingStore } from "../store/pending_file.ts";
import { FileStateStore } from "../store/state_file.ts";
import { systemClock, systemIds } from "../store/system.ts";
import { crashPointsFromEnv } from "../store/crash.ts";
import { parseApproval } from "./approval.ts";
import type { HookConfig } from "./config.ts";
import { classifyTool } from "./tool_policy.ts";

export const CLAUDE_EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "PreCompact"] as const;
export type ClaudeEvent = (typeof CLAUDE_EVENTS)[number];

export type HookInput = Record<string, unknown>;
export type HookOutput = Record<string, unknown>;

export const GRANTED_BY = "host:claude-prompt";

/** The paths of a root, computed without importing the memory layer. */
function paths(root: string) {
  return {
    state: `${root}/.longrun/state.json`,
    pending: `${root}/.longrun/pending_checkpoint.json`,
    lock: `${root}/.longrun/lock`,
  };
}

/** A memory port for the paths that must never touch memory (the gate): it refuses to be used. */
const NO_MEMORY: MemoryStore = new Proxy({} as MemoryStore, {
  get: (_t, prop) => () => Promise.reject(new Error(`memory is not available on this path (${String(prop)})`)),
});

/** The contract over the state file only: enough for gate checks, turns and grants. */
export function stateOnlyContract(root: string): { contract: TaskContract; state: FileStateStore } {
  const p = paths(root);
  const crash = crashPointsFromEnv();
  const state = new FileStateStore({ path: p.state, lockPath: p.lock, clock: systemClock, crash });
  const contract = new TaskContract({
    state,
    pending: new FilePendingStore(p.pending, crash),
    memory: NO_MEMORY,
    clock: systemClock,
    ids: systemIds,
    crash,
  });
  return { contract, state };
}

function preToolDecision(decision: "allow" | "deny", reason: string): HookOutput {
  return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: decision, permissionDecisionReason: reason } };
}

/** Fail closed: what PreToolUse answers when anything at all goes wrong. */
export function failClosed(reason: string): HookOutput {
  return preToolDecision("deny", `longrun could not check the write lease (${reason}), so the write is denied (fail closed)`);
}

export async function preToolUse(input: HookInput, root: string, config: HookConfig): Promise<HookOutput> {
  const tool = typeof input.tool_name === "string" ? input.tool_name : "";
  const toolInput = (typeof input.tool_input === "object" && input.tool_input !== null ? input.tool_input : {}) as Record<string, unknown>;
  const what = classifyTool(tool, toolInput, root, config.bash_read_only);
  if (what.kind === "protected") return preToolDecision("deny", `longrun: ${what.reason}`);
  if (what.kind === "none") return {};
  const { contract } = stateOnlyContract(root);
  try {
    const ok = await contract.requireWritable(what.action);
    return preToolDecision("allow", `longrun: write lease for turn ${ok.turn} granted by ${ok.lease.granted_by} (${ok.lease.reason})`);
  } catch (e) {
    if (e instanceof WriteGateViolation) {
      return preToolDecision("deny", `longrun: ${e.message}. The user can approve writes for this turn by starting a line with ${config.approve_marker}`);
    }
    if (e instanceof LongrunError && e.kind === "no_active_task") {
      return preToolDecision("deny", `longrun: no task in ${root}; writes need a task and a lease. The user can start one and approve writes with a line starting ${config.approve_marker}`);
    }
    throw e;
  }
}

function context(event: ClaudeEvent, text: string): HookOutput {
  return { hookSpecificOutput: { hookEventName: event, additionalContext: text } };
}

function leaseLine(t: TaskState): string {
  return t.lease
    ? `writes are approved for this turn (${t.lease.reason}${t.lease.scope ? `; scope ${t.lease.scope.join(", ")}` : ""})`
    : "writes are NOT approved: discuss and plan only; the user approves writes for one turn with a line starting";
}

/** Opens the full root (libSQL, memory) only on the paths that need memory. */
async function openRoot(root: string) {
  const { Root } = await import("../root.ts");
  return Root.open(root, { searchInWorker: false });
}

export async function userPromptSubmit(input: HookInput, root: string, config: HookConfig): Promise<HookOutput> {
  const prompt = typeof input.prompt === "string" ? input.prompt : "";
  const approval = parseApproval(prompt, config.approve_marker);
  const r = await openRoot(root);
  try {
    const c = r.contract;
    let task = (await c.status()).task;
    if (!task || task.status === "completed" || task.status === "failed") {
      if (!approval) return context("UserPromptSubmit", `longrun: no active task in this project; writes are refused until the user approves with a line starting ${config.approve_marker}`);
      const description = prompt.split(/\r?\n/).filter((l) => !l.trim().startsWith(config.approve_marker)).join("\n").trim() || approval.reason;
      task = (await c.startTask(description)).task;
    } else if (task.status === "paused") {
      task = (await c.resume()).task;
    } else {
      task = await c.beginTurn("user prompt");
    }
    if (approval && task.status === "in_progress") {
      task = await c.enableWrites({ ...approval, granted_by: GRANTED_BY });
    }
    const marker = task.lease ? "" : ` ${config.approve_marker}`;
    return context("UserPromptSubmit", `longrun: task ${task.task_id} (${task.status}), turn ${task.turn_index}: ${leaseLine(task)}${marker}.`);
  } finally {
    await r.close();
  }
}

export async function sessionStart(_input: HookInput, root: string): Promise<HookOutput> {
  const r = await openRoot(root);
  try {
    const current = (await r.contract.status()).task;
    if (!current || current.status === "completed" || current.status === "failed") return {};
    const res = await r.contract.resume();
    const t = res.task;
    const lines = [
      `longrun: resumed task ${t.task_id} (${t.status}) in turn ${t.turn_index}, read-only.`,
      `Task: ${t.description}`,
      `Phase: ${t.phase || "-"}; next step: ${t.next_step || "-"}`,
      ...res.memories.slice(0, 5).map((m) => `Memory ${m.id}: ${m.title}`),
    ];
    if (res.replayed) lines.push(`A pending checkpoint was saved to memory as ${res.replayed.memory_id}.`);
    return context("SessionStart", lines.join("\n"));
  } finally {
    await r.close();
  }
}

/** Stop and PreCompact: checkpoint a task in progress, so the turn's end is saved before it is claimed. */
export async function checkpointOn(event: "Stop" | "PreCompact", input: HookInput, root: string): Promise<HookOutput> {
  if (input.stop_hook_active === true) return {};
  const peek = await stateOnlyContract(root).state.load();
  if (!peek || peek.status !== "in_progress") return {};
  const r = await openRoot(root);
  try {
    const cp = await r.contract.checkpoint({
      summary: event === "Stop" ? `end of turn ${peek.turn_index} (automatic, Stop hook)` : `before context compaction (${String(input.trigger ?? "auto")})`,
      next_step: peek.next_step,
      kind: event === "Stop" ? "stop" : "pre_compact",
    });
    return event === "PreCompact" ? { systemMessage: `longrun: checkpoint saved as ${cp.memory_id}` } : {};
  } catch (e) {
    if (e instanceof CheckpointWriteError) return { systemMessage: `longrun: ${e.message}` };
    throw e;
  } finally {
    await r.close();
  }
}
