/**
 * Reading `state.json` back into a `TaskState`. The file is input like any other: it is checked
 * with valibot, and anything that does not parse is `StateCorruptError` (never "no task").
 * A legacy file (no `format`, or no `write_lease_turn`) that says writable loads read-only: an
 * upgrade must not carry an old "writable" into a version where leases end with the turn.
 */
import * as v from "valibot";
import { StateCorruptError } from "../core/errors.ts";
import { revokeLease } from "../core/lease.ts";
import { TASK_STATUSES } from "../core/status.ts";
import { STATE_FORMAT, type TaskState } from "../core/task.ts";

const Int = v.pipe(v.number(), v.integer(), v.minValue(0));
const Str = v.string();
const Status = v.picklist(TASK_STATUSES);

const LeaseSchema = v.object({
  turn: Int,
  reason: Str,
  granted_by: Str,
  granted_at: Str,
  scope: v.nullable(v.array(Str)),
  expires_at: v.nullable(Str),
  max_uses: v.nullable(Int),
  uses: Int,
});

const StateSchema = v.object({
  format: v.optional(Int, 0),
  task_id: v.pipe(Str, v.minLength(1)),
  description: Str,
  keywords: v.optional(v.array(Str), []),
  status: Status,
  access_mode: v.picklist(["read_only", "writable"]),
  turn_index: v.optional(Int, 0),
  turn_message_id: v.optional(v.nullable(Str)),
  write_lease_turn: v.optional(v.nullable(Int)),
  lease: v.optional(v.nullable(LeaseSchema), null),
  phase: v.optional(Str, ""),
  next_step: v.optional(Str, ""),
  created_at: v.optional(Str, ""),
  updated_at: v.optional(Str, ""),
  version: v.optional(Int, 0),
  last_checkpoint: v.optional(
    v.nullable(v.object({
      checkpoint_id: Str,
      memory_id: Str,
      at: Str,
      kind: v.optional(Str),
      data: v.optional(v.record(Str, v.unknown())),
    })),
    null,
  ),
  history: v.optional(
    v.array(
      v.object({
        at: Str,
        from: v.nullable(Status),
        to: Status,
        reason: Str,
        turn: Int,
      }),
    ),
    [],
  ),
  forked_from: v.optional(v.nullable(v.object({ task_id: Str, checkpoint_id: Str }))),
  lease_log: v.optional(
    v.array(
      v.object({
        at: Str,
        event: v.picklist(["granted", "revoked", "requested"]),
        turn: Int,
        reason: Str,
        by: v.optional(Str),
        scope: v.optional(v.nullable(v.array(Str))),
      }),
    ),
    [],
  ),
});

export interface DecodedState {
  state: TaskState;
  /** True when the file was written by an older version (its lease, if any, was revoked on load). */
  legacy: boolean;
}

export function decodeState(text: string, path: string, now: Date): DecodedState {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new StateCorruptError(path, `not valid JSON (${(e as Error).message})`, e);
  }
  const parsed = v.safeParse(StateSchema, raw);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const where = issue.path?.map((p) => String(p.key)).join(".") || "(top level)";
    throw new StateCorruptError(path, `not a task state: ${where}: ${issue.message}`);
  }
  const o = parsed.output;
  if (o.format > STATE_FORMAT) {
    throw new StateCorruptError(path, `written by a newer longrun (format ${o.format}, this one reads up to ${STATE_FORMAT})`);
  }
  const legacy = o.format < STATE_FORMAT || o.write_lease_turn === undefined;
  const state: TaskState = {
    ...o,
    format: STATE_FORMAT,
    write_lease_turn: o.write_lease_turn ?? null,
  };
  if (legacy && (state.access_mode === "writable" || state.lease)) revokeLease(state, "legacy state loaded read-only", now);
  return { state, legacy };
}

export function encodeState(state: TaskState): string {
  return JSON.stringify(state, null, 2) + "\n";
}
