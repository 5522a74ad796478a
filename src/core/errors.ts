/**
 * Errors as data. Every condition a caller is expected to handle has one class, a stable `kind`
 * name and a JSON-RPC code from one table; the wire mapping (JSON-RPC error object, HTTP status)
 * is derived from these in one place (`src/rpc/errors.ts`).
 */
import { say } from "./messages/catalog.ts";
import { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR } from "./rpc_error.ts";

/** The error kinds of the contract that cross the wire, one class each below. */
export type ErrorKind =
  | "write_gate_violation"
  | "transition_error"
  | "checkpoint_write_error"
  | "state_corrupt"
  | "no_active_task"
  | "stale_epoch"
  | "budget_exhausted"
  | "unauthorized"
  | "limit_exceeded"
  | "conflict"
  | "not_found"
  | "storage_error"
  | "memory_corrupt"
  | "content_missing"
  | "idempotency_conflict";

/** The JSON-RPC layer's own kinds (a bad message, an unknown method, a bug): no class of the contract. */
export type ProtocolKind = "parse_error" | "invalid_request" | "method_not_found" | "invalid_params" | "internal";

/** What the wire and the server make of one error kind. */
export interface ErrorSpec {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** The HTTP status of its problem+json answer. */
  readonly http: number;
  /** The server's trouble, not the caller's: the HTTP server also writes it to its error log. */
  readonly serverFault: boolean;
  /** A failure of the storage itself, not of the request (what `classifyStorage` makes): a checkpoint still goes to the pending file. */
  readonly storage: boolean;
  /** When a caller gets it. */
  readonly means: string;
}

/**
 * The one table of error kinds (DESIGN.md "Errors"): every other view (`ERROR_CODES`, HTTP
 * statuses, server faults, storage kinds) is derived from it. A kind missing here fails to compile.
 * The order is the order `system.describe` lists them in.
 * @example ERRORS.storage_error.http // 507
 */
export const ERRORS = {
  write_gate_violation: { code: -32001, http: 403, serverFault: false, storage: false, means: "a write without a valid lease (reason: one of GATE_REASONS)" },
  transition_error: { code: -32002, http: 409, serverFault: false, storage: false, means: "a status change outside the whitelist" },
  checkpoint_write_error: { code: -32003, http: 503, serverFault: true, storage: false, means: "the memory save of a checkpoint failed; it waits in the pending file" },
  state_corrupt: { code: -32004, http: 500, serverFault: true, storage: false, means: "the state file cannot be read as a task state" },
  no_active_task: { code: -32005, http: 409, serverFault: false, storage: false, means: "no task in this root, or it is closed" },
  stale_epoch: { code: -32006, http: 409, serverFault: false, storage: false, means: "a run write from an executor that no longer owns the run" },
  budget_exhausted: { code: -32007, http: 429, serverFault: false, storage: false, means: "a run's budget has no room for this effect" },
  unauthorized: { code: -32008, http: 401, serverFault: false, storage: false, means: "this side (host or agent) may not do this" },
  limit_exceeded: { code: -32009, http: 413, serverFault: false, storage: false, means: "a payload, string or count over a documented limit" },
  conflict: { code: -32010, http: 409, serverFault: false, storage: true, means: "state changed underneath, or a lock was held past the wait" },
  not_found: { code: -32011, http: 404, serverFault: false, storage: false, means: "no such task, run, artifact or other item" },
  storage_error: { code: -32012, http: 507, serverFault: true, storage: true, means: "the disk or the database server refused a write or read" },
  memory_corrupt: { code: -32013, http: 500, serverFault: true, storage: true, means: "memory.db is not a readable database any more" },
  content_missing: { code: -32014, http: 410, serverFault: true, storage: false, means: "a deliverable's stored body is gone or damaged" },
  idempotency_conflict: { code: -32015, http: 409, serverFault: false, storage: false, means: "an idempotency key already used for another call" },
} as const satisfies Record<ErrorKind, ErrorSpec>;

/** The JSON-RPC layer's kinds, in the same shape (codes from the JSON-RPC 2.0 specification, in ./rpc_error.ts). */
export const PROTOCOL_ERRORS = {
  parse_error: { code: PARSE_ERROR, http: 400, serverFault: false, storage: false, means: "the message is not JSON" },
  invalid_request: { code: INVALID_REQUEST, http: 400, serverFault: false, storage: false, means: "the JSON is not a JSON-RPC request" },
  method_not_found: { code: METHOD_NOT_FOUND, http: 404, serverFault: false, storage: false, means: "no such method" },
  invalid_params: { code: INVALID_PARAMS, http: 422, serverFault: false, storage: false, means: "the params do not match the method's schema" },
  internal: { code: INTERNAL_ERROR, http: 500, serverFault: true, storage: false, means: "a failure that is not the caller's to fix" },
} as const satisfies Record<ProtocolKind, ErrorSpec>;

/** Every kind that crosses the wire, for lookups by a kind read off an error object. */
export const WIRE_ERRORS: ReadonlyMap<string, ErrorSpec> = new Map<string, ErrorSpec>([...Object.entries(ERRORS), ...Object.entries(PROTOCOL_ERRORS)]);

/** Each contract kind's JSON-RPC code (derived from `ERRORS`, in its order). */
export const ERROR_CODES: Readonly<Record<ErrorKind, number>> = Object.fromEntries(Object.entries(ERRORS).map(([kind, e]) => [kind, e.code])) as Record<ErrorKind, number>;

/** The kinds that are failures of the storage itself (derived from `ERRORS`). */
export const STORAGE_KINDS: ReadonlySet<string> = new Set(Object.entries(ERRORS).flatMap(([kind, e]) => (e.storage ? [kind] : [])));

/** Base class of every error longrun raises on purpose. `data` is what crosses the wire. */
export class LongrunError extends Error {
  readonly kind: ErrorKind;
  readonly data: Record<string, unknown>;

  constructor(kind: ErrorKind, message: string, data: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.kind = kind;
    this.data = { kind, ...data };
  }

  get code(): number {
    return ERRORS[this.kind].code;
  }
}

/** Why the write gate refused (`WriteGateViolation.reason`), in the order the gate checks them. */
export type GateReason = "read_only" | "stale_lease" | "not_in_progress" | "expired" | "uses_exhausted" | "out_of_scope";

/**
 * The write gate's reasons, each with what it means and an example (src/core/lease.ts decides).
 * These are `reason`s of the one kind `write_gate_violation`, not kinds of their own.
 */
export const GATE_REASONS = {
  read_only: { means: "no write lease: the host has not called writes.enable in this turn", example: "writes.require Write src/a.ts right after turn.begin" },
  stale_lease: { means: "the lease was granted in an earlier turn, which has ended", example: "a lease of turn 3 used in turn 4" },
  not_in_progress: { means: "the task is not in progress, so nothing may be written", example: "a write while the task is paused or waiting_verification" },
  expired: { means: "the lease's time to live ran out", example: "a lease with ttl_seconds 60 used 61 seconds later" },
  uses_exhausted: { means: "the lease's writes (max_uses) are all used", example: "the second write under a lease with max_uses 1" },
  out_of_scope: { means: "the action is outside the lease's scope", example: "Write README.md under a lease scoped to src/**" },
} as const satisfies Record<GateReason, { means: string; example: string }>;

/** Whether `reason` is one of the gate's reasons. */
export function isGateReason(reason: unknown): reason is GateReason {
  return typeof reason === "string" && Object.hasOwn(GATE_REASONS, reason);
}

/** The `kind` of a longrun error, also for one made by another bundle's copy of these classes (runtime/load.ts); null for anything else. */
export function errorKind(e: unknown): ErrorKind | null {
  const kind = (e as { kind?: unknown } | null)?.kind;
  return e instanceof Error && typeof kind === "string" && kind in ERRORS ? (kind as ErrorKind) : null;
}

/** A write was refused: no lease, a lease from another turn, or an action outside the lease's scope. */
export class WriteGateViolation extends LongrunError {
  constructor(
    message: string,
    readonly reason: GateReason,
    readonly action: string,
    readonly lease_turn: number | null,
    readonly turn: number,
    extra: Record<string, unknown> = {},
  ) {
    super("write_gate_violation", message, { reason, action, lease_turn, turn, ...extra });
  }
}

/** A status change outside the whitelist. `allowed` lists the legal targets from `from`. */
export class TransitionError extends LongrunError {
  constructor(readonly from: string, readonly to: string, readonly allowed: readonly string[], hint = "") {
    super(
      "transition_error",
      allowed.length
        ? `Transition refused: a task that is ${from} cannot become ${to}; it may become ${orList(allowed)}${hint}`
        : `Transition refused: the task is already ${from}, which is final${from === to ? "" : `, so it cannot become ${to}`}; start a new task with task.start${hint}`,
      { from, to, allowed: [...allowed] },
    );
  }
}

/** The memory save of a checkpoint failed: no checkpoint text was produced; the checkpoint waits in `pending_path`. */
export class CheckpointWriteError extends LongrunError {
  constructor(
    readonly pending_path: string,
    cause: unknown,
    after: { pendingError?: string | null; revokeError?: string | null } = {},
  ) {
    const kept = !after.pendingError;
    const where = kept
      ? `it is kept in ${pending_path} and the next task.resume saves it`
      : `it could not be kept in ${pending_path} either (${after.pendingError}): nothing of it was saved; fix the storage, then checkpoint again`;
    const lease = after.revokeError
      ? `; the write lease could not be ended in the database (${after.revokeError}): this process refuses writes, but stop the agent until task.resume succeeds`
      : "; the write lease has ended";
    super(
      "checkpoint_write_error",
      `Checkpoint not saved: the memory write failed (${describeCause(cause)}), so no checkpoint text was produced; ${where}${lease}`,
      { pending_path, pending_kept: kept, lease_revoked: !after.revokeError, cause: describeCause(cause), ...storageOf(cause) },
      { cause },
    );
  }
}

/** A storage kind under a wrapped error (disk full, read-only, corrupt), for the client to act on. */
function storageOf(cause: unknown): Record<string, unknown> {
  const e = cause as { kind?: unknown; data?: Record<string, unknown> } | null;
  if (e?.kind === "storage_error") return { storage: { kind: "storage_error", reason: e.data?.reason, path: e.data?.path } };
  if (e?.kind === "memory_corrupt") return { storage: { kind: "memory_corrupt", path: e.data?.path } };
  if (e?.kind === "conflict" && e.data?.reason === "lock_timeout") return { storage: { kind: "conflict", reason: "lock_timeout", path: e.data?.path } };
  return {};
}

/** The state file exists but cannot be read as a task state. It is never treated as "no task". */
export class StateCorruptError extends LongrunError {
  constructor(readonly path: string, detail: string, cause?: unknown) {
    super(
      "state_corrupt",
      `State file is unreadable: ${path}: ${detail}; it was left untouched. ` +
        `Call task.recover to rebuild the task from its newest checkpoint in memory (the bad file is kept aside)`,
      { path, detail },
      { cause },
    );
  }
}

export class NoActiveTaskError extends LongrunError {
  constructor(message = "No active task in this root: call task.start first", data: Record<string, unknown> = {}) {
    super("no_active_task", message, data);
  }
}

/** A run write carried an epoch older than the run's current one: another executor owns the run now. */
export class StaleEpochError extends LongrunError {
  constructor(readonly run_id: string, readonly epoch: number, readonly current_epoch: number) {
    super(
      "stale_epoch",
      `Run ${run_id} refused a write at epoch ${epoch}: it is now owned at epoch ${current_epoch}; ` +
        `this executor must stop, or run.claim the run again`,
      { run_id, epoch, current_epoch },
    );
  }
}

export class BudgetExhaustedError extends LongrunError {
  constructor(message: string, data: Record<string, unknown>) {
    super("budget_exhausted", message, data);
  }
}

/** The caller's side (host or agent) may not call this method. Nothing was changed. */
export class UnauthorizedError extends LongrunError {
  constructor(message: string, data: Record<string, unknown> = {}) {
    super("unauthorized", message, data);
  }
}

/** A payload, string or count is over a documented limit. Nothing was written. */
export class LimitExceededError extends LongrunError {
  constructor(readonly field: string, readonly limit: number, readonly actual: number, readonly unit: string, advice = "send less or split it") {
    super(
      "limit_exceeded",
      `Limit exceeded: ${measured(field, actual, limit, unit)}; ${advice}`,
      { field, limit, actual, unit },
    );
  }
}

/** "a, b or c". */
export function orList(items: readonly string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

/** A size over its limit, as a sentence: "length is 1000000000, more than the most allowed, 262144". */
function measured(field: string, actual: number, limit: number, unit: string): string {
  if (unit === "value") return `${field} is ${actual}, more than the most allowed, ${limit}`;
  if (unit === "items") return `${field} has ${actual} items, more than the most allowed, ${limit}`;
  if (unit === "characters" || unit === "bytes") return `${field} is ${actual} ${unit} long, more than the most allowed, ${limit} ${unit}`;
  return `${field} is ${actual} ${unit}, more than the most allowed, ${limit} ${unit}`;
}

/**
 * The stored body of a deliverable (an artifact version, an attachment, a context) is gone or no
 * longer matches its sha256: that item cannot be given back, but nothing else is wrong (the task
 * state, memory and the item's record are intact), so it is not a corrupt state.
 */
export class ContentMissingError extends LongrunError {
  constructor(readonly path: string, readonly item: string, readonly reason: "missing" | "mismatch", cause?: unknown) {
    const again = item.startsWith("context") ? "context.put stores it again under a new ref" : "artifact.put stores it again as a new version";
    super(
      "content_missing",
      `Content missing: the stored body of ${item} ${reason === "missing" ? "is gone" : "no longer matches its sha256 (damaged)"}: ${path}; ` +
        `the task and the item's record are intact. Restore that file from a backup, or ${again}`,
      { path, item, reason },
      { cause },
    );
  }
}

/** An idempotency key already used for another call (another method, or other params). Nothing was done. */
export class IdempotencyConflictError extends LongrunError {
  constructor(readonly key: string, readonly method: string, readonly first_method: string) {
    super(
      "idempotency_conflict",
      `Refused: idempotency_key ${JSON.stringify(key)} was already used for ${first_method === method ? `${method} with other params` : first_method}, ` +
        `so this call was not carried out; use a new key for a new call, or repeat the first call exactly to get its answer`,
      { key, method, first_method },
    );
  }
}

/** State changed underneath: a compare-and-swap on the state version lost. Re-read and retry. */
export class ConflictError extends LongrunError {
  constructor(message: string, data: Record<string, unknown> = {}) {
    super("conflict", message, data);
  }
}

export class NotFoundError extends LongrunError {
  constructor(readonly what: string, readonly id: string, hint = "", message?: string) {
    super("not_found", message ?? `Not found: no ${what} ${JSON.stringify(id)} in this root${hint}`, { what, id });
  }
}

/** Why storage failed, in terms a caller can act on. */
export type StorageFault = "disk_full" | "read_only" | "io" | "missing" | "too_many_files" | "unreachable" | "refused";

/** The disk or file system refused a write or read (full, read-only, failing, gone). Nothing was claimed saved. */
export class StorageError extends LongrunError {
  constructor(readonly reason: StorageFault, readonly path: string, detail: string, cause?: unknown) {
    const what = say(`storage.${reason}`, "en");
    super("storage_error", `Storage failed at ${path}: ${what} (${detail})`, { reason, path, detail }, { cause });
  }
}

/** memory.db is not a readable database any more (truncated, overwritten, damaged). */
export class MemoryCorruptError extends LongrunError {
  constructor(readonly path: string, detail: string, cause?: unknown) {
    super(
      "memory_corrupt",
      `Memory is unreadable: ${path} (${detail}). Nothing was written. Stop the processes using this root and restore memory.db from a backup; ` +
        `or, to go on without it, run \`longrun recover --accept-memory --root <dir>\` (the damaged file is kept aside, and a new memory begins)`,
      { path, detail },
      { cause },
    );
  }
}

export function describeCause(cause: unknown): string {
  if (cause instanceof Error) return cause.message;
  return String(cause);
}

/** A failure that is not the caller's to fix by changing the request; -32603 on the wire, message kept. */
export class InternalError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = "InternalError";
  }
}
