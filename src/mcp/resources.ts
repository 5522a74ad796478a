/**
 * What MCP offers besides tools: the current task and its last checkpoint as resources, and a
 * "resume this task" prompt that puts both in front of the model with the next steps. All reads:
 * nothing here changes the task (the prompt tells the model to call task_resume, which does).
 */
import type { ErrorObject } from "../rpc/errors.ts";
import { McpProtocolError } from "./args.ts";
import { askToApprove, mcpMessage, type Wording } from "./errors.ts";

/** Calls one protocol method as the agent; the answer's result or error. */
export type Call = (method: string, params?: Record<string, unknown>) => Promise<{ result?: Record<string, unknown>; error?: ErrorObject }>;

export const TASK_URI = "longrun://task/current";
export const CHECKPOINT_URI = "longrun://checkpoint/last";
export const RESUME_PROMPT = "resume_task";

/** MCP's code for an unknown resource URI. */
const RESOURCE_NOT_FOUND = -32002;

export const RESOURCES = [
  {
    uri: TASK_URI,
    name: "current_task",
    title: "Current task",
    description: "The current task as JSON: the user's request verbatim, status, next step, write approval, pending checkpoint ({\"task\": null} when there is none)",
    mimeType: "application/json",
  },
  {
    uri: CHECKPOINT_URI,
    name: "last_checkpoint",
    title: "Last checkpoint",
    description: "The text of the current task's last saved checkpoint: where it stood and the next step",
    mimeType: "text/plain",
  },
];

export const PROMPTS = [
  {
    name: RESUME_PROMPT,
    title: "Resume this task",
    description: "Pick up the current task where it left off: its request, status, last checkpoint and the steps to continue",
    arguments: [],
  },
];

interface Task {
  task_id: string;
  description: string;
  status: string;
  phase: string;
  next_step: string;
  turn_index: number;
  last_checkpoint: { memory_id: string; at: string } | null;
}

async function mustCall(call: Call, w: Wording, method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>> {
  const answer = await call(method, params);
  if (answer.error) throw new McpProtocolError(answer.error.code, mcpMessage(answer.error, w), answer.error.data ?? {});
  return answer.result ?? {};
}

/** The last checkpoint's text for people (the machine line left out), or null when there is none. */
async function checkpointText(call: Call, task: Task | null): Promise<string | null> {
  const id = task?.last_checkpoint?.memory_id;
  if (!id) return null;
  const got = await call("memory.get", { id });
  const content = (got.result?.record as { content?: string } | undefined)?.content;
  if (typeof content !== "string") return null;
  return content.replace(/\n?<!-- longrun-state: [\s\S]*?-->\s*$/, "").trimEnd();
}

export async function readResource(uri: string, call: Call, w: Wording) {
  if (uri === TASK_URI) {
    const status = await mustCall(call, w, "task.status");
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify({ task: status.task, pending_checkpoint: status.pending_checkpoint }) }] };
  }
  if (uri === CHECKPOINT_URI) {
    const task = (await mustCall(call, w, "task.status")).task as Task | null;
    const text = await checkpointText(call, task);
    return {
      contents: [{ uri, mimeType: "text/plain", text: text ?? (task ? `Task ${task.task_id} has no saved checkpoint yet` : "There is no task yet") }],
    };
  }
  throw new McpProtocolError(RESOURCE_NOT_FOUND, `Resource not found: ${JSON.stringify(uri)}; resources/list shows ${RESOURCES.map((r) => r.uri).join(" and ")}`, { uri });
}

export async function getPrompt(name: string, call: Call, w: Wording) {
  if (name !== RESUME_PROMPT) {
    throw new McpProtocolError(-32602, `Unknown prompt ${JSON.stringify(name)}; prompts/list shows ${RESUME_PROMPT}`, { kind: "invalid_params", prompt: name });
  }
  const task = (await mustCall(call, w, "task.status")).task as Task | null;
  const has = (tool: string) => w.offered.has(tool);
  let text: string;
  if (!task) {
    text = `There is no task in this project yet. Ask the user what to work on${has("task_start") ? ", then call task_start with their request in their words" : ""}.`;
  } else if (task.status === "completed" || task.status === "failed") {
    text = `The last task (${task.task_id}, "${task.description}") is ${task.status}; there is nothing to resume. Ask the user what to work on next${has("task_start") ? ", then call task_start" : ""}.`;
  } else {
    const checkpoint = await checkpointText(call, task);
    const steps = [
      task.status === "waiting_verification" && "The task waits for the user's verification: ask them to accept it or send it back, and change nothing meanwhile.",
      has("task_resume") && "Call task_resume: it begins a new turn on this task and returns recent memories.",
      task.status === "blocked" &&
        (has("task_transition") ? 'Once what blocked it is resolved, call task_transition with to: "in_progress".' : "It is blocked: ask the user whether what blocked it is resolved."),
      has("memory_search") && "Use memory_search before investigating anything again.",
      has("writes_require") && `Before every change, call writes_require; if it refuses, ${askToApprove(w)}.`,
      has("task_checkpoint") && 'Save progress with task_checkpoint (kind "progress") as you go, and before you stop.',
      has("task_finish") && "Call task_finish when the work is done.",
    ].filter((s): s is string => typeof s === "string");
    text = [
      "Resume this task where it left off.",
      "",
      `Task ${task.task_id}, the user's request in their words: ${task.description}`,
      `Status: ${task.status}; phase: ${task.phase || "-"}; next step: ${task.next_step || "-"}`,
      "",
      checkpoint ? `Last checkpoint:\n${checkpoint}` : "No checkpoint has been saved yet.",
      "",
      ...steps.map((s, i) => `${i + 1}. ${s}`),
    ].join("\n");
  }
  return {
    description: PROMPTS[0]!.description,
    messages: [{ role: "user" as const, content: { type: "text" as const, text } }],
  };
}
