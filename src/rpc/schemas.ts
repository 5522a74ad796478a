/**
 * Param schemas of the contract and memory methods (valibot), snake_case, strict: an unknown
 * field is an error, not silently ignored. Every method also accepts an optional `root`.
 */
import * as v from "valibot";
import { CHECKPOINT_LANGS } from "../core/checkpoint.ts";
import { LIMITS } from "../core/limits.ts";
import { TASK_STATUSES } from "../core/status.ts";

export const shortText = (min = 1) => v.pipe(v.string(), v.minLength(min), v.maxLength(LIMITS.short_text_chars));
export const longText = (min = 1) => v.pipe(v.string(), v.minLength(min), v.maxLength(LIMITS.text_chars));
export const stringList = () =>
  v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(LIMITS.list_item_chars))), v.maxLength(LIMITS.list_items));
/** Text that names an action or a path: no control characters (NUL, newline, escape, …). */
const noControl = v.regex(/^[^\u0000-\u001f\u007f]*$/, "control characters (NUL, newlines, escapes) are not allowed in actions and paths");
export const actionText = () => v.pipe(v.string(), v.minLength(1), v.maxLength(LIMITS.short_text_chars), noControl);
export const patternList = () => v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(LIMITS.list_item_chars), noControl)), v.maxLength(LIMITS.list_items));
export const positiveInt = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(max));

const root = v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(4096)));

/** One memory record to save. */
const memoryItem = {
  type: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_-]{0,39}$/, "type is a short lowercase label such as note or decision")),
  title: shortText(),
  content: v.pipe(v.string(), v.maxLength(LIMITS.memory_content_chars)),
  keywords: v.optional(stringList()),
};

const memoryId = () => v.pipe(v.string(), v.regex(/^S_\d{1,15}$/, "a memory id looks like S_0001"));

/** A strict params object with the optional `root` every method accepts. */
// deno-lint-ignore no-explicit-any
export function params<E extends Record<string, v.GenericSchema<any, any>>>(entries: E) {
  return v.strictObject({ ...entries, root });
}

const isJsonObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** A JSON object param (`{...}`), not an array or a value. */
export const jsonObject = () => v.pipe(v.custom<Record<string, unknown>>(isJsonObject, "data is a JSON object ({...}), not an array or a value"), v.record(v.string(), v.unknown()));

/** A task of the root by id (`T_…`). */
export const taskId = () => v.pipe(v.string(), v.regex(/^T_[0-9A-Za-z_]{1,80}$/, "task_id is a task id such as T_20261130_120000_ab12 (task.list shows them)"));
/** A task of the root by id; absent: the current task. */
export const taskIdField = () => v.optional(taskId());

/** A checkpoint by id (task.checkpoints lists them). */
export const checkpointId = () => v.pipe(v.string(), v.regex(/^[0-9A-Za-z][0-9A-Za-z_.-]{0,79}$/, "checkpoint_id is a checkpoint id such as 0b6f3c1e-… (task.checkpoints lists them)"));

/** The host's id of a user message (`turn.begin`, `task.resume`): the same id begins no second turn. */
const messageId = () => v.pipe(v.string(), v.minLength(1), v.maxLength(LIMITS.list_item_chars), noControl);

export const S = {
  empty: params({}),
  taskStatus: params({ task_id: taskIdField() }),
  taskSwitch: params({ task_id: taskId(), reason: v.optional(shortText()) }),
  taskStart: params({ description: longText(), keywords: v.optional(stringList()) }),
  taskTransition: params({ to: v.picklist(TASK_STATUSES), reason: shortText(), task_id: taskIdField() }),
  taskCheckpoint: params({
    summary: longText(0),
    next_step: shortText(0),
    phase: v.optional(shortText(0)),
    kind: v.optional(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_.-]{0,39}$/, "kind is a short lowercase label"))),
    // the host's own state; its size (LIMITS.checkpoint_data_chars) is checked by the contract
    data: v.optional(v.pipe(v.custom<Record<string, unknown>>(isJsonObject, "data is a JSON object ({...}), not an array or a value"), v.record(v.string(), v.unknown()))),
    lang: v.optional(v.picklist(CHECKPOINT_LANGS, 'lang is "en", "zh" or "ko"')),
  }),
  taskFinish: params({ summary: v.optional(longText(0)), task_id: taskIdField(), cancel_runs: v.optional(v.boolean()) }),
  taskRecover: params({ force: v.optional(v.boolean()), checkpoint_id: v.optional(checkpointId()) }),
  taskCheckpoints: params({
    task_id: taskIdField(),
    limit: v.optional(positiveInt(LIMITS.checkpoints_page)),
    cursor: v.optional(v.pipe(v.string(), v.regex(/^S_\d{1,15}$/, "cursor must be a next_cursor value from an earlier task.checkpoints"))),
  }),
  checkpointGet: params({ checkpoint_id: checkpointId() }),
  taskFork: params({ checkpoint_id: checkpointId(), description: v.optional(longText()) }),
  taskDelete: params({ task_id: taskId(), reason: v.optional(shortText()), memories: v.optional(v.boolean()) }),
  taskResume: params({ message_id: v.optional(messageId()) }),
  turn: params({ reason: v.optional(shortText()) }),
  turnBegin: params({ reason: v.optional(shortText()), message_id: v.optional(messageId()) }),
  writesEnable: params({
    reason: shortText(),
    scope: v.optional(patternList()),
    ttl_seconds: v.optional(positiveInt(7 * 24 * 3600)),
    max_uses: v.optional(positiveInt(1_000_000)),
  }),
  writesRequest: params({ reason: shortText(), scope: v.optional(patternList()) }),
  writesRequire: params({ action: actionText() }),
  memorySave: params(memoryItem),
  memorySaveMany: params({ items: v.pipe(v.array(v.strictObject(memoryItem)), v.minLength(1), v.maxLength(LIMITS.save_many_items)) }),
  memorySearch: params({
    query: shortText(),
    limit: v.optional(positiveInt(LIMITS.search_limit)),
    type: v.optional(v.pipe(v.string(), v.maxLength(40))),
    cursor: v.optional(v.pipe(v.string(), v.regex(/^[or][0-9a-z]{1,11}$/, "cursor must be a next_cursor value from an earlier search"))),
  }),
  memoryGet: params({ id: memoryId() }),
  memoryForget: params({
    ids: v.optional(v.pipe(v.array(memoryId()), v.minLength(1), v.maxLength(LIMITS.save_many_items))),
    // or what memory.search finds for a query (optionally of one type), at most LIMITS.save_many_items a call
    query: v.optional(shortText()),
    type: v.optional(v.pipe(v.string(), v.maxLength(40))),
    dry_run: v.optional(v.boolean()),
    reason: v.optional(shortText()),
  }),
  memoryUpdate: params({ id: memoryId(), content: memoryItem.content, title: v.optional(shortText()), keywords: v.optional(stringList()) }),
};
