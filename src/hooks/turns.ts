/**
 * The turn's boundaries, one function per Claude Code event:
 * - UserPromptSubmit begins a turn (or resumes a paused task); an approval line typed by the user
 *   grants the lease for this turn. If the turn cannot begin, the prompt is blocked: a lease never
 *   outlives a turn the host saw start.
 * - SessionStart: resume, for the model's context. Stop: ends the turn, and saves a pause
 *   checkpoint when there is something to say. PreCompact: a progress checkpoint (the task keeps
 *   running, the lease stands).
 */
import { parseApproval } from "../core/approval.ts";
import { PROGRESS_KIND, type TaskContract } from "../core/contract.ts";
import { errorKind } from "../core/errors.ts";
import type { TaskState } from "../core/task.ts";
import type { HookConfig } from "./config.ts";
import { blockPrompt, clearTurnEnded, context, type HookInput, type HookOutput, LOCK_WAIT_MS, markTurnEnded, openRoot, stateOnlyContract } from "./hook_state.ts";
import { lastAssistantText } from "./transcript.ts";
import { startResidentGate } from "./gate_start.ts";

export const GRANTED_BY = "host:claude-prompt";

function leaseLine(t: TaskState, marker: string): string {
  return t.lease
    ? `writes are approved for this turn (${t.lease.reason}${t.lease.scope ? `; scope ${t.lease.scope.join(", ")}` : ""})`
    : `writes are NOT approved: discuss and plan only; the user approves writes for one turn with a line starting ${marker}`;
}

/**
 * Begins the turn. Whatever goes wrong, the prompt is blocked with the reason: the model never
 * works in a turn longrun did not see begin, so an earlier turn's lease cannot carry over.
 */
export async function userPromptSubmit(input: HookInput, root: string, config: HookConfig): Promise<HookOutput> {
  const prompt = typeof input.prompt === "string" ? input.prompt : "";
  const approval = parseApproval(prompt, config.approve_marker);
  try {
    return await beginTurn(prompt, approval, root, config);
  } catch (e) {
    const kind = errorKind(e);
    const why = kind ? `${kind}: ${(e as Error).message}` : (e as Error).message;
    return blockPrompt(`could not begin this turn (${why}), so the prompt was not sent; send it again, or run \`longrun status --root ${root}\` to see what is wrong`);
  }
}

async function beginTurn(prompt: string, approval: ReturnType<typeof parseApproval>, root: string, config: HookConfig): Promise<HookOutput> {
  const wait = LOCK_WAIT_MS.UserPromptSubmit;
  const { contract, close } = await stateOnlyContract(root, wait);
  try {
    return await beginTurnWith(contract, prompt, approval, root, config);
  } finally {
    close();
  }
}

async function beginTurnWith(contract: TaskContract, prompt: string, approval: ReturnType<typeof parseApproval>, root: string, config: HookConfig): Promise<HookOutput> {
  const wait = LOCK_WAIT_MS.UserPromptSubmit;
  const { task: current, pending_checkpoint } = await contract.status();
  let task = current;
  const marker = config.approve_marker;
  if (!task || task.status === "completed" || task.status === "failed" || task.status === "paused" || pending_checkpoint) {
    if (!approval && (!task || (task.status !== "paused" && !pending_checkpoint))) {
      clearTurnEnded(root);
      return context("UserPromptSubmit", `longrun: no active task in this project; writes are refused until the user approves with a line starting ${marker}.`);
    }
    const r = await openRoot(root, wait);
    try {
      // a paused task, or one with a checkpoint waiting to be saved, resumes: a new turn that replays it
      if (task && (task.status === "paused" || (pending_checkpoint && task.status === "in_progress"))) task = (await r.contract.resume()).task;
      else {
        const description = prompt.split(/\r?\n/).filter((l) => !l.trim().startsWith(marker)).join("\n").trim() || approval!.reason;
        task = (await r.contract.startTask(description)).task;
      }
      if (approval && task.status === "in_progress") task = await r.contract.enableWrites({ ...approval, granted_by: GRANTED_BY });
    } finally {
      await r.close();
    }
  } else {
    task = await contract.beginTurn("user prompt");
    if (approval && task.status === "in_progress") task = await contract.enableWrites({ ...approval, granted_by: GRANTED_BY });
  }
  clearTurnEnded(root);
  const note = approval && task.status !== "in_progress" ? ` (the approval was not applied: the task is ${task.status})` : "";
  return context("UserPromptSubmit", `longrun: task ${task.task_id} (${task.status}), turn ${task.turn_index}: ${leaseLine(task, marker)}${note}.`);
}

/**
 * SessionStart: what the task is, for the model's context. A turn begins only at
 * UserPromptSubmit: a new, resumed or cleared session ends a lease that still stands (its turn is
 * over), and a compaction (`source: "compact"`, in the middle of a turn) changes nothing, so the
 * user's grant outlives it.
 */
export async function sessionStart(input: HookInput, root: string, config?: HookConfig): Promise<HookOutput> {
  const compact = input.source === "compact";
  if (config?.resident_gate) await startResidentGate(root);
  const { contract, state, close } = await stateOnlyContract(root, LOCK_WAIT_MS.SessionStart);
  let t: TaskState | null;
  try {
    t = await state.load();
    if (!t || t.status === "completed" || t.status === "failed") return null;
    if (!compact && t.lease) t = await contract.endTurn("session started");
  } finally {
    close();
  }
  const marker = config?.approve_marker ?? "/approve";
  const lines = [
    compact ? `longrun: the context was compacted; task ${t.task_id} (${t.status}) goes on in turn ${t.turn_index}: ${leaseLine(t, marker)}.` : `longrun: task ${t.task_id} (${t.status}), turn ${t.turn_index}, read-only until the user approves writes.`,
    `Task: ${t.description}`,
    `Phase: ${t.phase || "-"}; next step: ${t.next_step || "-"}`,
  ];
  if (!compact) {
    const r = await openRoot(root, LOCK_WAIT_MS.SessionStart);
    try {
      for (const m of (await r.memory.recent(t.task_id, 5))) lines.push(`Memory ${m.id}: ${m.title}`);
    } finally {
      await r.close();
    }
  }
  return context("SessionStart", lines.join("\n"));
}

/** The current task, read without libSQL, or null. */
async function peekTask(root: string, wait: number): Promise<TaskState | null> {
  const { state, close } = await stateOnlyContract(root, wait);
  try {
    return await state.load();
  } finally {
    close();
  }
}

/** The longest summary a Stop or PreCompact checkpoint takes from the conversation. */
const SUMMARY_CHARS = 4_000;

function clip(text: string): string {
  const t = text.trim();
  return t.length > SUMMARY_CHARS ? t.slice(0, SUMMARY_CHARS - 1) + "…" : t;
}

/** What the assistant last said: the payload's field, else the transcript's tail. */
function lastWords(input: HookInput): string {
  if (typeof input.last_assistant_message === "string" && input.last_assistant_message.trim()) return clip(input.last_assistant_message);
  if (typeof input.transcript_path === "string") return clip(lastAssistantText(input.transcript_path) ?? "");
  return "";
}

/**
 * Stop: the turn is over, so the lease ends. When the assistant said something, it is saved as a
 * pause checkpoint (the next prompt resumes the task); with nothing to say, no empty record is made.
 */
export async function stop(input: HookInput, root: string): Promise<HookOutput> {
  try {
    return await stopTurn(input, root);
  } catch (e) {
    // the turn is over whether or not it could be recorded: leave word, so the gate refuses writes
    const why = (e as Error)?.message ?? String(e);
    markTurnEnded(root, why);
    return { systemMessage: `longrun: the turn ended but could not be recorded (${why}); writes are refused until the next message` };
  }
}

async function stopTurn(input: HookInput, root: string): Promise<HookOutput> {
  const { contract, state, close } = await stateOnlyContract(root, LOCK_WAIT_MS.Stop);
  try {
    const peek = await state.load();
    if (!peek || peek.status === "completed" || peek.status === "failed") return null;
    const summary = lastWords(input);
    if (!summary || peek.status !== "in_progress") {
      await contract.endTurn("turn ended (Stop)");
      return null;
    }
    const r = await openRoot(root, LOCK_WAIT_MS.Stop);
    try {
      await r.contract.checkpoint({ summary, next_step: peek.next_step, kind: "stop" });
      return null;
    } catch (e) {
      await contract.endTurn("turn ended (Stop); checkpoint failed");
      if (errorKind(e) === "checkpoint_write_error") return { systemMessage: `longrun: ${(e as Error).message}` };
      throw e;
    } finally {
      await r.close();
    }
  } finally {
    close();
  }
}

/** PreCompact: a progress checkpoint, so what the context held is in memory before it is compacted. */
export async function preCompact(input: HookInput, root: string): Promise<HookOutput> {
  const peek = await peekTask(root, LOCK_WAIT_MS.PreCompact);
  if (!peek || peek.status !== "in_progress") return null;
  const said = lastWords(input);
  const instructions = typeof input.custom_instructions === "string" && input.custom_instructions.trim() ? `; compaction instructions: ${clip(input.custom_instructions)}` : "";
  const summary = `${said || `context compaction (${String(input.trigger ?? "auto")}) in turn ${peek.turn_index}`}${instructions}`;
  const r = await openRoot(root, LOCK_WAIT_MS.PreCompact);
  try {
    await r.contract.checkpoint({ summary, next_step: peek.next_step, kind: PROGRESS_KIND });
    return null;
  } finally {
    await r.close();
  }
}
