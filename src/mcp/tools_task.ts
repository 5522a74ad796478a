/**
 * The task, write-approval and memory tools: the default set a coding agent uses, plus the rarer
 * task tools of `--tools all`. Descriptions are written for the model; each tool's params are a
 * pick of its method's valibot params (tests/mcp/tool_list.test.ts checks they are the method's own).
 */
import { L } from "../rpc/ledger_schemas.ts";
import { S } from "../rpc/schemas.ts";
import { ADDS, ARRAY, BOOLEAN, ENDS, INTEGER, listOf, nullable, OBJECT, pickParams, READS, shape, STRING, TASK, type ToolDef } from "./tool_def.ts";

const CODING: ToolDef["sets"] = ["default", "research"];

export const taskTools: ToolDef[] = [
  {
    name: "task_status",
    method: "task.status",
    description:
      "The current task (null if none): the user's request, status, next step, whether changes are approved in this turn.",
    input: pickParams(S.taskStatus, {}),
    output: shape({ task: nullable(OBJECT), pending_checkpoint: nullable(OBJECT), runs: ARRAY, approvals: ARRAY }),
    hints: READS,
    sets: CODING,
  },
  {
    name: "task_start",
    method: "task.start",
    description:
      "Start a task for a new user request and make it current. Searches project memory first; returns related memories. Changes start unapproved.",
    input: pickParams(L.taskStart, { description: 'The user\'s request in their words, e.g. "Fix the flaky login test"' }),
    output: shape({ task: OBJECT, memories: ARRAY }),
    hints: ADDS,
    sets: CODING,
  },
  {
    name: "task_resume",
    method: "task.resume",
    description:
      "Continue the current task after a pause, restart or lost context: a new turn, changes unapproved. Returns the task and recent memories.",
    input: pickParams(S.taskResume, {}),
    output: shape({ task: OBJECT, memories: ARRAY }),
    hints: ADDS,
    sets: CODING,
  },
  {
    name: "writes_require",
    method: "writes.require",
    description:
      "Call before every change (file edit, command that writes), naming it. ok: true if the user approved it in this turn; else an error saying what to do.",
    input: pickParams(S.writesRequire, { action: 'The change, e.g. "edit src/login.ts"' }),
    output: shape({ ok: BOOLEAN, turn: INTEGER }),
    // not read-only: a lapsed approval is revoked, and an approval with a use count records each use
    hints: ADDS,
    sets: CODING,
  },
  {
    name: "writes_request",
    method: "writes.request",
    description:
      "Ask the user to approve changes. Recorded, never granted here: the user approves (e.g. types /approve), then writes_require passes.",
    input: pickParams(S.writesRequest, {
      reason: 'What and why, e.g. "fix the parser null check"',
      scope: 'Glob patterns of what you need, e.g. ["src/**"]',
    }),
    output: shape({ requested: BOOLEAN, granted: BOOLEAN }),
    hints: ADDS,
    sets: CODING,
  },
  {
    name: "task_checkpoint",
    method: "task.checkpoint",
    description:
      "Save where the task stands to memory, to go on after a restart or context reset. Pauses the task and ends approval unless kind is progress.",
    input: pickParams(S.taskCheckpoint, {
      summary: 'Done and open, e.g. "Parser fixed; 2 tests fail"',
      next_step: 'The next action, e.g. "run the parser tests"',
      kind: {
        description: 'progress: keep working; manual (default): pause. e.g. "progress"',
        shown: { type: "string", enum: ["manual", "progress"] },
        why: "the protocol takes any short label as kind; the model is offered the two that mean something to it",
      },
    }),
    output: shape({ text: STRING, memory_id: STRING, task: OBJECT }),
    hints: ADDS,
    sets: CODING,
  },
  {
    name: "task_finish",
    method: "task.finish",
    description: "Mark the current task completed and save its outcome to memory. Only when the work is done.",
    input: pickParams(S.taskFinish, { summary: 'The outcome, e.g. "Fixed: test raced token refresh"' }),
    output: shape({ task: OBJECT, memory_id: STRING }),
    hints: ENDS,
    sets: CODING,
  },
  {
    name: "task_transition",
    method: "task.transition",
    description:
      "Move the current task to another status: blocked (waiting on something), waiting_verification (done, for the user to check), in_progress, paused or failed. Leaving in_progress ends write approval.",
    input: pickParams(S.taskTransition, {
      to: 'The new status, e.g. "waiting_verification"',
      reason: 'Why, e.g. "done; please review the diff"',
    }),
    output: shape({ task: TASK }),
    hints: ENDS,
    sets: [],
  },
  {
    name: "task_list",
    method: "task.list",
    description: "Every task of this project, newest first, with its status and which one is current.",
    input: pickParams(S.empty, {}),
    output: shape({ tasks: listOf(shape({ task_id: STRING, status: STRING, current: BOOLEAN })) }),
    hints: READS,
    sets: [],
  },
  {
    name: "task_switch",
    method: "task.switch",
    description: "Make another open task current (from task_list). The turn ends; the task switched to starts with writes unapproved.",
    input: pickParams(S.taskSwitch, {
      task_id: 'The task to switch to, e.g. "T_20261130_120000_ab12"',
      reason: 'Why, e.g. "back to the parser work"',
    }),
    output: shape({ task: TASK }),
    hints: ADDS,
    sets: [],
  },
  {
    name: "task_recover",
    method: "task.recover",
    description:
      "Rebuild a lost or unreadable task state from the newest checkpoint in project memory; begins a new turn with writes unapproved. Only when task_status reports the state unreadable or missing.",
    input: pickParams(S.taskRecover, {}),
    output: shape({ task: nullable(TASK), memory_id: nullable(STRING) }),
    hints: ADDS,
    sets: [],
  },
  {
    name: "task_checkpoints",
    method: "task.checkpoints",
    description: "The checkpoints saved for the current task (or another from task_list), newest first: id, summary, next step, when. checkpoint_get reads one in full.",
    input: pickParams(S.taskCheckpoints, {
      task_id: 'A task from task_list, e.g. "T_20261130_120000_ab12"; default: the current task',
      limit: "Checkpoints per page (default 20, max 100), e.g. 10",
      cursor: 'next_cursor of the last page, e.g. "S_0012"',
    }),
    output: shape({ task_id: STRING, checkpoints: ARRAY, next_cursor: nullable(STRING) }),
    hints: READS,
    sets: ["research"],
  },
  {
    name: "checkpoint_get",
    method: "checkpoint.get",
    description: "Read one checkpoint in full (from task_checkpoints): its text and the data saved with it.",
    input: pickParams(S.checkpointGet, { checkpoint_id: 'A checkpoint_id from task_checkpoints, e.g. "0b6f3c1e-6a2d-4f55-9a57-2c1d0e8f9b10"' }),
    output: shape({ checkpoint: OBJECT }),
    hints: READS,
    sets: ["research"],
  },
];

export const memoryTools: ToolDef[] = [
  {
    name: "memory_search",
    method: "memory.search",
    description:
      "Search project memory (notes, decisions, past checkpoints) before investigating again; memory_get reads a hit in full.",
    input: pickParams(S.memorySearch, {
      query: 'Words to find, e.g. "login timeout"',
      limit: "Hits per page (default 10, max 50), e.g. 5",
      cursor: 'next_cursor of the last page, e.g. "o10"',
    }),
    output: shape({ hits: ARRAY, next_cursor: nullable(STRING) }),
    hints: READS,
    sets: CODING,
  },
  {
    name: "memory_get",
    method: "memory.get",
    description: "Read one memory record in full.",
    input: pickParams(S.memoryGet, { id: 'Record id, e.g. "S_0012"' }),
    output: shape({ record: OBJECT }),
    hints: READS,
    sets: CODING,
  },
  {
    name: "memory_save",
    method: "memory.save",
    description: "Save a note to project memory for later sessions: a finding, decision or pitfall. Returns its id.",
    input: pickParams(S.memorySave, {
      type: 'Lowercase label, e.g. "decision"',
      title: 'One line, e.g. "Auth uses JWT cookies"',
      content: 'The note, e.g. "Chose cookies because…"',
      keywords: 'Extra search words, e.g. ["auth"]',
    }),
    output: shape({ id: STRING, created: BOOLEAN }),
    hints: ADDS,
    sets: CODING,
  },
  {
    name: "memory_save_many",
    method: "memory.save_many",
    description: "Save up to 1,000 notes in one go (an import); returns their ids in order.",
    input: pickParams(S.memorySaveMany, {
      items: 'The notes, each {type, title, content, keywords?}, e.g. [{"type": "note", "title": "CI", "content": "CI runs on push"}]',
    }),
    output: shape({ ids: listOf(STRING), count: INTEGER }),
    hints: ADDS,
    sets: [],
  },
  {
    name: "memory_update",
    method: "memory.update",
    description: "Correct a note: saves a new version that replaces the old one in search (the old stays readable by id). Returns the new id.",
    input: pickParams(S.memoryUpdate, {
      id: 'The record to correct, e.g. "S_0012"',
      content: 'The corrected note, e.g. "Chose cookies because…"',
      title: 'A new title, if it changes, e.g. "Auth uses JWT cookies"',
      keywords: 'New search words, if they change, e.g. ["auth"]',
    }),
    output: shape({ id: STRING, created: BOOLEAN, supersedes: STRING }),
    hints: ADDS,
    sets: ["research"],
  },
];
