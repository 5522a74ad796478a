/**
 * Refusals in the words of the MCP client: the tool to call next by its MCP name, and what the
 * user must do ("ask the user to approve: they type /approve …"). The protocol's messages, which
 * name JSON-RPC methods and "the host", stay as they are for the other front ends; this layer
 * rewrites them from the error's `kind` and fields, and falls back to renaming methods in the
 * original text. The machine-readable error (code, kind, fields) goes along unchanged.
 */
import type { ErrorKind, GateReason } from "../core/errors.ts";
import type { ErrorObject } from "../rpc/errors.ts";
import { TOOLS } from "./tool_sets.ts";

export interface Wording {
  /** MCP names of the tools this server offers. */
  offered: ReadonlySet<string>;
  /** What the user types at the start of a message to approve writes for that turn. */
  approve: string;
}

/** Host-side methods, in words for the agent: what the user does instead. */
const HOST_WORDS: Record<string, string> = {
  "writes.enable": "the user's approval",
  "turn.begin": "the user's next message",
  "turn.end": "the end of the turn",
  "adjust.receive": "the user",
  "run.grant": "the user's approval of the run",
  "run.refuse": "the user's refusal",
};

const TOOL_OF = new Map(TOOLS.map((t) => [t.method, t.name]));

function toolRef(method: string, w: Wording): string | null {
  if (method === "system.describe") return "tools/list";
  if (HOST_WORDS[method]) return HOST_WORDS[method]!;
  const name = TOOL_OF.get(method);
  if (!name) return null;
  return w.offered.has(name) ? name : `${name} (not offered by this server: the user can add it with --tools)`;
}

/** Method names and host wording in a protocol message, rewritten for an MCP agent. */
export function reword(text: string, w: Wording): string {
  const ask = askToApprove(w);
  return text
    .replace(/(?:have the host call|ask the host for) (?:writes\.enable|a lease)[^;.]*?(?= again|;|$)/g, ask)
    .replace(/then the host grants a new lease/g, `then ${ask}`)
    .replace(/\bthe host grants\b/g, "the user grants")
    .replace(/\bthe host\b/g, "the user")
    .replace(/\bthis root's\b/g, "this project's")
    .replace(/\bin this root\b/g, "in this project")
    .replace(/\b([a-z]+\.[a-z_]+)\b/g, (m) => toolRef(m, w) ?? m);
}

export function askToApprove(w: Wording, again = false): string {
  return `ask the user to approve${again ? " again" : ""} (they type ${w.approve} and what to allow at the start of their next message, e.g. "${w.approve} edit src/")`;
}

function tool(name: string, w: Wording, otherwise: string): string {
  return w.offered.has(name) ? `call ${name}` : otherwise;
}

const q = (v: unknown) => JSON.stringify(v);

/** The message an MCP agent reads for a refused call. */
export function mcpMessage(error: ErrorObject, w: Wording): string {
  const d = error.data ?? {};
  const ask = askToApprove(w);
  switch (d.kind as ErrorKind | undefined) {
    case "write_gate_violation": {
      const action = q(d.action);
      switch (d.reason as GateReason | undefined) {
        case "read_only":
          return `Not approved: ${action} is a change, and the user has not approved changes in this turn (turn ${d.turn}). Do not make it yet; ${ask}. ${w.offered.has("writes_request") ? "writes_request records what you need; " : ""}reading stays allowed`;
        case "stale_lease":
          return `Not approved: the user's approval was for turn ${d.lease_turn} and this is turn ${d.turn}, so it has ended. ${cap(askToApprove(w, true))}`;
        case "expired":
          return `Not approved: the user's approval ran out at ${d.expires_at}. ${cap(askToApprove(w, true))}`;
        case "uses_exhausted":
          return `Not approved: the user's approval allowed ${d.max_uses} change(s) and all were used. ${cap(askToApprove(w, true))}`;
        case "out_of_scope":
          return `Not approved: ${action} is outside what the user approved (${(d.scope as string[] | undefined)?.join(", ") ?? "a narrower scope"}). Stay inside it, or ${ask}`;
        case "not_in_progress":
          return `Not approved: the task is not in progress. ${cap(resumeAdvice(undefined, w))}, then ${ask}`;
      }
      break;
    }
    case "unauthorized":
      if (d.reason === "run_not_granted") {
        return `Not approved yet: run ${d.run_id} is your request, and the user has not approved it, so it begins nothing. Wait for the user to approve it (maybe narrowed) or refuse it; ${tool("run_get", w, "the run's status tells")} when it is running`;
      }
      if (d.reason === "parked_for_user") return `Run ${d.run_id} waits for the user: only the user wakes it, with the answer. Wait for it`;
      break;
    case "no_active_task":
      if (typeof d.status === "string") return `No open task: task ${d.task_id} is ${d.status}. ${cap(tool("task_start", w, "ask the user to start a new task"))} to begin a new one`;
      return `No task yet: ${tool("task_start", w, "ask the user to start a task")} with the user's request first`;
    case "transition_error":
      if (d.from === "completed" || d.from === "failed") {
        return `The task is already ${d.from}: nothing more can happen to it. For new work, ${tool("task_start", w, "ask the user to start a new task")}`;
      }
      break;
    case "limit_exceeded":
      return `Too large: ${q(d.field)} is ${d.actual}${d.unit === "value" ? "" : ` ${d.unit}`}, the most is ${d.limit}${d.unit === "value" ? "" : ` ${d.unit}`}; send less or split it`;
    case "conflict":
      if (d.reason === "not_in_progress") return `The task ${d.task_id} is ${d.status}, not in progress: ${resumeAdvice(d.status as string, w)} first`;
      break;
    case "checkpoint_write_error":
      return (
        `Checkpoint not saved: project memory could not be written (${d.cause}). ` +
        (d.pending_kept ? `It is kept, and ${w.offered.has("task_resume") ? "task_resume" : "the next resume"} saves it once storage works` : "It could not be kept either") +
        `; the approval to write has ended. Tell the user that storage needs attention`
      );
    case "state_corrupt":
      return `The task's state file is unreadable (${d.path}); nothing was changed. Tell the user; ${tool("task_recover", w, "they can run `longrun recover`")} to rebuild the task from its last checkpoint in memory`;
  }
  return reword(error.message, w);
}

/** How to get the task back to in_progress: resume a paused one, move any other (status unknown: both). */
function resumeAdvice(status: string | undefined, w: Wording): string {
  const transition = w.offered.has("task_transition") ? `call task_transition with to: "in_progress"` : "ask the user to move it back to in progress";
  if (status === "paused") return tool("task_resume", w, "ask the user to resume the task");
  if (status !== undefined) return transition;
  return `${tool("task_resume", w, "ask the user to resume it")} if it is paused, else ${transition}`;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
