/**
 * The task contract (seed 002): I1 search before create, I2 memory before checkpoint, I3 a write
 * lease covers one turn. Every mutation runs inside `StateStore.transact` (one root-wide lock,
 * compare-and-swap on `version`), on a copy of the state, and is saved only when whole.
 */
import { type CheckpointData, type CheckpointLang, machineLine, parseMachineLine, renderCheckpoint } from "./checkpoint.ts";
import {
  CheckpointWriteError,
  ConflictError,
  describeCause,
  InternalError,
  LimitExceededError,
  LongrunError,
  NoActiveTaskError,
  NotFoundError,
  StateCorruptError,
  TransitionError,
  UnauthorizedError,
  WriteGateViolation,
} from "./errors.ts";
import { extractKeywords, normalizeKeywords } from "./keywords.ts";
import { LIMITS } from "./limits.ts";
import { asSeen, checkGate, consumeUse, type GrantInput, grantLease, revokeLease } from "./lease.ts";
import type {
  Clock,
  CrashPoint,
  IdSource,
  MemoryHit,
  MemoryStore,
  NewMemory,
  PendingCheckpoint,
  PendingStore,
  StateStore,
  StateTx,
} from "./ports.ts";
import { assertTransition, isTerminal, type TaskStatus, TRANSITIONS } from "./status.ts";
import { cloneState, type Lease, newTaskState, pushBounded, type TaskState } from "./task.ts";

/** Failures of the storage itself (not of the request): a checkpoint still goes to the pending file. */
const STORAGE_KINDS: ReadonlySet<string> = new Set(["conflict", "storage_error", "memory_corrupt"]);

export interface ContractDeps {
  state: StateStore;
  pending: PendingStore;
  memory: MemoryStore;
  clock: Clock;
  ids: IdSource;
  crash?: CrashPoint;
  /** The root's checkpoint language (its settings), when it has one; a request's `lang` wins. */
  checkpointLang?: () => CheckpointLang | null;
}

export interface CheckpointInput {
  summary: string;
  next_step: string;
  phase?: string;
  /**
   * A label for the record (`manual`, `stop`, …). `progress` makes a progress checkpoint: saved in
   * the same order with the same fallback, but the task keeps running and the lease stands.
   */
  kind?: string;
  /**
   * The host's own state (a JSON object, at most `LIMITS.checkpoint_data_chars` as compact JSON):
   * saved in the checkpoint's machine line and in the task's `last_checkpoint`, given back by
   * resume and recover, so a loop never parses its position back out of `next_step`. Omitted, the
   * last checkpoint's data is carried over; `{}` clears it.
   */
  data?: CheckpointData;
  /** The language of the text for people (`en`, `zh`, `ko`); default: the root's setting, else English. */
  lang?: CheckpointLang;
}

/** Who asks: the host speaks for the user (and verifies); the agent does the work. */
export type Actor = "host" | "agent";

/** The checkpoint kind that neither pauses the task nor revokes the lease. */
export const PROGRESS_KIND = "progress";

export interface PendingInfo {
  path: string;
  checkpoint_id: string;
  task_id: string;
  created_at: string;
  error: string | null;
  /** The checkpoint could not be kept at all (the file is an empty marker): nothing will be replayed. */
  lost?: true;
}

export interface ReplayInfo {
  checkpoint_id: string;
  memory_id: string;
  /** False when memory already held this checkpoint (an earlier replay got that far). */
  created: boolean;
}

/** How many memories task.start / task.resume return. */
export const CONTEXT_MEMORIES = 8;

export class TaskContract {
  readonly #d: ContractDeps;
  /**
   * A failed checkpoint whose lease could not be ended in the database: this process refuses
   * writes while the stored task is still at (or before) this version.
   */
  #voidLease: { through_version: number } | null = null;

  constructor(deps: ContractDeps) {
    this.#d = deps;
  }

  #crash(point: string): void {
    this.#d.crash?.(point);
  }

  #now(): Date {
    return this.#d.clock.now();
  }

  async #mustLoad(tx: StateTx | StateStore): Promise<TaskState> {
    const state = await tx.load();
    if (!state) throw new NoActiveTaskError();
    return state;
  }

  /** The task, which must exist and not be finished (completed or failed). */
  async #mustBeOpen(tx: StateTx, what: string): Promise<TaskState> {
    const state = await this.#mustLoad(tx);
    if (isTerminal(state.status)) {
      throw new NoActiveTaskError(`${what}: task ${state.task_id} is ${state.status}; start a new task with task.start`, {
        task_id: state.task_id,
        status: state.status,
      });
    }
    return state;
  }

  /** Saves `next` as the successor of `prev` (version + 1, updated_at now). */
  async #commit(tx: StateTx, prev: TaskState | null, next: TaskState, now: Date): Promise<TaskState> {
    next.version = (prev?.version ?? 0) + 1;
    next.updated_at = now.toISOString();
    await tx.save(next, prev ? prev.version : null);
    return next;
  }

  #setStatus(state: TaskState, to: TaskStatus, reason: string, now: Date): void {
    assertTransition(state.status, to);
    state.history = pushBounded(state.history, {
      at: now.toISOString(),
      from: state.status,
      to,
      reason,
      turn: state.turn_index,
    });
    if (state.status === "in_progress" && to !== "in_progress") revokeLease(state, `status ${to}`, now);
    state.status = to;
  }

  /** The current task, or null; with the pending checkpoint, if one waits. */
  async status(taskId?: string): Promise<{ task: TaskState | null; pending_checkpoint: PendingInfo | null }> {
    const current = await this.#d.state.load();
    const now = this.#now();
    if (taskId === undefined || current?.task_id === taskId) {
      const pending = await this.#pendingInfo();
      // what the gate would answer: a lease past its turn, time or uses, or ended by a checkpoint
      // that failed (pending, or its lease not ended in storage), reads as read-only
      const ended = pending !== null || (current !== null && this.#leaseVoided(current));
      return { task: current && asSeen(current, now, ended), pending_checkpoint: pending };
    }
    const task = await this.#d.state.loadTask(taskId);
    if (!task) throw new NotFoundError("task", taskId, "; task.list shows the tasks of this root");
    return { task: asSeen(task, now), pending_checkpoint: null };
  }

  #leaseVoided(seen: TaskState): boolean {
    return this.#voidLease !== null && seen.version <= this.#voidLease.through_version;
  }

  async #pendingInfo(): Promise<PendingInfo | null> {
    if (this.#d.pending.lost()) {
      return { path: this.#d.pending.path, checkpoint_id: "", task_id: "", created_at: "", error: "a checkpoint failed and could not be kept (storage full or failing): nothing to replay; task.resume clears this", lost: true };
    }
    const p = await this.#d.pending.read();
    if (!p) return null;
    return {
      path: this.#d.pending.path,
      checkpoint_id: p.checkpoint_id,
      task_id: p.task_id,
      created_at: p.created_at,
      error: p.error,
    };
  }

  /**
   * I1: searches this root's memory (given keywords, else keywords from the description) before
   * any state is created, then creates the task: in_progress, read-only, turn 1.
   */
  /**
   * Starts a task and makes it the root's current task (read-only, turn 1). A task that was
   * current and is still open goes on in the background (its runs keep running), but its lease
   * ends here: a lease never moves from one task to another. The new task inherits nothing.
   */
  async startTask(description: string, keywords?: readonly string[]): Promise<{ task: TaskState; memories: MemoryHit[]; previous_task: string | null }> {
    await this.#d.state.load(); // an unreadable current state is state_corrupt before any search
    const terms = normalizeKeywords(keywords) ?? extractKeywords(description);
    // Even when no keyword can be extracted the search runs (on the description itself): an
    // empty result is fine, a skipped search is not.
    const found = await this.#d.memory.search(terms.length ? terms : description, { limit: CONTEXT_MEMORIES });
    return this.#d.state.transact(async (tx) => {
      const existing = await tx.load();
      const now = this.#now();
      const at = now.toISOString();
      // a task id is the time to the second and 16 random bits: one already taken in this root is
      // drawn again here, under the write lock, so no task is ever overwritten by a new one
      let taskId = this.#d.ids.taskId(now);
      for (let draw = 1; (await tx.loadTask(taskId)) !== null; draw++) {
        if (draw >= 16) throw new ConflictError(`Task not started: no free task id could be drawn for ${at}; retry`, { reason: "task_id_taken" });
        taskId = this.#d.ids.taskId(now);
      }
      const state = newTaskState(
        {
          task_id: taskId,
          description,
          keywords: terms,
          status: "pending",
          turn_index: 1,
          history: [{ at, from: null, to: "pending", reason: "task created", turn: 1 }],
        },
        at,
      );
      const previous = existing && !isTerminal(existing.status) ? await this.#leaveCurrent(tx, existing, `task ${state.task_id} became the current task`, now) : existing;
      this.#setStatus(state, "in_progress", "start_task", now);
      await this.#commit(tx, previous, state, now);
      return { task: state, memories: found.hits, previous_task: existing && !isTerminal(existing.status) ? existing.task_id : null };
    });
  }

  /** The current task stops being current: its lease ends (the turn ends for it); it keeps its status. */
  async #leaveCurrent(tx: StateTx, live: TaskState, why: string, now: Date): Promise<TaskState> {
    const next = revokeLease(cloneState(live), why, now);
    next.version = live.version + 1;
    next.updated_at = now.toISOString();
    await tx.saveTask(next, live.version);
    return next;
  }

  /**
   * Makes another open task of the root the current one. The turn ends: the task left behind
   * loses its lease, and the task switched to starts read-only (a lease never moves between tasks).
   */
  switchTask(taskId: string, reason = "switched"): Promise<TaskState> {
    return this.#d.state.transact(async (tx) => {
      const existing = await tx.load();
      if (existing?.task_id === taskId) return existing;
      const target = await tx.loadTask(taskId);
      if (!target) throw new NotFoundError("task", taskId, "; task.list shows the tasks of this root");
      if (isTerminal(target.status)) {
        throw new ConflictError(`Task ${taskId} is ${target.status}; a finished task cannot become current again (task.start begins a new one)`, {
          reason: "task_finished",
          task_id: taskId,
          status: target.status,
        });
      }
      const now = this.#now();
      if (existing && !isTerminal(existing.status)) await this.#leaveCurrent(tx, existing, `switched to task ${taskId}`, now);
      const next = revokeLease(cloneState(target), `became current again (${reason})`, now);
      next.version = target.version + 1;
      next.updated_at = now.toISOString();
      await tx.saveTask(next, target.version);
      await tx.setCurrent(taskId);
      return next;
    });
  }

  /** The task a call addresses: the current one, or another by id (which must exist). */
  async #target(tx: StateTx, taskId: string | undefined): Promise<{ live: TaskState; current: boolean }> {
    const current = await tx.load();
    if (taskId === undefined || current?.task_id === taskId) {
      if (!current) throw new NoActiveTaskError();
      return { live: current, current: true };
    }
    const live = await tx.loadTask(taskId);
    if (!live) throw new NotFoundError("task", taskId, "; task.list shows the tasks of this root");
    return { live, current: false };
  }

  /** Saves a change of the addressed task: the current one by `#commit`, another by its own version. */
  async #commitTarget(tx: StateTx, live: TaskState, next: TaskState, now: Date, current: boolean): Promise<TaskState> {
    if (current) return this.#commit(tx, live, next, now);
    next.version = live.version + 1;
    next.updated_at = now.toISOString();
    await tx.saveTask(next, live.version);
    return next;
  }

  /**
   * Host side: a new user message began. Advances the turn and revokes any lease; given the
   * message's id, a message that already began this turn (by turn.begin or task.resume) begins
   * no second one, and the task comes back unchanged.
   */
  beginTurn(reason = "turn began", messageId?: string): Promise<TaskState> {
    return this.#d.state.transact(async (tx) => {
      const live = await this.#mustBeOpen(tx, "No turn begun");
      if (messageId !== undefined && live.turn_message_id === messageId) return live;
      const now = this.#now();
      const next = cloneState(live);
      next.turn_index = live.turn_index + 1;
      next.turn_message_id = messageId ?? null;
      revokeLease(next, reason, now);
      return this.#commit(tx, live, next, now);
    });
  }

  /** Host side: the turn ended. Revokes any lease; the turn number stays. */
  endTurn(reason = "turn ended"): Promise<TaskState> {
    return this.#d.state.transact(async (tx) => {
      const live = await this.#mustBeOpen(tx, "No turn ended");
      const now = this.#now();
      return this.#commit(tx, live, revokeLease(cloneState(live), reason, now), now);
    });
  }

  /** Host side: grants a write lease for the current turn only. */
  enableWrites(input: GrantInput): Promise<TaskState> {
    return this.#d.state.transact(async (tx) => {
      const live = await this.#mustLoad(tx);
      this.#requireWorkable(live, "Writes not granted");
      const now = this.#now();
      return this.#commit(tx, live, grantLease(cloneState(live), input, now), now);
    });
  }

  #requireWorkable(live: TaskState, what: string): void {
    if (isTerminal(live.status)) {
      throw new NoActiveTaskError(`${what}: task ${live.task_id} is ${live.status}; start a new task with task.start`, {
        task_id: live.task_id,
        status: live.status,
      });
    }
    if (live.status !== "in_progress") {
      throw new ConflictError(
        `${what}: task ${live.task_id} is ${live.status}, not in_progress; ` +
          `call task.resume or task.transition to in_progress first`,
        { reason: "not_in_progress", task_id: live.task_id, status: live.status },
      );
    }
  }

  /** Agent side: asks for a lease. Recorded for the host to see; it never grants anything. */
  requestWrites(reason: string, scope: readonly string[] | null, by: string): Promise<TaskState> {
    return this.#d.state.transact(async (tx) => {
      const live = await this.#mustBeOpen(tx, "Nothing requested");
      const now = this.#now();
      const next = cloneState(live);
      next.lease_log = pushBounded(next.lease_log, {
        at: now.toISOString(),
        event: "requested",
        turn: live.turn_index,
        reason,
        by,
        scope: scope && scope.length ? [...scope] : null,
      });
      return this.#commit(tx, live, next, now);
    });
  }

  /**
   * I3 gate check. Answers from a lock-free read when nothing must change; a stale lease is
   * revoked (and a counted use recorded) under the lock, re-checked there.
   */
  async requireWritable(action: string): Promise<{ action: string; turn: number; lease: Lease }> {
    const seen = await this.#mustLoad(this.#d.state);
    if (this.#leaseVoided(seen)) {
      throw new WriteGateViolation(
        `Write refused: ${JSON.stringify(action)}: a checkpoint failed and its lease could not be ended in storage; ` +
          `task.resume (once storage works) begins a new turn, then the host grants a new lease`,
        "read_only",
        action,
        seen.write_lease_turn,
        seen.turn_index,
      );
    }
    if (this.#d.pending.exists()) {
      const lost = this.#d.pending.lost();
      throw new WriteGateViolation(
        lost
          ? `Write refused: ${JSON.stringify(action)}: a checkpoint failed and could not be kept (storage full or failing; ${this.#d.pending.path} marks it), and the turn's lease ended with it; ` +
            `task.resume (once storage works) begins a new turn, then the host grants a new lease`
          : `Write refused: ${JSON.stringify(action)}: a checkpoint could not be saved and waits in ${this.#d.pending.path}, and the turn's lease ended with it; ` +
            `task.resume saves it, then the host grants a new lease`,
        "read_only",
        action,
        seen.write_lease_turn,
        seen.turn_index,
        { pending_path: this.#d.pending.path },
      );
    }
    const first = checkGate(seen, action, this.#now());
    if (first.ok && !first.consumes_use) return { action, turn: seen.turn_index, lease: first.lease };
    if (!first.ok && !first.revoke) throw first.error;
    // a refusal is thrown after the transaction: its revocation must commit, not roll back
    const out = await this.#d.state.transact(async (tx) => {
      const live = await this.#mustLoad(tx);
      const now = this.#now();
      const decision = checkGate(live, action, now);
      if (!decision.ok) {
        if (decision.revoke) await this.#commit(tx, live, revokeLease(cloneState(live), decision.error.reason, now), now);
        return { refused: decision.error };
      }
      if (!decision.consumes_use) return { ok: { action, turn: live.turn_index, lease: decision.lease } };
      const next = await this.#commit(tx, live, consumeUse(cloneState(live)), now);
      return { ok: { action, turn: next.turn_index, lease: next.lease! } };
    });
    if ("refused" in out) throw out.refused;
    return out.ok;
  }

  /**
   * A whitelisted status change; leaving in_progress revokes the lease. Leaving
   * waiting_verification is the verifier's decision: the host's, never the agent's.
   */
  transition(to: TaskStatus, reason: string, by: Actor = "host", taskId?: string): Promise<TaskState> {
    return this.#d.state.transact(async (tx) => {
      const { live, current } = await this.#target(tx, taskId);
      refuseSelfVerification(live, by, `task.transition to ${to}`);
      if (isTerminal(to)) await refuseOpenRuns(tx, live, `task.transition to ${to}`);
      const now = this.#now();
      const next = cloneState(live);
      this.#setStatus(next, to, reason, now);
      return this.#commitTarget(tx, live, next, now, current);
    });
  }

  /**
   * I2, by construction: on a copy of the task, revoke the lease (unless it is a progress
   * checkpoint), render the text with its machine line, and save the memory record and the new
   * state in one commit; only then return the text. A checkpoint still pending from an earlier
   * failure goes to memory first, in that same commit. If the commit fails, nothing of it is
   * saved: the checkpoint goes to the pending file (the gate reads the root as read-only while it
   * waits), the live state's lease is revoked, and `CheckpointWriteError` names the file; no text
   * is returned.
   */
  async checkpoint(input: CheckpointInput): Promise<{ text: string; memory_id: string; task: TaskState }> {
    checkDataSize(input.data);
    let prepared: { pending: PendingCheckpoint; waiting: boolean } | null = null;
    try {
      const out = await this.#d.state.transact(async (tx) => {
        const live = await this.#mustLoad(tx);
        if (isTerminal(live.status)) throw new TransitionError(live.status, "paused", TRANSITIONS[live.status]);
        const waiting = await this.#d.pending.read();
        // an older checkpoint still pending goes first, and its effect with it (a pause ends the
        // lease): this one is drafted from the task as the older one left it
        const base = !waiting || waiting.task_id !== live.task_id
          ? live
          : live.last_checkpoint?.checkpoint_id !== waiting.checkpoint_id
          ? applyCheckpoint(live, waiting, "", this.#now())
          : revokeLease(cloneState(live), "checkpoint replayed", this.#now()); // applied already (by a resume): its end of the lease still holds
        const { working, text, record, checkpointId, savedAt } = this.#draftCheckpoint(base, input);
        prepared = {
          waiting: waiting !== null,
          pending: { format: 1, checkpoint_id: checkpointId, task_id: working.task_id, created_at: savedAt, error: null, record, state: cloneState(working) },
        };

        if (waiting) await tx.saveMemory(waiting.record); // the older checkpoint first, never lost
        const memoryId = (await tx.saveMemory(record)).record.id;
        working.last_checkpoint = { ...working.last_checkpoint!, memory_id: memoryId };
        await tx.save(working, live.version);
        this.#crash("checkpoint.before_commit");
        return { text, memory_id: memoryId, task: working, replayed: waiting !== null };
      });
      this.#crash("checkpoint.after_commit");
      if (out.replayed || this.#d.pending.lost()) await this.#d.pending.clear();
      this.#crash("checkpoint.before_reply");
      return { text: out.text, memory_id: out.memory_id, task: out.task };
    } catch (cause) {
      let p = prepared as { pending: PendingCheckpoint; waiting: boolean } | null;
      if (p === null) {
        // refused on its merits (no task, finished, unreadable state): nothing was attempted
        if (cause instanceof LongrunError && !STORAGE_KINDS.has(cause.kind)) throw cause;
        // the transaction never began (the database locked or failing): the checkpoint is made
        // from a lock-free read and kept in the pending file all the same, never lost
        p = await this.#prepareWithoutLock(input).catch(() => null);
        if (p === null) throw await this.#checkpointUndrafted(cause);
      }
      const failed = await this.#checkpointFailed(p.waiting ? null : { ...p.pending, error: describeCause(cause) }, p.pending.state.version - 1);
      throw new CheckpointWriteError(this.#d.pending.path, cause, { pendingError: failed.kept, revokeError: failed.revoked });
    }
  }

  /**
   * A checkpoint of `live`, not yet saved: on a copy, the lease revoked and the task paused (unless
   * it is a progress checkpoint), its text rendered with the machine line, its memory record.
   */
  #draftCheckpoint(live: TaskState, input: CheckpointInput) {
    const now = this.#now();
    const working = cloneState(live);
    if (input.kind !== PROGRESS_KIND) {
      revokeLease(working, "checkpoint", now);
      if (working.status === "in_progress") this.#setStatus(working, "paused", `checkpoint (${input.kind ?? "manual"})`, now);
    }
    if (input.phase !== undefined) working.phase = input.phase;
    working.next_step = input.next_step;
    working.version = live.version + 1;
    working.updated_at = now.toISOString();
    const checkpointId = this.#d.ids.checkpointId();
    const savedAt = now.toISOString();
    const kind = input.kind ?? "manual";
    // omitted: the last checkpoint's data goes on (a hook's or a person's checkpoint never drops the host's state)
    const data = input.data ?? live.last_checkpoint?.data ?? {};
    const lang = input.lang ?? this.#rootLang();
    const text = renderCheckpoint(working, { summary: input.summary, kind, data, lang }, checkpointId, savedAt);
    const record = checkpointRecord(working, text, checkpointId);
    working.last_checkpoint = { checkpoint_id: checkpointId, memory_id: "", at: savedAt, kind, data };
    return { working, text, record, checkpointId, savedAt };
  }

  /** The root's checkpoint language; a setting that cannot be read never stops a checkpoint (English then). */
  #rootLang(): CheckpointLang {
    try {
      return this.#d.checkpointLang?.() ?? "en";
    } catch {
      return "en";
    }
  }

  /** A checkpoint's pending form from a lock-free read of the state (for a transaction that could not begin). */
  async #prepareWithoutLock(input: CheckpointInput): Promise<{ pending: PendingCheckpoint; waiting: boolean } | null> {
    let live: TaskState | null;
    try {
      live = await this.#d.state.load();
    } catch (e) {
      // the store cannot even be read (a server unreachable): drafted from the task as this
      // process last saw it; the replay applies it to the task as it then is (resume, checkpoint)
      live = e instanceof LongrunError && e.kind === "storage_error" ? (this.#d.state.lastKnown?.() ?? null) : null;
      if (!live) throw e;
    }
    if (!live || isTerminal(live.status)) return null;
    const { working, record, checkpointId, savedAt } = this.#draftCheckpoint(live, input);
    return { waiting: this.#d.pending.exists() && !this.#d.pending.lost(), pending: { format: 1, checkpoint_id: checkpointId, task_id: working.task_id, created_at: savedAt, error: null, record, state: cloneState(working) } };
  }

  /**
   * A checkpoint that failed before the task could even be read (memory.db gone, the server
   * unreachable): nothing can be drafted, but the lease ends all the same. The empty pending
   * marker makes every process's gate refuse (and task.status read read-only) until task.resume.
   */
  async #checkpointUndrafted(cause: unknown): Promise<LongrunError> {
    if (this.#d.pending.exists() && !this.#d.pending.lost()) {
      // an older checkpoint waits there: it already holds the gate shut, and it is kept
      return new CheckpointWriteError(this.#d.pending.path, cause, { revokeError: describeCause(cause) });
    }
    const marked = this.#d.pending.markLost();
    if (!marked) this.#voidLease = { through_version: Number.MAX_SAFE_INTEGER };
    return new CheckpointWriteError(this.#d.pending.path, cause, {
      pendingError: `the task state could not be read to draft it${marked ? `; ${this.#d.pending.path} marks it` : ", and the pending marker could not be created either"}`,
      revokeError: describeCause(cause),
    });
  }

  /**
   * After a failed checkpoint commit: the checkpoint goes to the pending file (unless an older one
   * waits there, which stays and is saved first next time), then the lease is revoked in a new
   * transaction. If that cannot commit either, the pending file still makes the gate read-only.
   */
  async #checkpointFailed(pending: PendingCheckpoint | null, drafted_from: number): Promise<{ kept: string | null; revoked: string | null }> {
    // each step on its own: a pending file that cannot be written never keeps the lease open
    let kept: string | null = null;
    if (pending) {
      try {
        await this.#d.pending.write(pending);
        this.#crash("checkpoint.after_pending_write");
      } catch (e) {
        kept = describeCause(e);
      }
    }
    let revoked: string | null = null;
    try {
      await this.#d.state.transact(async (tx) => {
        const live = await tx.load();
        if (!live || (live.access_mode === "read_only" && live.lease === null)) return;
        const now = this.#now();
        await this.#commit(tx, live, revokeLease(cloneState(live), "checkpoint write failed", now), now);
      });
    } catch (e) {
      revoked = describeCause(e);
      // the database kept the lease: this process refuses writes itself until a state change
      // commits after this moment, and (when the checkpoint itself could not be kept either) an
      // empty pending file makes every other process's gate refuse too
      this.#voidLease = { through_version: drafted_from };
      if (kept !== null && !this.#d.pending.markLost()) revoked += "; the pending marker could not be created either";
    }
    return { kept, revoked };
  }

  /**
   * Starts a new turn, read-only, on the stored task: replays a pending checkpoint once (memory
   * dedupes it by checkpoint id, so a repeated or interrupted replay never makes a second
   * record), moves paused back to in_progress, and returns the task's recent memories.
   */
  resume(messageId?: string): Promise<{
    task: TaskState;
    memories: MemoryHit[];
    replayed: ReplayInfo | null;
    pending_checkpoint: PendingInfo | null;
    /** The last checkpoint's `data` (`{}` when it carried none; null when the task has no checkpoint). */
    data: CheckpointData | null;
  }> {
    return this.#resumeOnce(messageId).then(async (r) => {
      this.#crash("resume.after_replay");
      this.#voidLease = null; // the new turn's commit ended any lease in storage
      if (r.replayed || this.#d.pending.lost()) await this.#d.pending.clear();
      else if (r.failed) await this.#d.pending.write(r.failed).catch(() => {});
      const memories = await this.#contextMemories(r.task);
      return { task: r.task, memories, replayed: r.replayed, pending_checkpoint: await this.#pendingInfo(), data: checkpointDataOf(r.task) };
    });
  }

  /**
   * The turn, and the pending checkpoint's replay, in one commit. If the replay cannot commit, the
   * turn is begun without it (the checkpoint stays pending, with the reason).
   */
  async #resumeOnce(messageId?: string): Promise<{ task: TaskState; replayed: ReplayInfo | null; failed: PendingCheckpoint | null }> {
    const waiting = await this.#d.pending.read();
    if (waiting) {
      try {
        return await this.#resumeTx(waiting, messageId);
      } catch (cause) {
        if (cause instanceof LongrunError) throw cause;
        const r = await this.#resumeTx(null, messageId);
        return { ...r, failed: { ...waiting, error: describeCause(cause) } };
      }
    }
    return this.#resumeTx(null, messageId);
  }

  #resumeTx(waiting: PendingCheckpoint | null, messageId?: string): Promise<{ task: TaskState; replayed: ReplayInfo | null; failed: null }> {
    return this.#d.state.transact(async (tx) => {
      const live = await this.#mustBeOpen(tx, "Not resumed");
      // the message that began this turn already: no second turn (a pending checkpoint is still saved)
      const sameMessage = messageId !== undefined && live.turn_message_id === messageId;
      if (sameMessage && !waiting && live.status !== "paused") return { task: live, replayed: null, failed: null };
      const now = this.#now();
      let next = cloneState(live);
      let replayed: ReplayInfo | null = null;
      if (waiting) {
        const saved = await tx.saveMemory(waiting.record);
        replayed = { checkpoint_id: waiting.checkpoint_id, memory_id: saved.record.id, created: saved.created };
        if (waiting.task_id === live.task_id && live.last_checkpoint?.checkpoint_id !== waiting.checkpoint_id) {
          next = applyCheckpoint(next, waiting, saved.record.id, now);
        }
      }
      if (!sameMessage) {
        next.turn_index = next.turn_index + 1;
        next.turn_message_id = messageId ?? null;
        revokeLease(next, "resume", now);
      }
      if (next.status === "paused") this.#setStatus(next, "in_progress", "resume", now);
      await this.#commit(tx, live, next, now);
      return { task: next, replayed, failed: null };
    });
  }

  async #contextMemories(task: TaskState): Promise<MemoryHit[]> {
    return this.#d.memory.recent(task.task_id, CONTEXT_MEMORIES);
  }

  /**
   * Rebuilds the task from the newest checkpoint machine line in this root's memory: a new
   * turn, read-only. An unreadable state file is moved aside first, never deleted.
   */
  async recoverFromMemory(options: { force?: boolean; by?: Actor } = {}): Promise<{ task: TaskState | null; memory_id: string | null; quarantined: string | null; data: CheckpointData | null }> {
    if (options.force && options.by === "agent") {
      throw new UnauthorizedError("Refused: only the host may force task.recover over a readable state", { method: "task.recover", side_required: "host", side: "agent" });
    }
    // read before the transaction: memory is not read inside a state transaction
    const found = await this.#newestMachineState();
    return this.#d.state.transact(async (tx) => {
      let live: TaskState | null = null;
      let corrupt = false;
      try {
        live = await tx.load();
      } catch (e) {
        if (!(e instanceof StateCorruptError)) throw e;
        corrupt = true;
      }
      let quarantined: string | null = null;
      if (corrupt) {
        // an unreadable state never blocks the root for ever: it is moved aside (kept) first
        quarantined = await tx.quarantine();
        try {
          live = await tx.load();
        } catch (e) {
          if (!(e instanceof StateCorruptError)) throw e;
          // a stray file went aside and the task's own state is unreadable too
          quarantined = [quarantined, await tx.quarantine()].filter((q) => q !== null).join("; ") || null;
          live = null;
        }
        // only a stray file was unreadable: the task's state reads, and stays as it is
        if (live) return { task: live, memory_id: null, quarantined, data: checkpointDataOf(live) };
        // nothing to rebuild from: the root has no task; task.start begins one
        if (!found) return { task: null, memory_id: null, quarantined, data: null };
      }
      if (!found) {
        throw new NotFoundError(
          "checkpoint",
          "",
          "",
          "Nothing to recover: this root's memory holds no checkpoint with a machine line; start a task with task.start",
        );
      }
      const { record, machine } = found;
      if (live && !options.force && live.task_id === machine.task_id && !isTerminal(live.status)) {
        throw new ConflictError(
          `Not recovered: the task state is readable and holds task ${live.task_id} (${live.status}); recovery rebuilds a lost or corrupt state. ` +
            `Use task.resume to continue it; the host may force recovery from the last checkpoint`,
          { reason: "state_readable", task_id: live.task_id, status: live.status, checkpoint_task_id: machine.task_id },
        );
      }
      if (live && (live.task_id !== machine.task_id || isTerminal(live.status))) {
        throw new ConflictError(
          `Not recovered: the task state is readable and holds task ${live.task_id} (${live.status}); recovery rebuilds a lost or ` +
            `corrupt state, or the same task in progress, and would ${live.task_id !== machine.task_id ? `replace it with task ${machine.task_id}` : "bring a finished task back"}`,
          { reason: "state_readable", task_id: live.task_id, status: live.status, checkpoint_task_id: machine.task_id },
        );
      }
      const now = this.#now();
      const at = now.toISOString();
      const turn = Math.max(machine.turn_index, live?.task_id === machine.task_id ? live.turn_index : 0) + 1;
      const next = newTaskState(
        {
          task_id: machine.task_id,
          description: machine.description,
          keywords: machine.keywords,
          status: machine.status,
          turn_index: turn,
          phase: machine.phase,
          next_step: machine.next_step,
          created_at: machine.created_at || at,
          last_checkpoint: { checkpoint_id: machine.checkpoint_id, memory_id: record.id, at: machine.saved_at, kind: machine.kind, data: machine.data },
          history: [{ at, from: null, to: machine.status, reason: `recovered from memory ${record.id}`, turn }],
          lease_log: [{ at, event: "revoked", turn, reason: "recover" }],
        },
        at,
      );
      if (next.status === "paused") this.#setStatus(next, "in_progress", "recover", now);
      next.version = Math.max(live?.version ?? 0, machine.version) + 1;
      await tx.save(next, live ? live.version : null);
      return { task: next, memory_id: record.id, quarantined, data: machine.data };
    });
  }

  async #newestMachineState() {
    for (const record of await this.#d.memory.stateRecords(20)) {
      const machine = parseMachineLine(record.content);
      if (machine) return { record, machine };
    }
    return null;
  }

  /** Completes the task: the outcome record and the completed state commit together. */
  /**
   * Whether `finish` would be refused on the task's own merits (who asks, its status), checked
   * before anything else is done for it (a host's `cancel_runs`): throws the error `finish` would.
   */
  async checkFinishable(by: Actor = "host", taskId?: string): Promise<void> {
    const live = taskId === undefined ? await this.#mustLoad(this.#d.state) : await this.#d.state.loadTask(taskId);
    if (!live) throw new NotFoundError("task", taskId ?? "", "; task.list shows the tasks of this root");
    refuseSelfVerification(live, by, "task.finish");
    assertTransition(live.status, "completed");
  }

  finish(summary = "", by: Actor = "host", taskId?: string): Promise<{ task: TaskState; memory_id: string }> {
    return this.#d.state.transact(async (tx) => {
      const { live, current } = await this.#target(tx, taskId);
      refuseSelfVerification(live, by, "task.finish");
      assertTransition(live.status, "completed");
      await refuseOpenRuns(tx, live, "task.finish");
      const now = this.#now();
      const next = cloneState(live);
      this.#setStatus(next, "completed", "finish", now);
      revokeLease(next, "finished", now);
      const content = [
        "[LongRun Outcome]",
        `task: ${live.task_id} · completed at turn ${live.turn_index}`,
        `description: ${live.description}`,
        `summary: ${summary || "-"}`,
        machineLine(next, `outcome-${live.task_id}`, now.toISOString(), { kind: "outcome", data: live.last_checkpoint?.data ?? {} }),
      ].join("\n");
      let memoryId: string;
      try {
        memoryId = (
          await tx.saveMemory({
            type: "outcome",
            title: `[LongRun Outcome] ${live.task_id}`,
            content,
            keywords: ["longrun", "outcome", live.task_id],
            task_id: live.task_id,
            dedupe_key: `outcome:${live.task_id}`,
          })
        ).record.id;
      } catch (cause) {
        if (cause instanceof LongrunError) throw cause;
        throw new InternalError(
          `Task not finished: the outcome record could not be saved to memory (${describeCause(cause)}); ` +
            `the task stays ${live.status}; fix the memory database and call task.finish again`,
          cause,
        );
      }
      await this.#commitTarget(tx, live, next, now, current);
      return { task: next, memory_id: memoryId };
    });
  }
}

/**
 * A task ends only when its runs have: a run left running under a finished task could go on
 * beginning effects. Checked in the transaction that ends the task (a run starts in one that
 * checks the task is open), so neither can slip past the other.
 */
async function refuseOpenRuns(tx: StateTx, live: TaskState, what: string): Promise<void> {
  const open = await tx.openRuns(live.task_id);
  if (!open.length) return;
  throw new ConflictError(
    `Refused: ${what}: task ${live.task_id} still has ${open.length === 1 ? "a run" : "runs"} running or parked (${open.join(", ")}); ` +
      `finish or cancel ${open.length === 1 ? "it" : "them"} first (run.finish, run.cancel), or call task.finish with cancel_runs: true`,
    { reason: "open_runs", task_id: live.task_id, runs: open },
  );
}

/** Leaving waiting_verification is the verifier's (the host's) decision, checked under the lock. */
function refuseSelfVerification(live: TaskState, by: Actor, what: string): void {
  if (by !== "agent" || live.status !== "waiting_verification") return;
  throw new UnauthorizedError(
    `Refused: task ${live.task_id} is waiting_verification, and only the host (the person verifying) decides what happens next (${what}); ` +
      `ask the user to accept it or send it back`,
    { method: what.split(" ")[0], side_required: "host", side: "agent", task_id: live.task_id },
  );
}

function checkpointRecord(working: TaskState, text: string, checkpointId: string): NewMemory {
  return {
    type: "session",
    title: `[LongRun Checkpoint] ${working.phase || working.task_id}`,
    content: text,
    keywords: ["longrun", "checkpoint", working.task_id],
    task_id: working.task_id,
    dedupe_key: `checkpoint:${checkpointId}`,
  };
}

/** The live state with a replayed checkpoint's effect applied (status, phase, next step). */
function applyCheckpoint(base: TaskState, cp: PendingCheckpoint, memoryId: string, now: Date): TaskState {
  const next = cloneState(base);
  // a checkpoint that failed ended the lease then; whatever replays it ends it too
  revokeLease(next, "checkpoint replayed", now);
  if (next.status === "in_progress" && cp.state.status === "paused") {
    next.history = pushBounded(next.history, {
      at: now.toISOString(),
      from: "in_progress",
      to: "paused",
      reason: "checkpoint replayed",
      turn: next.turn_index,
    });
    next.status = "paused";
  }
  next.phase = cp.state.phase;
  next.next_step = cp.state.next_step;
  next.turn_index = Math.max(next.turn_index, cp.state.turn_index);
  const made = cp.state.last_checkpoint;
  next.last_checkpoint = {
    checkpoint_id: cp.checkpoint_id,
    memory_id: memoryId,
    at: cp.created_at,
    ...(made?.kind !== undefined ? { kind: made.kind } : {}),
    ...(made?.data !== undefined ? { data: made.data } : {}),
  };
  return next;
}

/** The last checkpoint's data: `{}` when it carried none (an older one), null when there is no checkpoint. */
function checkpointDataOf(task: TaskState): CheckpointData | null {
  return task.last_checkpoint ? (task.last_checkpoint.data ?? {}) : null;
}

/** A checkpoint's data is bounded (compact JSON, in characters), refused before anything is touched. */
function checkDataSize(data: CheckpointData | undefined): void {
  if (data === undefined) return;
  const size = JSON.stringify(data).length;
  if (size > LIMITS.checkpoint_data_chars) {
    throw new LimitExceededError("data", LIMITS.checkpoint_data_chars, size, "characters", "keep a checkpoint's data to what the loop needs to go on (an index, a cursor, ids); store large results with memory.save or context.put");
  }
}

