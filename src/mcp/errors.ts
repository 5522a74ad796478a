/**
 * Refusals in the words of the MCP client, in the project's language (src/core/messages/): the
 * tool to call next by its MCP name, and what the user must do to grant a write in this setup
 * (the `/approve` line where longrun's Claude Code hooks are installed; else `longrun grant
 * "reason"` in a terminal, or the status page). The protocol's messages, which name JSON-RPC
 * methods and "the host", stay as they are for the other front ends; this layer rewrites them from
 * the error's `kind` and fields, and falls back to renaming methods in the original text. The
 * machine-readable error (code, kind, fields) goes along unchanged.
 */
import type { ErrorKind, GateReason } from "../core/errors.ts";
import { cap, type Lang, type MessageId, say } from "../core/messages/catalog.ts";
import { unitSuffix } from "../core/messages/protocol.ts";
import type { ErrorObject } from "../rpc/errors.ts";
import { TOOLS } from "./tool_sets.ts";

export interface Wording {
  /** MCP names of the tools this server offers. */
  offered: ReadonlySet<string>;
  /** What the user types at the start of a message to approve writes for that turn (the Claude Code hooks are installed), or null: they run `longrun grant`. */
  approve: string | null;
  /** The language the project's people read (`.longrun/settings.json` `lang`). */
  lang: Lang;
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
  if (w.lang !== "en") return text.replace(/\b([a-z]+\.[a-z_]+)\b/g, (m) => (m === "system.describe" ? "tools/list" : TOOL_OF.has(m) ? TOOL_OF.get(m)! : m));
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

/** What to ask the user for, in the setup's words: the approval line where the hooks are installed, else `longrun grant` or the page. */
export function askToApprove(w: Pick<Wording, "approve" | "lang">, again = false): string {
  if (w.approve === null) return say(again ? "ask.cli_again" : "ask.cli", w.lang);
  return say(again ? "ask.approve_again" : "ask.approve", w.lang, { marker: w.approve });
}

/** `call <name>` when the server offers it, else what to ask the user instead. */
function tool(name: string, w: Wording, otherwise: MessageId): string {
  return w.offered.has(name) ? say("agent.call", w.lang, { tool: name }) : say(otherwise, w.lang);
}

const q = (v: unknown) => JSON.stringify(v);

/** The message an MCP agent reads for a refused call, in the project's language. */
export function mcpMessage(error: ErrorObject, w: Wording): string {
  const d = error.data ?? {};
  const L = w.lang;
  const ask = askToApprove(w);
  const askAgain = cap(askToApprove(w, true));
  switch (d.kind as ErrorKind | undefined) {
    case "write_gate_violation": {
      const action = q(d.action);
      switch (d.reason as GateReason | undefined) {
        case "read_only":
          return say("agent.gate.read_only", L, { action, turn: String(d.turn), ask, request: w.offered.has("writes_request") ? say("agent.request_hint", L) : "" });
        case "stale_lease":
          return say("agent.gate.stale_lease", L, { lease_turn: String(d.lease_turn), turn: String(d.turn), ask: askAgain });
        case "expired":
          return say("agent.gate.expired", L, { expires_at: String(d.expires_at), ask: askAgain });
        case "uses_exhausted":
          return say("agent.gate.uses_exhausted", L, { max_uses: String(d.max_uses), ask: askAgain });
        case "out_of_scope":
          return say("agent.gate.out_of_scope", L, { action, scope: (d.scope as string[] | undefined)?.join(", ") ?? "?", ask });
        case "not_in_progress":
          return say("agent.gate.not_in_progress", L, { resume: cap(resumeAdvice(undefined, w)), ask });
      }
      break;
    }
    case "unauthorized":
      if (d.reason === "run_not_granted") {
        return say("agent.run_not_granted", L, { run_id: String(d.run_id), status: w.offered.has("run_get") ? say("agent.run_status_tool", L) : say("agent.run_status_user", L) });
      }
      if (d.reason === "parked_for_user") return say("agent.parked", L, { run_id: String(d.run_id) });
      break;
    case "no_active_task":
      if (typeof d.status === "string") return say("agent.no_task_closed", L, { task_id: String(d.task_id), status: d.status, start: cap(tool("task_start", w, "agent.start_user_new")) });
      return say("agent.no_task", L, { start: tool("task_start", w, "agent.start_user") });
    case "transition_error":
      if (d.from === "completed" || d.from === "failed") return say("agent.transition_final", L, { from: d.from, start: tool("task_start", w, "agent.start_user_new") });
      break;
    case "limit_exceeded":
      return say("agent.limit", L, { field: q(d.field), actual: String(d.actual), limit: String(d.limit), unit: unitSuffix(d.unit) });
    case "conflict":
      if (d.reason === "not_in_progress") return say("agent.not_in_progress", L, { task_id: String(d.task_id), status: String(d.status), resume: resumeAdvice(d.status as string, w) });
      break;
    case "checkpoint_write_error": {
      const kept = d.pending_kept ? (w.offered.has("task_resume") ? "agent.checkpoint_kept_tool" : "agent.checkpoint_kept") : "agent.checkpoint_lost";
      return say("agent.checkpoint_write", L, { cause: String(d.cause), kept: say(kept, L) });
    }
    case "state_corrupt":
      return say("agent.state_corrupt", L, { path: String(d.path), recover: tool("task_recover", w, "agent.recover_user") });
  }
  return reword(error.message, w);
}

/** How to get the task back to in_progress: resume a paused one, move any other (status unknown: both). */
function resumeAdvice(status: string | undefined, w: Wording): string {
  const transition = say(w.offered.has("task_transition") ? "agent.transition_tool" : "agent.transition_user", w.lang);
  if (status === "paused") return tool("task_resume", w, "agent.resume_user");
  if (status !== undefined) return transition;
  return say("agent.resume_either", w.lang, { resume: tool("task_resume", w, "agent.resume_user_it"), transition });
}
