/**
 * The Claude Code adapter: one function per hook event, each taking the hook's JSON input and
 * returning what to print. The per-event command (`longrun hook claude <Event>`) runs one of these
 * and exits.
 *
 * - UserPromptSubmit: the message boundary the seed could not see. Begins a turn (or resumes a
 *   paused task); an approval line typed by the user grants the lease for this turn. If the turn
 *   cannot begin, the prompt is blocked: a lease never outlives a turn the host saw start.
 * - PreToolUse: the gate. It answers deny (with the reason) or nothing, never "allow", so Claude
 *   Code's own permission rules and prompts still apply to whatever passes. It reads only the
 *   state file (no libSQL, no Worker).
 * - SessionStart: resume. Stop: ends the turn, and saves a pause checkpoint when there is
 *   something to say. PreCompact: a progress checkpoint (the task keeps running, the lease stands).
 */
import { PROGRESS_KIND, TaskContract } from "../core/contract.ts";
import { errorKind, LongrunError, WriteGateViolation } from "../core/errors.ts";
import type { TaskState } from "../core/task.ts";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { ROOT_PATHS } from "../root/layout.ts";
import { openRoot as openScoped, type StateRoot } from "../root/open.ts";
import type { Root } from "../root/root.ts";
import { type RootStore, rootStore } from "../root/steps.ts";
import { hookServerStore } from "../store/server_config.ts";
import { parseApproval } from "../core/approval.ts";
import { type ClaudeEvent, eventColumn } from "./events.ts";
import type { HookConfig } from "./config.ts";
import { protectContext } from "./protect.ts";
import { decideTool, type ShellRun, type ToolContext } from "./tools.ts";
import { sandboxedCommand } from "./wrap.ts";
import { lastAssistantText } from "./transcript.ts";

export { CLAUDE_EVENTS, type ClaudeEvent } from "./events.ts";

export type HookInput = Record<string, unknown>;
/** What a hook prints: a JSON object, or nothing at all (no decision). */
export type HookOutput = Record<string, unknown> | null;

export const GRANTED_BY = "host:claude-prompt";

/** How long a hook waits for another process's lock on the state file (the events table's `lockWaitMs`). */
export const LOCK_WAIT_MS: Readonly<Record<ClaudeEvent, number>> = eventColumn("lockWaitMs");

/** The hooks' root: the project on the libSQL server the environment names (LONGRUN_STORE), else the directory. */
function hookStore(root: string): RootStore {
  return rootStore(root, hookServerStore());
}

/**
 * The contract over the task state only (src/root/open.ts): enough for gate checks, turns and
 * grants, without loading libSQL. The gate (`gate`) lays nothing out.
 */
export async function stateOnlyContract(root: string, lockTimeoutMs = 5_000, gate = false): Promise<StateRoot> {
  return openScoped({ store: hookStore(root), scope: gate ? "gate" : "state", lockTimeoutMs });
}

export function denyOutput(reason: string): HookOutput {
  return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: `longrun: ${reason}` } };
}

export function blockPrompt(reason: string): HookOutput {
  return { decision: "block", reason: `longrun: ${reason}` };
}

/** What the gate decides a call against: the root, the working directory, and the root's hook settings. */
export function toolContext(input: HookInput, root: string, config: HookConfig): ToolContext {
  const cwd = typeof input.cwd === "string" && input.cwd.startsWith("/") ? input.cwd : root;
  const protect = protectContext(root, cwd);
  return {
    protect,
    env: { home: protect.home, cwd: protect.cwd, vars: { HOME: protect.home, PWD: protect.cwd, CLAUDE_PROJECT_DIR: root } },
    approveMarker: config.approve_marker,
    readOnlyTools: config.read_only_tools,
    leaseTools: config.lease_tools,
    bashReadOnly: config.bash_read_only,
    trustedPrograms: config.trusted_programs,
    path: process.env.PATH ?? "/usr/bin:/bin",
  };
}

const READ_TOOLS_HINT = "use the Read tool to look at files";

/**
 * A shell command that passed the gate, rewritten to run inside the OS boundary the lease chose
 * (`longrun sandbox`); the rest of the tool's input is kept as it was. Claude Code runs the
 * rewritten command and judges it by its own permission rules (the hook never answers "allow").
 */
function runInside(input: HookInput, shell: ShellRun, mode: "read" | "lease", root: string, config: HookConfig): HookOutput {
  if (config.sandbox === "off") return null;
  const args = (input.tool_input ?? {}) as Record<string, unknown>;
  const updatedInput = { ...args, [shell.field]: sandboxedCommand(shell.command, mode, root) };
  return { hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput } };
}

/** The gate. Deny with a reason, a shell command rewritten into its boundary, or nothing. */
export async function preToolUse(input: HookInput, root: string, config: HookConfig): Promise<HookOutput> {
  const d = await decideTool(input, toolContext(input, root, config));
  if (d.kind === "deny") return denyOutput(d.reason);
  if (d.kind === "pass") return d.shell ? runInside(input, d.shell, "read", root, config) : null;
  const ended = turnEndPending(root);
  if (ended) return denyOutput(`the last turn ended but longrun could not record it yet (${ended}), so writes are refused until the next message begins a turn`);
  const { contract, close } = await stateOnlyContract(root, LOCK_WAIT_MS.PreToolUse, true);
  const approve = `the user approves writes for one turn by starting a line of their message with ${config.approve_marker}`;
  try {
    await contract.requireWritable(d.action);
  } catch (e) {
    if (e instanceof WriteGateViolation) {
      const hint = d.shell && e.reason === "read_only" ? `; this command is not read-only (${d.notReadOnly ?? "unknown"}); in a read-only turn Bash runs only plain read commands (ls, cat, grep, git status/log/diff, …), or ${READ_TOOLS_HINT}` : "";
      const scoped = d.shell && e.reason === "out_of_scope" ? `; Bash can write anywhere, so a scoped lease covers it only when its scope includes Bash (${config.approve_marker} scope=…,Bash); use Edit or Write inside the scope` : "";
      return denyOutput(`${e.message}${hint}${scoped}; ${approve}`);
    }
    if (e instanceof LongrunError && e.kind === "no_active_task") {
      return denyOutput(`no task in ${root}, so nothing may be written; ${approve}${d.shell ? `; ${READ_TOOLS_HINT}` : ""}`);
    }
    throw e;
  } finally {
    close();
  }
  return d.shell ? runInside(input, d.shell, "lease", root, config) : null;
}

/**
 * Where a Stop that could not end its turn leaves word of it (`.longrun/`, or the server store's
 * state directory): while it is there the gate refuses writes, until a prompt begins a new turn.
 */
export function turnEndPath(root: string): string {
  const server = hookServerStore();
  return server ? `${server.stateDir}/turn_end_pending` : `${root}/${ROOT_PATHS.turnEnd}`;
}

function turnEndPending(root: string): string | null {
  const path = turnEndPath(root);
  return existsSync(path) ? `a Stop hook found the state busy or failing; see ${path}` : null;
}

function markTurnEnded(root: string, why: string): void {
  try {
    writeFileSync(turnEndPath(root), JSON.stringify({ at: new Date().toISOString(), why }) + "\n");
  } catch {
    // nowhere to leave word: the lease still ends at the next prompt's turn
  }
}

function clearTurnEnded(root: string): void {
  rmSync(turnEndPath(root), { force: true });
}

function context(event: ClaudeEvent, text: string): HookOutput {
  return { hookSpecificOutput: { hookEventName: event, additionalContext: text } };
}

function leaseLine(t: TaskState, marker: string): string {
  return t.lease
    ? `writes are approved for this turn (${t.lease.reason}${t.lease.scope ? `; scope ${t.lease.scope.join(", ")}` : ""})`
    : `writes are NOT approved: discuss and plan only; the user approves writes for one turn with a line starting ${marker}`;
}

/** Opens the full root (libSQL, memory) only on the paths that need memory. */
async function openRoot(root: string, lockTimeoutMs: number): Promise<Root> {
  return openScoped({ store: hookStore(root), scope: "full", options: { searchInWorker: false, lockTimeoutMs } });
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
