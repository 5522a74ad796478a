/**
 * A small reference model of the contract, and a runner that drives the real implementation with
 * the same actions and compares the two after every step (model-based, or stateful property,
 * testing). Shared by `tests/model/contract_model.test.ts` (fast-check, shrinking) and
 * `bench/model_soak.ts` (a bounded soak of many sequences).
 *
 * The model knows, independently of `src/`: task statuses and the transition whitelist, turns,
 * the write lease (granted by the host only, for one turn, with an optional scope and number of
 * uses; it ends when the turn ends, at a pause checkpoint, when the task leaves in_progress or
 * stops being current), gate checks, checkpoints (pause and progress; a returned text is in
 * memory), the pending checkpoint of a failed commit (the gate reads read-only while it waits; the
 * next checkpoint or resume saves it), runs (owner, fencing epoch, one open run per task, a task
 * with open runs does not end; a continuation narrows tools, never widens them, and carries the
 * parent's unknown effects as open items; the owner's heartbeat told superseded, cancelled or
 * budget_exhausted; a park with a wake time keeps it until woken, finished or cancelled: the timer
 * itself, like a TTL passing, needs real time and is tested through the binary in
 * tests/ledger/liveness.test.ts) and receipts (begun, completed, failed, unknown; a
 * completed key replays, a claim turns begun into unknown, unknown settles only with evidence, a
 * key unsettled anywhere up the run chain is not begun again; tool authorization; a tool-call
 * budget; charges of unknown tool-call count, open items of every continuation after them and
 * stopping effects there and in their run until reconciled on the run that recorded them; receipt kinds: a model request counts as a request, never as a tool call, and one key
 * names one kind), approvals (the agent asks, asking again returns the same record, only the host
 * answers and only once, a finished task asks nothing) and forgetting (only the host forgets, a
 * forgotten note stays not_found across restarts, a checkpoint record is never forgotten).
 *
 * The real side is a real root in a temporary directory (libSQL `memory.db`, the pending file,
 * `raw_data/`) behind the real dispatcher, so params validation and the side check are included.
 * A restart closes the root and opens the same directory again (a crash between calls). A fault
 * arms a crash point (`src/store/crash.ts`, the `CrashPoint` port) with a test double that throws
 * a named error there: `crash: true` then treats the process as dead (every later crash point
 * throws too, so nothing after it reaches the disk through a crash point) and restarts the root;
 * `crash: false` is a one-off failure at that step that the process survives.
 *
 * After every step: the model and the implementation agree on every task (status, turn, access
 * mode, lease turn, scope, uses), the pending checkpoint, every run (status, owner, epoch,
 * parent, open items) and every receipt (id, kind, status, attempt, result; tool calls and requests
 * spent by kind); and the invariants hold: I2 (every checkpoint text
 * returned is in memory, verbatim), I3 (writable only with a lease of the current turn, in
 * progress; granted only by the host), A1 (acknowledged receipts, checkpoints, outcomes and notes
 * are present), A3 (no receipt completed without its result), A4 (`PRAGMA integrity_check` ok, the
 * task state reads back).
 */
import assert from "node:assert/strict";
import { accessSync, constants, existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v8 from "node:v8";
import * as vm from "node:vm";
import fc from "fast-check";
import type { IdSource } from "../../src/core/ports.ts";
import type { Root } from "../../src/root/root.ts";
import { Dispatcher } from "../../src/rpc/dispatcher.ts";
import type { Side } from "../../src/rpc/method.ts";
import { allMethods } from "../../src/rpc/methods/index.ts";
import { RootRegistry } from "../../src/root/registry.ts";
import { LEGAL_TRANSITIONS } from "../support/statuses.ts";

// ---------------------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------------------

export const STATUSES = ["pending", "in_progress", "paused", "blocked", "waiting_verification", "completed", "failed"] as const;
export type MStatus = (typeof STATUSES)[number];

/** Executors (run owners) 0 and 1; each remembers the epoch it last got for a run. */
export type Exec = 0 | 1;
export const OWNERS = ["exec-A", "exec-B"] as const;

export type Op =
  | { t: "start" }
  | { t: "switch"; task: number }
  /** `task`: null addresses the current task (no task_id), a number one of the model's tasks by task_id. */
  | { t: "transition"; to: MStatus; by: Side; task: number | null }
  | { t: "finish"; by: Side; cancelRuns: boolean; task: number | null }
  | { t: "turnBegin"; by: Side }
  | { t: "turnEnd"; by: Side }
  | { t: "enable"; by: Side; scoped: boolean; maxUses: number | null }
  | { t: "request" }
  | { t: "require"; inScope: boolean }
  | { t: "checkpoint"; progress: boolean }
  | { t: "resume" }
  | { t: "save" }
  /** `by`: the host's start is granted at once, the agent's is a request. */
  | { t: "runStart"; exec: Exec; budget: number | null; by: Side }
  /** run.continue of a run (`ended`: counted among the runs that ended only, when there are some); tools: 0 inherit, 1 ["fetch"], 2 ["fetch", "deploy"] (wider), 3 [] (none). */
  | { t: "continue"; exec: Exec; run: number; ended: boolean; tools: 0 | 1 | 2 | 3; budget: number | null; by: Side }
  /** run.grant (as asked) or run.refuse of a run. */
  | { t: "decide"; run: number; grant: boolean; by: Side }
  | { t: "claim"; exec: Exec; run: number }
  /** `parkAt`: run.park with a wake_at a day ahead (never due while a sequence runs: the timer is tested through the binary). */
  | { t: "runOp"; exec: Exec; run: number; op: "park" | "parkAt" | "wake" | "finish" | "cancel" }
  /** run.heartbeat at the executor's epoch: what the owner is told to stop for. */
  | { t: "heartbeat"; exec: Exec; run: number }
  | { t: "hostCancel"; run: number }
  | { t: "begin"; exec: Exec; run: number; key: number; args: number; tool: number; kind?: 0 | 1 }
  | { t: "settle"; exec: Exec; run: number; receipt: number; outcome: "completed" | "failed"; ref: boolean; evidence: boolean }
  /** budget.charge of a tool call whose count is unknown (unknown: ["tool_calls"]), or budget.reconcile of a run's charge (at 0). */
  | { t: "charge"; exec: Exec; run: number }
  | { t: "reconcile"; exec: Exec; run: number; charge: number }
  /** approval.request of one of two actions (the agent's), and approval.answer of one (the host's; the agent's try is refused). */
  | { t: "ask"; action: 0 | 1 }
  | { t: "answer"; approval: number; approve: boolean; by: Side }
  /** memory.forget of an acknowledged note (the host's; the agent's try is refused), or of a checkpoint record (always refused). */
  | { t: "forget"; note: number; by: Side; checkpoint: boolean };

export const FAULT_POINTS = [
  "receipt.begin.before_commit",
  "receipt.begin.after_commit",
  "receipt.settle.before_commit",
  "receipt.settle.after_commit",
  "memory.before_commit",
  "memory.after_commit",
  "checkpoint.before_commit",
  "checkpoint.after_commit",
  "checkpoint.before_reply",
  "resume.after_replay",
] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

/** Points where the step's own transaction has not committed when the fault hits. */
const BEFORE_COMMIT: ReadonlySet<FaultPoint> = new Set(["receipt.begin.before_commit", "receipt.settle.before_commit", "memory.before_commit", "checkpoint.before_commit"]);

export type Action = Op | { t: "restart" } | { t: "fault"; at: FaultPoint; crash: boolean; op: Op };

/** Host-only methods are mostly called by the host; the agent's tries are refused (and change nothing). */
const side = fc.oneof({ arbitrary: fc.constant<Side>("host"), weight: 3 }, { arbitrary: fc.constant<Side>("agent"), weight: 1 });
const exec = fc.constantFrom<Exec>(0, 1);
/** Who starts or continues a run: as often the agent (a request) as the host (granted at once). */
const runner = fc.constantFrom<Side>("host", "agent");
const ref = fc.nat(3);

const beginArb = fc.record({ t: fc.constant("begin" as const), exec, run: ref, key: fc.nat(2), args: fc.oneof({ arbitrary: fc.constant(0), weight: 5 }, { arbitrary: fc.constant(1), weight: 1 }), tool: fc.oneof({ arbitrary: fc.constant(0), weight: 6 }, { arbitrary: fc.constant(1), weight: 1 }), kind: fc.oneof({ arbitrary: fc.constant<0 | 1>(0), weight: 3 }, { arbitrary: fc.constant<0 | 1>(1), weight: 1 }) });
const settleArb = fc.record({
  t: fc.constant("settle" as const),
  exec,
  run: ref,
  receipt: ref,
  outcome: fc.constantFrom("completed" as const, "failed" as const),
  ref: fc.oneof({ arbitrary: fc.constant(true), weight: 8 }, { arbitrary: fc.constant(false), weight: 1 }),
  evidence: fc.boolean(),
});
const checkpointArb = fc.record({ t: fc.constant("checkpoint" as const), progress: fc.boolean() });
const taskRef = fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: ref, weight: 1 });
const finishArb = fc.record({ t: fc.constant("finish" as const), by: side, cancelRuns: fc.boolean(), task: taskRef });
const resumeArb = fc.constant({ t: "resume" as const });
const saveArb = fc.constant({ t: "save" as const });

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.constant({ t: "start" as const }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("switch" as const), task: ref }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("transition" as const), to: fc.constantFrom(...STATUSES), by: side, task: taskRef }), weight: 4 },
  { arbitrary: finishArb, weight: 2 },
  { arbitrary: fc.record({ t: fc.constant("turnBegin" as const), by: side }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant("turnEnd" as const), by: side }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("enable" as const), by: side, scoped: fc.boolean(), maxUses: fc.constantFrom(null, null, 1, 2) }), weight: 5 },
  { arbitrary: fc.constant({ t: "request" as const }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("require" as const), inScope: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }) }), weight: 9 },
  { arbitrary: checkpointArb, weight: 3 },
  { arbitrary: resumeArb, weight: 3 },
  { arbitrary: saveArb, weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("runStart" as const), exec, budget: fc.constantFrom(null, null, 1, 2), by: runner }), weight: 4 },
  { arbitrary: fc.record({ t: fc.constant("claim" as const), exec, run: ref }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant("continue" as const), exec, run: ref, ended: fc.boolean(), tools: fc.constantFrom<0 | 1 | 2 | 3>(0, 0, 1, 2, 3), budget: fc.constantFrom(null, 1), by: runner }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant("decide" as const), run: ref, grant: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }), by: side }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant("runOp" as const), exec, run: ref, op: fc.constantFrom("park" as const, "parkAt" as const, "wake" as const, "finish" as const, "cancel" as const) }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant("heartbeat" as const), exec, run: ref }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant("hostCancel" as const), run: ref }), weight: 1 },
  { arbitrary: beginArb, weight: 8 },
  { arbitrary: settleArb, weight: 6 },
  { arbitrary: fc.record({ t: fc.constant("charge" as const), exec, run: ref }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant("reconcile" as const), exec, run: ref, charge: fc.nat(3) }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant("ask" as const), action: fc.constantFrom<0 | 1>(0, 1) }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant("answer" as const), approval: ref, approve: fc.boolean(), by: side }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant("forget" as const), note: ref, by: side, checkpoint: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, { arbitrary: fc.constant(true), weight: 1 }) }), weight: 1 },
);

const crash = fc.boolean();
export const faultArb: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.record({ t: fc.constant("fault" as const), at: fc.constantFrom("receipt.begin.before_commit" as const, "receipt.begin.after_commit" as const), crash, op: beginArb }), weight: 4 },
  { arbitrary: fc.record({ t: fc.constant("fault" as const), at: fc.constantFrom("receipt.settle.before_commit" as const, "receipt.settle.after_commit" as const), crash, op: settleArb }), weight: 4 },
  {
    arbitrary: fc.record({
      t: fc.constant("fault" as const),
      at: fc.constantFrom("checkpoint.before_commit" as const, "checkpoint.after_commit" as const, "checkpoint.before_reply" as const),
      crash,
      op: checkpointArb,
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ t: fc.constant("fault" as const), at: fc.constant("memory.before_commit" as const), crash, op: fc.oneof(checkpointArb, finishArb, resumeArb, saveArb) }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant("fault" as const), at: fc.constant("memory.after_commit" as const), crash, op: saveArb }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("fault" as const), at: fc.constant("resume.after_replay" as const), crash, op: resumeArb }), weight: 2 },
);

export const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: opArb, weight: 24 },
  { arbitrary: fc.constant({ t: "restart" as const }), weight: 1 },
  { arbitrary: faultArb, weight: 3 },
);

/** Actions, each resolved against the model when it runs (any sequence is valid). */
export function actionsArb(maxLength: number): fc.Arbitrary<Action[]> {
  return fc.array(actionArb, { minLength: 1, maxLength, size: "max" });
}

/** A sequence of actions for a fresh root: most begin with task.start. */
export function sequenceArb(maxLength: number): fc.Arbitrary<Action[]> {
  // most sequences begin with task.start (the rest try everything on a root without a task)
  const starts = fc.oneof({ arbitrary: fc.constant(true), weight: 9 }, { arbitrary: fc.constant(false), weight: 1 });
  return fc
    .tuple(starts, actionsArb(Math.max(1, maxLength - 1)))
    .map(([start, rest]): Action[] => (start ? [{ t: "start" }, ...rest] : rest));
}

// ---------------------------------------------------------------------------------------------
// The reference model
// ---------------------------------------------------------------------------------------------

/**
 * Bugs this model found that are not fixed yet. While a flag is true the model expects today's
 * behaviour (so the property keeps looking for other bugs); the regression test of each one
 * (tests/model/contract_model.test.ts) states the intended behaviour and is marked todo. Fix the
 * bug, set the flag to false, and drop the todo.
 */
export const KNOWN_BUGS = {
  /**
   * `task.finish` with `cancel_runs: true` (host) cancels the task's open runs first and only then
   * checks whether the task may finish: when it may not (paused, blocked, pending; or the outcome
   * record cannot be saved) the call is refused, the task stays open, and its runs are cancelled
   * all the same. A refused call should change nothing.
   */
  finishCancelsRunsThenRefuses: false,
  /**
   * `task.finish` with `cancel_runs: true` (host) on a task that may finish cancels its open runs
   * in their own transactions, then saves the outcome record: when that save fails (memory
   * refuses it) the call answers `internal`, the task stays open, and its runs are cancelled all
   * the same. Found when the model learned run requests and grants (its random sequences changed);
   * present before them. The cancels and the finish should commit together, or not at all.
   */
  finishCancelsRunsBeforeItsOutcomeIsSaved: true,
  /**
   * Task ids are `T_<date>_<time to the second>_<2 random bytes>`: two task.start calls in one
   * second collide with probability 1/65,536 (a few in a thousand at hundreds of starts a second),
   * and the second task then silently overwrites the first one's row (its state, status and turn
   * are gone; its runs now belong to the newcomer). Not predictable by the model: while the flag
   * is true a start that returns an id the root already holds ends the sequence as a `KnownBugHit`
   * (counted, not a violation).
   */
  taskIdCollisionOverwrites: false,
};
export type KnownBugs = typeof KNOWN_BUGS;

/** A sequence ran into a bug listed in KNOWN_BUGS (while its flag is true): stop it, count it. */
export class KnownBugHit extends Error {
  constructor(readonly bug: keyof KnownBugs, detail: string) {
    super(`known bug ${bug}: ${detail}`);
    this.name = "KnownBugHit";
  }
}

/** The whitelist, written out by hand in tests/support/statuses.ts (not imported from src/): the model must not share the code it checks. */
const WHITELIST: Readonly<Record<MStatus, readonly MStatus[]>> = LEGAL_TRANSITIONS;
const terminal = (s: MStatus) => s === "completed" || s === "failed";

export const SCOPE = ["src/**"];
export const ACTION_IN_SCOPE = "edit src/main.ts";
export const ACTION_OUT_OF_SCOPE = "edit docs/notes.md";

export interface MLease {
  turn: number;
  scoped: boolean;
  maxUses: number | null;
  uses: number;
}

export interface MTask {
  id: string;
  status: MStatus;
  turn: number;
  lease: MLease | null;
}

export type RStatus = "begun" | "completed" | "failed" | "unknown";
export interface MReceipt {
  id: string;
  key: string;
  args: number;
  status: RStatus;
  attempt: number;
  hasRef: boolean;
  /** A tool call counts against tool_calls; a model request counts as a request, not a tool call. */
  kind: "tool_call" | "model_request";
}

/** The unreconciled unknown charges of `run` and every run before it in its chain. */
export function chainCharges(run: MRun | null): string[] {
  const out: string[] = [];
  for (let a = run; a; a = a.parent) out.push(...a.charges.filter((c) => !c.reconciled).map((c) => c.id));
  return out;
}

export type RunStatus = "requested" | "running" | "parked" | "finished" | "cancelled" | "failed" | "refused";
export interface MRun {
  id: string;
  task: string;
  status: RunStatus;
  owner: string;
  epoch: number;
  /** tool_calls limit, or null for none. */
  budget: number | null;
  /** tool calls charged (one per receipt begun). */
  spent: number;
  receipts: MReceipt[];
  tools: string[];
  /** The run it continues (run.continue), and the unknown receipts it carries as open items. */
  parent: MRun | null;
  carried: MReceipt[];
  /** Its charges of unknown amount (unknown: ["tool_calls"]): open until reconciled, in this run and every continuation after it. */
  charges: { id: string; reconciled: boolean }[];
  /** The epoch each executor last got for this run (null: never held it, it writes with epoch 1). */
  held: [number | null, number | null];
}

/** Something acknowledged to the caller as saved, with the exact text it must read back as (null: only presence). */
export interface Acked {
  what: "checkpoint" | "outcome" | "note";
  id: string;
  text: string | null;
}

export class ContractModel {
  tasks: MTask[] = [];
  current: MTask | null = null;
  runs: MRun[] = [];
  /** A checkpoint whose commit failed and waits in the pending file (of task `task`; `pause`: it paused the task). */
  pending: { task: string; pause?: boolean } | null = null;
  acked: Acked[] = [];
  /** Notes forgotten by the host: memory.get must say not_found. */
  forgotten: string[] = [];
  /** The agent's approval requests, oldest first: their task, action and status. */
  approvals: { id: string; task: string; action: string; status: "pending" | "approved" | "rejected" }[] = [];
  /** Tasks of the root this model does not know (a reused root): ids only. */
  foreign = new Set<string>();
  /** On a reused root, the open task that was current before this model's first task.start. */
  foreignCurrent: string | null = null;

  openRuns(taskId: string): MRun[] {
    return this.runs.filter((r) => r.task === taskId && (r.status === "running" || r.status === "parked" || r.status === "requested"));
  }

  /** The run an action's `run` index names: 0 the newest, counting back, modulo; null when there is none. */
  pickRun(i: number): MRun | null {
    if (!this.runs.length) return null;
    return this.runs[this.runs.length - 1 - (i % this.runs.length)]!;
  }

  leaveCurrent(): void {
    if (this.current && !terminal(this.current.status)) this.current.lease = null;
  }

  setStatus(t: MTask, to: MStatus): void {
    if (t.status === "in_progress" && to !== "in_progress") t.lease = null;
    t.status = to;
  }

  /** Resume's effect on the current task: a new turn, read-only, paused back to in_progress. */
  resumeEffect(t: MTask): void {
    t.turn += 1;
    t.lease = null;
    if (t.status === "paused") t.status = "in_progress";
  }
}

// ---------------------------------------------------------------------------------------------
// The real side: a root in a temporary directory behind the real dispatcher
// ---------------------------------------------------------------------------------------------

export class SimulatedCrash extends Error {
  constructor(readonly point: string) {
    super(`simulated crash at ${point} (test double of the crash port)`);
    this.name = "SimulatedCrash";
  }
}

/**
 * A `CrashPoint` double: armed with one point name, it throws `SimulatedCrash` there once. In
 * crash mode the process counts as dead from then on: every later crash point throws as well
 * (the runner then closes the root and reopens the directory).
 */
export class CrashDouble {
  #armed: string | null = null;
  #crash = false;
  fired = false;
  dead = false;
  readonly point = (p: string): void => {
    if (this.dead) throw new SimulatedCrash(p);
    if (this.#armed !== null && p === this.#armed) {
      this.#armed = null;
      this.fired = true;
      if (this.#crash) this.dead = true;
      throw new SimulatedCrash(p);
    }
  };
  arm(point: string, crash: boolean): void {
    this.#armed = point;
    this.#crash = crash;
    this.fired = false;
  }
  disarm(): void {
    this.#armed = null;
  }
}

export interface RpcErr {
  code: number;
  message: string;
  data: Record<string, any>;
}
export interface Answer {
  result?: any;
  error?: RpcErr;
}

/**
 * Where the model's temporary roots go by default: `LONGRUN_MODEL_DIR` if set; the temp directory
 * if `TMPDIR` is set (the suite's runner gives the tests a TMPDIR of their own and fails the run
 * if anything is left there); else `/dev/shm` (tmpfs) where it is writable, else the temp
 * directory. The stores are the same everywhere; on tmpfs an fsync costs nothing, and the crashes
 * here are of the process (simulated), not power losses, so it changes no outcome and keeps the
 * runs fast on a busy disk.
 */
export function defaultRootBase(): string {
  if (process.env.LONGRUN_MODEL_DIR) return process.env.LONGRUN_MODEL_DIR;
  if (process.env.TMPDIR) return tmpdir();
  try {
    accessSync("/dev/shm", constants.W_OK);
    if (statSync("/dev/shm").isDirectory()) return "/dev/shm";
  } catch {
    // no tmpfs here
  }
  return tmpdir();
}

/** A new temporary root directory under `base` (default `defaultRootBase()`). */
export function makeRootDir(base?: string): string {
  return realpathSync(mkdtempSync(join(base ?? defaultRootBase(), "longrun-model-")));
}

/**
 * Under Deno a closed root's libSQL statements (and with them its `memory.db` descriptor) go only
 * when collected, and one collected while the same file is open again in this process is never
 * given back (SQLite keeps the descriptor of an inode that still has locks). Bun collects them as
 * the root closes. So under Deno the harness collects every 25th close, right after it, while no
 * root of this process is open: what was closed since goes then, without a reopened file beside it.
 */
let denoGc: (() => void) | null | undefined;
let closesSinceGc = 0;
async function collectClosedRoots(): Promise<void> {
  if (typeof (globalThis as Record<string, unknown>).Deno === "undefined") return;
  if (++closesSinceGc < 25) return;
  closesSinceGc = 0;
  if (denoGc === undefined) {
    try {
      v8.setFlagsFromString("--expose-gc");
      denoGc = vm.runInNewContext("gc") as () => void;
    } catch {
      denoGc = null;
    }
  }
  if (!denoGc) return;
  // after the current stack is gone (the collector also looks at it for references)
  await new Promise((resolve) => setTimeout(resolve, 0));
  denoGc();
}

export class RealSystem {
  readonly dir: string;
  crash = new CrashDouble();
  restarts = 0;
  #roots!: RootRegistry;
  #d!: Dispatcher;
  #id = 1;

  readonly #ids: IdSource | undefined;

  /** `ids`: an id source double (a regression test forces a task id collision); default the real one. */
  constructor(dir: string, ids?: IdSource) {
    this.dir = dir;
    this.#ids = ids;
    this.#open();
  }

  static create(base?: string, ids?: IdSource): RealSystem {
    return new RealSystem(makeRootDir(base), ids);
  }

  #open(): void {
    this.crash = new CrashDouble();
    this.#roots = new RootRegistry({ defaultRoot: this.dir, rootOptions: { searchInWorker: false, crash: this.crash.point, ...(this.#ids ? { ids: this.#ids } : {}) } });
    this.#d = new Dispatcher({ methods: allMethods(), roots: this.#roots });
  }

  async call(method: string, params: Record<string, unknown> = {}, side: Side = "agent"): Promise<Answer> {
    return (await this.#d.handleMessage({ jsonrpc: "2.0", id: this.#id++, method, params }, { side, via: "test" })) as Answer;
  }

  async ok(method: string, params: Record<string, unknown> = {}, side: Side = "agent"): Promise<any> {
    const a = await this.call(method, params, side);
    if (a.error) throw new Error(`${method} failed: ${JSON.stringify(a.error)}`);
    return a.result;
  }

  root(): Promise<Root> {
    return this.#roots.get();
  }

  /** A crash between calls: close everything of this process and open the same directory again. */
  async restart(): Promise<void> {
    await this.#roots.closeAll();
    await collectClosedRoots();
    this.#open();
    this.restarts++;
  }

  async dispose(): Promise<void> {
    await this.#roots.closeAll();
    await collectClosedRoots();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// The runner: one action on both sides, then compare
// ---------------------------------------------------------------------------------------------

type Expect = { ok: true; check?: (r: any) => void | Promise<void> } | { kind: string; reason?: string; data?: Record<string, unknown> };

interface Plan {
  method: string;
  params: Record<string, unknown>;
  side: Side;
  expect: Expect;
  /** The model's change for the expected outcome (also for refusals that change something, such as a revoked lease). */
  apply: (result: any) => void;
}

export class ModelViolation extends Error {
  constructor(readonly step: number, readonly action: Action | null, readonly inner: unknown) {
    super(`model and implementation disagree at step ${step} ${action ? JSON.stringify(action) : "(setup)"}: ${inner instanceof Error ? inner.message : String(inner)}`);
    this.name = "ModelViolation";
  }
}

export interface RunnerOptions {
  /** Compare and check invariants after every step (default true); otherwise only at the end of the sequence. */
  checkEveryStep?: boolean;
  /** Run `PRAGMA integrity_check` at every check (default true); otherwise after restarts and at the end. */
  integrityEveryStep?: boolean;
  /** The root is reused: learn which tasks it holds already; the sequence starts with task.start. */
  reusedRoot?: boolean;
  /** Which known bugs to expect (default KNOWN_BUGS); a regression test passes false to state the intended behaviour. */
  knownBugs?: Partial<KnownBugs>;
}

export interface RunStats {
  steps: number;
  calls: number;
  skipped: number;
  restarts: number;
  faultsFired: number;
  /** How each method answered: `method ok` or `method <error kind>[/reason]`, with `fault@point` for fired faults. */
  outcomes: Record<string, number>;
}

let noteCounter = 0;

/**
 * Writes that take an idempotency key (every method that changes something, except the gate
 * check, which answers for the moment it is asked, and receipt.begin, whose own key it is).
 */
const KEYED = new Set(
  allMethods()
    .filter((m) => !m.readOnly && m.name !== "writes.require" && !("idempotency_key" in ((m.params as { entries?: object }).entries ?? {})))
    .map((m) => m.name),
);

export class ModelRunner {
  readonly m = new ContractModel();
  readonly stats: RunStats = { steps: 0, calls: 0, skipped: 0, restarts: 0, faultsFired: 0, outcomes: {} };
  #restartedSinceCheck = false;

  readonly bugs: KnownBugs;

  constructor(readonly sys: RealSystem, readonly opts: RunnerOptions = {}) {
    this.bugs = { ...KNOWN_BUGS, ...opts.knownBugs };
  }

  /** Runs the actions; throws `ModelViolation` at the first disagreement or broken invariant. */
  async run(actions: readonly Action[]): Promise<RunStats> {
    if (this.opts.reusedRoot) {
      try {
        const db = (await this.sys.root()).db;
        const current = (await db.execute("SELECT value FROM root_meta WHERE key = 'current_task'")).rows[0]?.value;
        for (const t of (await db.execute("SELECT task_id, status FROM tasks")).rows) {
          this.m.foreign.add(String(t.task_id));
          if (t.task_id === current && t.status !== "completed" && t.status !== "failed") this.m.foreignCurrent = String(t.task_id);
        }
        await this.#op({ t: "start" });
        await this.check(true);
      } catch (e) {
        throw e instanceof ModelViolation || e instanceof KnownBugHit ? e : new ModelViolation(-1, { t: "start" }, e);
      }
    }
    for (let i = 0; i < actions.length; i++) {
      const a = actions[i]!;
      try {
        const skipped = this.stats.skipped;
        await this.step(a);
        this.stats.steps++;
        const nothingHappened = this.stats.skipped > skipped && a.t !== "fault";
        if ((this.opts.checkEveryStep !== false && !nothingHappened) || i === actions.length - 1) await this.check(this.opts.integrityEveryStep !== false || i === actions.length - 1 || this.#restartedSinceCheck);
      } catch (e) {
        throw e instanceof ModelViolation || e instanceof KnownBugHit ? e : new ModelViolation(i, a, e);
      }
    }
    if (!actions.length) await this.check(true);
    return this.stats;
  }

  async step(a: Action): Promise<void> {
    if (a.t === "restart") return this.#restart();
    if (a.t === "fault") return this.#fault(a.at, a.crash, a.op);
    return this.#op(a);
  }

  async #restart(): Promise<void> {
    await this.sys.restart();
    this.stats.restarts++;
    this.#restartedSinceCheck = true;
  }

  async #op(op: Op): Promise<void> {
    const p = this.plan(op);
    if (!p) {
      this.stats.skipped++;
      return;
    }
    this.stats.calls++;
    // every third write carries an idempotency key and is sent again, as by a host that lost the
    // answer: the first answer comes back, and the check after the step finds no second effect
    const key = KEYED.has(p.method) && this.stats.calls % 3 === 0 ? `model-key-${this.stats.calls}-${this.stats.restarts}` : null;
    const params = key ? { ...p.params, idempotency_key: key } : p.params;
    const ans = await this.sys.call(p.method, params, p.side);
    this.#count(p.method, ans);
    await expectAnswer(p, ans);
    p.apply(ans.result);
    if (key && !ans.error) {
      const again = await this.sys.call(p.method, params, p.side);
      this.#count(p.method, again, "retry ");
      assert.deepEqual(again.result, ans.result, `${p.method} sent again with its idempotency key answers as the first time`);
    }
  }

  #count(method: string, ans: Answer, prefix = ""): void {
    const what = ans.error ? `${ans.error.data?.kind}${ans.error.data?.reason ? `/${ans.error.data.reason}` : ""}` : "ok";
    const k = `${prefix}${method} ${what}`;
    this.stats.outcomes[k] = (this.stats.outcomes[k] ?? 0) + 1;
  }

  // -------------------------------------------------------------------------------------------
  // What each operation should do, from the model alone
  // -------------------------------------------------------------------------------------------

  plan(op: Op): Plan | null {
    const m = this.m;
    const cur = m.current;
    const err = (kind: string, reason?: string, data?: Record<string, unknown>): Expect => ({ kind, reason, data });
    const none = () => {};
    switch (op.t) {
      case "start": {
        const previous = cur ? (!terminal(cur.status) ? cur.id : null) : m.foreignCurrent;
        return {
          method: "task.start",
          params: { description: `model task ${m.tasks.length + 1}` },
          side: "agent",
          expect: {
            ok: true,
            check: (r) => {
              assert.equal(r.task.status, "in_progress");
              assert.equal(r.task.turn_index, 1);
              assert.equal(r.task.access_mode, "read_only");
              assert.equal(r.previous_task, previous, "previous_task");
              const id = r.task.task_id;
              if (m.tasks.some((t) => t.id === id) || m.foreign.has(id)) {
                if (this.bugs.taskIdCollisionOverwrites) throw new KnownBugHit("taskIdCollisionOverwrites", `task.start returned ${id}, an id the root already had`);
                assert.fail(`task.start returned an id the root already had: ${id} (it overwrote that task)`);
              }
            },
          },
          apply: (r) => {
            m.leaveCurrent();
            m.foreignCurrent = null;
            const t: MTask = { id: r.task.task_id, status: "in_progress", turn: 1, lease: null };
            m.tasks.push(t);
            m.current = t;
          },
        };
      }
      case "switch": {
        if (!m.tasks.length) return null;
        const target = m.tasks[op.task % m.tasks.length]!;
        const base = { method: "task.switch", params: { task_id: target.id, reason: "model" }, side: "agent" as Side };
        if (cur && target.id === cur.id) return { ...base, expect: { ok: true, check: (r) => assert.equal(r.task.task_id, target.id) }, apply: none };
        if (terminal(target.status)) return { ...base, expect: err("conflict", "task_finished"), apply: none };
        return {
          ...base,
          expect: { ok: true },
          apply: () => {
            m.leaveCurrent();
            target.lease = null;
            m.current = target;
          },
        };
      }
      case "transition": {
        const addressed = op.task === null ? null : (m.tasks.length ? m.tasks[op.task % m.tasks.length]! : undefined);
        if (addressed === undefined) return null;
        const base = { method: "task.transition", params: { to: op.to, reason: "model", ...(addressed ? { task_id: addressed.id } : {}) }, side: op.by };
        const t = addressed ?? cur;
        if (!t) return { ...base, expect: err("no_active_task"), apply: none };
        if (op.by === "agent" && t.status === "waiting_verification") return { ...base, expect: err("unauthorized"), apply: none };
        if (terminal(op.to) && m.openRuns(t.id).length) return { ...base, expect: err("conflict", "open_runs"), apply: none };
        if (!WHITELIST[t.status].includes(op.to)) return { ...base, expect: err("transition_error", undefined, { from: t.status, to: op.to }), apply: none };
        return { ...base, expect: { ok: true, check: (r) => assert.equal(r.task.status, op.to) }, apply: () => m.setStatus(t, op.to) };
      }
      case "finish": {
        const addressed = op.task === null ? null : (m.tasks.length ? m.tasks[op.task % m.tasks.length]! : undefined);
        if (addressed === undefined) return null;
        const base = {
          method: "task.finish",
          params: { summary: "model done", ...(op.cancelRuns ? { cancel_runs: true } : {}), ...(addressed ? { task_id: addressed.id } : {}) },
          side: op.by,
        };
        if (op.cancelRuns && op.by === "agent") return { ...base, expect: err("unauthorized"), apply: none };
        const t = addressed ?? cur;
        if (!t) return { ...base, expect: err("no_active_task"), apply: none };
        const open = m.openRuns(t.id);
        // this.bugs.finishCancelsRunsThenRefuses: today the runs are cancelled before the finish is checked
        const refused = (e: Expect): Plan => ({ ...base, expect: e, apply: () => op.cancelRuns && this.bugs.finishCancelsRunsThenRefuses && open.forEach((r) => (r.status = "cancelled")) });
        if (op.by === "agent" && t.status === "waiting_verification") return refused(err("unauthorized"));
        if (t.status !== "in_progress" && t.status !== "waiting_verification") return refused(err("transition_error"));
        if (open.length && !op.cancelRuns) return refused(err("conflict", "open_runs"));
        return {
          ...base,
          expect: {
            ok: true,
            check: (r) => {
              assert.equal(r.task.status, "completed");
              assert.equal(r.task.task_id, t.id);
              assert.deepEqual([...r.cancelled_runs].sort(), open.map((x) => x.id).sort(), "cancelled_runs");
            },
          },
          apply: (r) => {
            for (const run of open) run.status = "cancelled";
            m.setStatus(t, "completed");
            t.lease = null;
            m.acked.push({ what: "outcome", id: r.memory_id, text: null });
          },
        };
      }
      case "turnBegin":
      case "turnEnd": {
        const base = { method: op.t === "turnBegin" ? "turn.begin" : "turn.end", params: { reason: "model" }, side: op.by };
        if (op.by === "agent") return { ...base, expect: err("unauthorized"), apply: none };
        if (!cur || terminal(cur.status)) return { ...base, expect: err("no_active_task"), apply: none };
        return {
          ...base,
          expect: { ok: true },
          apply: () => {
            if (op.t === "turnBegin") cur.turn += 1;
            cur.lease = null;
          },
        };
      }
      case "enable": {
        const base = {
          method: "writes.enable",
          params: { reason: "model grant", ...(op.scoped ? { scope: SCOPE } : {}), ...(op.maxUses !== null ? { max_uses: op.maxUses } : {}) },
          side: op.by,
        };
        if (op.by === "agent") return { ...base, expect: err("unauthorized"), apply: none };
        if (!cur || terminal(cur.status)) return { ...base, expect: err("no_active_task"), apply: none };
        if (cur.status !== "in_progress") return { ...base, expect: err("conflict", "not_in_progress"), apply: none };
        return {
          ...base,
          expect: { ok: true, check: (r) => assert.match(String(r.lease.granted_by), /^host:/) },
          apply: () => (cur.lease = { turn: cur.turn, scoped: op.scoped, maxUses: op.maxUses, uses: 0 }),
        };
      }
      case "request": {
        const base = { method: "writes.request", params: { reason: "model asks" }, side: "agent" as Side };
        if (!cur || terminal(cur.status)) return { ...base, expect: err("no_active_task"), apply: none };
        return {
          ...base,
          expect: {
            ok: true,
            check: (r) => {
              assert.equal(r.granted, false);
              assert.equal(r.task.lease_log.at(-1)?.event, "requested");
            },
          },
          apply: none,
        };
      }
      case "require": {
        const action = op.inScope ? ACTION_IN_SCOPE : ACTION_OUT_OF_SCOPE;
        const base = { method: "writes.require", params: { action }, side: "agent" as Side };
        const gate = (reason: string, revoke: boolean): Plan => ({ ...base, expect: err("write_gate_violation", reason), apply: () => revoke && cur && (cur.lease = null) });
        if (!cur) return { ...base, expect: err("no_active_task"), apply: none };
        if (m.pending) return gate("read_only", false);
        const lease = cur.lease;
        if (!lease) return gate("read_only", false);
        if (lease.turn !== cur.turn) return gate("stale_lease", true);
        if (cur.status !== "in_progress") return gate("not_in_progress", true);
        if (lease.maxUses !== null && lease.uses >= lease.maxUses) return gate("uses_exhausted", true);
        if (lease.scoped && !op.inScope) return gate("out_of_scope", false);
        return {
          ...base,
          expect: { ok: true, check: (r) => assert.equal(r.turn, cur.turn) },
          apply: () => {
            if (lease.maxUses !== null) lease.uses += 1;
          },
        };
      }
      case "checkpoint": {
        const base = {
          method: "task.checkpoint",
          params: { summary: "model summary", next_step: "model next step", ...(op.progress ? { kind: "progress" } : {}) },
          side: "agent" as Side,
        };
        if (!cur) return { ...base, expect: err("no_active_task"), apply: none };
        if (terminal(cur.status)) return { ...base, expect: err("transition_error"), apply: none };
        // a pending checkpoint of this task is replayed first, with its effect: its pause, its end of the lease
        const replayed = m.pending !== null && m.pending.task === cur.id;
        const from = replayed && m.pending!.pause && cur.status === "in_progress" ? "paused" : cur.status;
        const status = !op.progress && from === "in_progress" ? "paused" : from;
        return {
          ...base,
          expect: {
            ok: true,
            check: (r) => {
              assert.equal(typeof r.text, "string");
              assert.ok(r.text.length > 0);
              assert.equal(r.task.status, status);
            },
          },
          apply: (r) => {
            m.pending = null;
            if (replayed) cur.lease = null;
            if (!op.progress || status !== cur.status) {
              cur.lease = null;
              m.setStatus(cur, status);
            }
            m.acked.push({ what: "checkpoint", id: r.memory_id, text: r.text });
          },
        };
      }
      case "resume": {
        const base = { method: "task.resume", params: {}, side: "agent" as Side };
        if (!cur || terminal(cur.status)) return { ...base, expect: err("no_active_task"), apply: none };
        const waiting = m.pending !== null;
        return {
          ...base,
          expect: {
            ok: true,
            check: async (r) => {
              assert.equal(r.replayed !== null, waiting, "resume replays the pending checkpoint iff one waits");
              if (r.replayed) {
                const got = await this.sys.ok("memory.get", { id: r.replayed.memory_id });
                assert.match(got.record.content, /\[LongRun Checkpoint\]/);
              }
              assert.equal(r.pending_checkpoint, null);
            },
          },
          apply: () => {
            m.pending = null;
            m.resumeEffect(cur);
          },
        };
      }
      case "save": {
        const content = `model note ${++noteCounter} ${Date.now()}`;
        return {
          method: "memory.save",
          params: { type: "note", title: "model note", content },
          side: "agent",
          expect: { ok: true },
          apply: (r) => m.acked.push({ what: "note", id: r.id, text: content }),
        };
      }
      case "ask": {
        const action = ["email.send", "rm -rf build"][op.action]!;
        const params = { action, reason: "the model asks" };
        if (!cur) return { method: "approval.request", params, side: "agent", expect: err("no_active_task"), apply: none };
        if (terminal(cur.status)) return { method: "approval.request", params, side: "agent", expect: err("conflict", "task_finished"), apply: none };
        const known = m.approvals.find((a) => a.task === cur.id && a.action === action);
        return {
          method: "approval.request",
          params,
          side: "agent",
          expect: {
            ok: true,
            check: (r) => {
              assert.equal(r.created, !known, "asking again returns the record it made");
              if (known) assert.deepEqual([r.approval.approval_id, r.approval.status], [known.id, known.status]);
              else assert.equal(r.approval.status, "pending");
            },
          },
          apply: (r) => {
            if (!known) m.approvals.push({ id: r.approval.approval_id, task: cur.id, action, status: "pending" });
          },
        };
      }
      case "answer": {
        if (!m.approvals.length) return null;
        const a = m.approvals[m.approvals.length - 1 - (op.approval % m.approvals.length)]!;
        const params = { approval_id: a.id, decision: op.approve ? "approve" : "reject", note: "the model answers" };
        if (op.by === "agent") return { method: "approval.answer", params, side: "agent", expect: err("unauthorized"), apply: none };
        if (a.status !== "pending") return { method: "approval.answer", params, side: "host", expect: err("conflict", "approval_answered", { status: a.status }), apply: none };
        return {
          method: "approval.answer",
          params,
          side: "host",
          expect: { ok: true, check: (r) => assert.equal(r.approval.status, op.approve ? "approved" : "rejected") },
          apply: () => (a.status = op.approve ? "approved" : "rejected"),
        };
      }
      case "forget": {
        const pool = m.acked.filter((x) => (op.checkpoint ? x.what === "checkpoint" : x.what === "note"));
        if (!pool.length) return null;
        const target = pool[pool.length - 1 - (op.note % pool.length)]!;
        const params = { ids: [target.id], reason: "the model forgets" };
        if (op.by === "agent") return { method: "memory.forget", params, side: "agent", expect: err("unauthorized"), apply: none };
        // what recovery reads is never forgotten
        if (target.what !== "note") return { method: "memory.forget", params, side: "host", expect: err("transition_error"), apply: none };
        return {
          method: "memory.forget",
          params,
          side: "host",
          expect: { ok: true, check: (r) => assert.deepEqual(r.forgotten, [target.id]) },
          apply: () => {
            m.acked = m.acked.filter((x) => x !== target);
            m.forgotten.push(target.id);
          },
        };
      }
      case "runStart": {
        const base = {
          method: "run.start",
          params: { owner: OWNERS[op.exec], tools: ["fetch"], ...(op.budget !== null ? { budget: { tool_calls: op.budget } } : {}) },
          side: op.by,
        };
        const status: RunStatus = op.by === "host" ? "running" : "requested";
        if (!cur || terminal(cur.status)) return { ...base, expect: err("no_active_task"), apply: none };
        if (m.openRuns(cur.id).length) return { ...base, expect: err("conflict", "run_active"), apply: none };
        return {
          ...base,
          expect: {
            ok: true,
            check: (r) => {
              assert.equal(r.run.epoch, 1);
              assert.equal(r.run.status, status);
              assert.equal(r.run.task_id, cur.id);
              assert.ok(!m.runs.some((x) => x.id === r.run.run_id), `run.start returned a known run id ${r.run.run_id}`);
            },
          },
          apply: (r) => {
            const held: [number | null, number | null] = [null, null];
            held[op.exec] = 1;
            m.runs.push({ id: r.run.run_id, task: cur.id, status, owner: OWNERS[op.exec], epoch: 1, budget: op.budget, spent: 0, receipts: [], tools: ["fetch"], parent: null, carried: [], charges: [], held });
          },
        };
      }
      case "continue": {
        const ended = m.runs.filter((r) => r.status !== "running" && r.status !== "parked" && r.status !== "requested");
        const parent = op.ended && ended.length ? ended[ended.length - 1 - (op.run % ended.length)]! : m.pickRun(op.run);
        if (!parent) return null;
        const tools = op.tools === 0 ? undefined : op.tools === 1 ? ["fetch"] : op.tools === 2 ? ["fetch", "deploy"] : [];
        const base = {
          method: "run.continue",
          params: { parent_run_id: parent.id, owner: OWNERS[op.exec], budget: op.budget !== null ? { tool_calls: op.budget } : {}, ...(tools ? { tools } : {}) },
          side: op.by,
        };
        const status: RunStatus = op.by === "host" ? "running" : "requested";
        if (!cur || terminal(cur.status)) return { ...base, expect: err("no_active_task"), apply: none };
        // an open parent is claimed, not continued; a refused one was never granted: nothing to continue
        if (["running", "parked", "requested", "refused"].includes(parent.status)) return { ...base, expect: err("conflict", "run_status"), apply: none };
        if (m.openRuns(cur.id).length) return { ...base, expect: err("conflict", "run_active"), apply: none };
        if (tools && tools.some((x) => !parent.tools.includes(x))) return { ...base, expect: err("unauthorized"), apply: none };
        // the parent's unknown effects, and those it carries still unknown, travel as open items
        const carried = [...parent.receipts, ...parent.carried].filter((r) => r.status === "unknown");
        return {
          ...base,
          expect: {
            ok: true,
            check: (r) => {
              assert.equal(r.run.parent_run_id, parent.id);
              assert.equal(r.run.epoch, 1);
              assert.equal(r.run.status, status);
              assert.deepEqual(r.run.authorization.tools, tools ?? parent.tools);
              assert.deepEqual(r.open_items.filter((x: { receipt_id?: string }) => x.receipt_id).map((x: { receipt_id: string }) => x.receipt_id).sort(), carried.map((x) => x.id).sort(), "open_items");
              // an unknown cost anywhere up the chain is an open item of the continuation
              assert.deepEqual(r.open_items.filter((x: { charge_id?: string }) => x.charge_id).map((x: { charge_id: string }) => x.charge_id).sort(), chainCharges(parent).sort(), "open charges");
            },
          },
          apply: (r) => {
            const held: [number | null, number | null] = [null, null];
            held[op.exec] = 1;
            m.runs.push({ id: r.run.run_id, task: cur.id, status, owner: OWNERS[op.exec], epoch: 1, budget: op.budget, spent: 0, receipts: [], tools: tools ?? [...parent.tools], parent, carried, charges: [], held });
          },
        };
      }
      case "claim": {
        const run = m.pickRun(op.run);
        if (!run) return null;
        const base = { method: "run.claim", params: { run_id: run.id, owner: OWNERS[op.exec] }, side: "agent" as Side };
        if (run.status !== "running" && run.status !== "parked") return { ...base, expect: err("conflict", "run_status"), apply: none };
        const begun = run.receipts.filter((r) => r.status === "begun").map((r) => r.id);
        return {
          ...base,
          expect: {
            ok: true,
            check: (r) => {
              assert.equal(r.run.epoch, run.epoch + 1);
              assert.equal(r.run.owner, OWNERS[op.exec]);
              assert.deepEqual(r.newly_unknown.map((x: { receipt_id: string }) => x.receipt_id).sort(), [...begun].sort(), "newly_unknown");
              for (const x of r.newly_unknown) assert.equal(x.status, "unknown");
            },
          },
          apply: () => {
            run.epoch += 1;
            run.owner = OWNERS[op.exec];
            run.held[op.exec] = run.epoch;
            for (const r of run.receipts) if (r.status === "begun") r.status = "unknown";
          },
        };
      }
      case "runOp":
      case "hostCancel": {
        const run = m.pickRun(op.run);
        if (!run) return null;
        const kind = op.t === "hostCancel" ? "cancel" : op.op;
        const epoch = op.t === "hostCancel" ? null : (run.held[op.exec] ?? 1);
        const params: Record<string, unknown> = { run_id: run.id, ...(epoch !== null ? { epoch } : {}) };
        if (kind === "park" || kind === "parkAt") params.waiting_for = "model condition";
        if (kind === "parkAt") params.wake_at = new Date(Date.now() + 86_400_000).toISOString();
        if (kind === "finish") params.outcome = "model outcome";
        if (kind === "cancel") params.reason = "model cancel";
        const base = { method: `run.${kind === "parkAt" ? "park" : kind}`, params, side: (op.t === "hostCancel" ? "host" : "agent") as Side };
        if (epoch !== null && epoch !== run.epoch) return { ...base, expect: err("stale_epoch", undefined, { current_epoch: run.epoch }), apply: none };
        const from: Record<string, RunStatus[]> = { park: ["running"], parkAt: ["running"], wake: ["parked"], finish: ["running", "parked"], cancel: ["running", "parked", "requested"] };
        const to: Record<string, RunStatus> = { park: "parked", parkAt: "parked", wake: "running", finish: "finished", cancel: "cancelled" };
        if (!from[kind]!.includes(run.status)) return { ...base, expect: err("conflict", "run_status"), apply: none };
        const check = (r: any) => {
          assert.equal(r.run.status, to[kind]);
          // a wake time stays only on a run parked with one; waking, finishing or cancelling clears it
          if (kind === "parkAt") assert.equal(r.run.wake_at, new Date(String(params.wake_at)).toISOString());
          else assert.equal(r.run.wake_at, null);
        };
        return { ...base, expect: { ok: true, check }, apply: () => (run.status = to[kind]!) };
      }
      case "heartbeat": {
        const run = m.pickRun(op.run);
        if (!run) return null;
        const epoch = run.held[op.exec] ?? 1;
        const base = { method: "run.heartbeat", params: { run_id: run.id, epoch }, side: "agent" as Side };
        const stop = (want: string | null) => ({ ok: true as const, check: (r: any) => assert.equal(r.stop, want, "the heartbeat's stop") });
        // an older owner is told it was superseded; nothing is recorded for it
        if (epoch < run.epoch) return { ...base, expect: stop("superseded"), apply: none };
        if (run.status === "cancelled") return { ...base, expect: stop("cancelled"), apply: none };
        if (run.status === "finished" || run.status === "failed" || run.status === "refused") return { ...base, expect: err("conflict", "run_status"), apply: none };
        // the model's only limit is tool_calls (no time budgets): reached, the owner is told so
        return { ...base, expect: stop(run.budget !== null && run.spent >= run.budget ? "budget_exhausted" : null), apply: none };
      }
      case "decide": {
        const run = m.pickRun(op.run);
        if (!run) return null;
        const base = { method: op.grant ? "run.grant" : "run.refuse", params: { run_id: run.id, reason: "model decision" }, side: op.by };
        if (op.by === "agent") return { ...base, expect: err("unauthorized"), apply: none };
        if (run.status !== "requested") return { ...base, expect: err("conflict", "run_status"), apply: none };
        const to: RunStatus = op.grant ? "running" : "refused";
        return { ...base, expect: { ok: true, check: (r) => assert.equal(r.run.status, to) }, apply: () => (run.status = to) };
      }
      case "begin": {
        const run = m.pickRun(op.run);
        if (!run) return null;
        const epoch = run.held[op.exec] ?? 1;
        const key = `key-${op.key}`;
        const kind = op.kind ? "model_request" : "tool_call";
        const base = {
          method: "receipt.begin",
          params: { run_id: run.id, epoch, tool: op.tool ? "deploy" : "fetch", idempotency_key: key, args: { v: op.args }, ...(op.kind ? { kind } : {}) },
          side: "agent" as Side,
        };
        if (epoch !== run.epoch) return { ...base, expect: err("stale_epoch", undefined, { current_epoch: run.epoch }), apply: none };
        // a request the host has not granted begins nothing
        if (run.status === "requested") return { ...base, expect: err("unauthorized", "run_not_granted"), apply: none };
        const own = run.receipts.filter((r) => r.key === key).at(-1);
        let attempt = 1;
        if (own) {
          // one key names one kind of effect
          if (own.kind !== kind) return { ...base, expect: err("conflict", "receipt_kind_differs", { receipt_id: own.id }), apply: none };
          if (own.args !== op.args) return { ...base, expect: err("conflict", "receipt_args_differ"), apply: none };
          if (own.status === "completed") {
            return {
              ...base,
              expect: {
                ok: true,
                check: (r) => {
                  assert.equal(r.replayed, true);
                  assert.equal(r.receipt.receipt_id, own.id);
                  assert.equal(r.receipt.status, "completed");
                },
              },
              apply: none,
            };
          }
          if (own.status === "unknown") return { ...base, expect: err("conflict", "receipt_unknown"), apply: none };
          if (own.status === "begun") return { ...base, expect: err("conflict", "receipt_in_flight"), apply: none };
          attempt = own.attempt + 1;
        } else {
          // an effect unsettled in an earlier run of the chain may have happened: not begun again
          for (let a = run.parent; a; a = a.parent) {
            const unsettled = a.receipts.filter((r) => r.key === key && (r.status === "unknown" || r.status === "begun")).sort((x, y) => y.attempt - x.attempt)[0];
            if (unsettled) return { ...base, expect: err("conflict", unsettled.status === "unknown" ? "receipt_unknown" : "receipt_in_flight", { receipt_id: unsettled.id }), apply: none };
          }
        }
        if (run.status !== "running") return { ...base, expect: err("conflict", "run_status"), apply: none };
        if (!run.tools.includes(op.tool ? "deploy" : "fetch")) return { ...base, expect: err("unauthorized"), apply: none };
        // an unknown tool-call count in the run or up its chain leaves a tool_calls limit uncertain: no new effects
        if (run.budget !== null && (run.spent >= run.budget || run.charges.some((c) => !c.reconciled) || (run.parent && chainCharges(run.parent).length))) {
          return { ...base, expect: err("budget_exhausted"), apply: none };
        }
        return {
          ...base,
          expect: {
            ok: true,
            check: (r) => {
              assert.equal(r.replayed, false);
              assert.equal(r.receipt.status, "begun");
              assert.equal(r.receipt.attempt, attempt);
              assert.equal(r.receipt.kind, kind);
              assert.ok(!run.receipts.some((x) => x.id === r.receipt.receipt_id), `receipt.begin returned a known receipt id ${r.receipt.receipt_id}`);
            },
          },
          apply: (r) => {
            run.receipts.push({ id: r.receipt.receipt_id, key, args: op.args, status: "begun", attempt, hasRef: false, kind });
            // the tool_calls limit counts tool calls only: a model request is a request
            if (kind === "tool_call") run.spent += 1;
          },
        };
      }
      case "charge": {
        const run = m.pickRun(op.run);
        if (!run) return null;
        const epoch = run.held[op.exec] ?? 1;
        const base = { method: "budget.charge", params: { run_id: run.id, epoch, unknown: ["tool_calls"], note: "model charge" }, side: "agent" as Side };
        if (epoch !== run.epoch) return { ...base, expect: err("stale_epoch", undefined, { current_epoch: run.epoch }), apply: none };
        return {
          ...base,
          expect: { ok: true, check: (r) => assert.ok(!run.charges.some((c) => c.id === r.charge_id), `budget.charge returned a known charge id ${r.charge_id}`) },
          apply: (r) => run.charges.push({ id: r.charge_id, reconciled: false }),
        };
      }
      case "reconcile": {
        const run = m.pickRun(op.run);
        if (!run || !run.charges.length) return null;
        const c = run.charges[op.charge % run.charges.length]!;
        const epoch = run.held[op.exec] ?? 1;
        const base = { method: "budget.reconcile", params: { run_id: run.id, epoch, charge_id: c.id, tool_calls: 0, evidence: "model evidence" }, side: "agent" as Side };
        if (epoch !== run.epoch) return { ...base, expect: err("stale_epoch", undefined, { current_epoch: run.epoch }), apply: none };
        if (c.reconciled) return { ...base, expect: err("conflict", "charge_known"), apply: none };
        return { ...base, expect: { ok: true }, apply: () => (c.reconciled = true) };
      }
      case "settle": {
        const run = m.pickRun(op.run);
        const settleable = run ? [...run.carried, ...run.receipts] : [];
        if (!run || !settleable.length) return null;
        const rc = settleable[settleable.length - 1 - (op.receipt % settleable.length)]!;
        const epoch = run.held[op.exec] ?? 1;
        const base = {
          method: "receipt.settle",
          params: {
            run_id: run.id,
            epoch,
            receipt_id: rc.id,
            outcome: op.outcome,
            ...(op.ref ? { result_ref: `C_${String(settleable.indexOf(rc) + 1).padStart(4, "0")}` } : {}),
            ...(op.outcome === "failed" ? { error: "model failure" } : {}),
            ...(op.evidence ? { evidence: "model evidence" } : {}),
          },
          side: "agent" as Side,
        };
        if (op.outcome === "completed" && !op.ref) return { ...base, expect: err("invalid_params"), apply: none };
        if (epoch !== run.epoch) return { ...base, expect: err("stale_epoch", undefined, { current_epoch: run.epoch }), apply: none };
        const allowed = rc.status === "begun" || (rc.status === "unknown" && op.evidence);
        if (!allowed) return { ...base, expect: err("conflict", "receipt_status"), apply: none };
        return {
          ...base,
          expect: { ok: true, check: (r) => assert.equal(r.receipt.status, op.outcome) },
          apply: () => {
            rc.status = op.outcome;
            rc.hasRef = op.ref;
          },
        };
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // A fault at a named point during one operation
  // -------------------------------------------------------------------------------------------

  async #fault(at: FaultPoint, crash: boolean, op: Op): Promise<void> {
    const m = this.m;
    const p = this.plan(op);
    if (!p) {
      this.stats.skipped++;
      if (crash) await this.#restart();
      return;
    }
    const cur = m.current;
    const waiting = m.pending;
    this.stats.calls++;
    this.sys.crash.arm(at, crash);
    const ans = await this.sys.call(p.method, p.params, p.side);
    this.sys.crash.disarm();
    const fired = this.sys.crash.fired;
    this.#count(p.method, ans, fired ? `${crash ? "crash" : "fault"}@${at} ` : "");
    if (!fired) {
      // the step never reached the point (refused earlier, or the point is not on its path)
      await expectAnswer(p, ans);
      p.apply(ans.result);
      if (crash) await this.#restart();
      return;
    }
    this.stats.faultsFired++;
    const got = ans.error?.data?.kind ?? "ok";
    const before = BEFORE_COMMIT.has(at);
    switch (op.t) {
      case "begin":
      case "settle":
      case "save": {
        assert.equal(got, "internal", `a fault at ${at} during ${p.method} answers internal`);
        if (before) break;
        if (op.t === "settle") p.apply(undefined);
        if (op.t === "begin" && "ok" in p.expect) {
          // committed, but the answer (the receipt id) was lost: learn it from the ledger
          const run = m.pickRun(op.run)!;
          const known = new Set(run.receipts.map((r) => r.id));
          const listed = (await this.sys.ok("receipt.list", { run_id: run.id })).receipts as { receipt_id: string; idempotency_key: string; status: string }[];
          const fresh = listed.filter((r) => !known.has(r.receipt_id));
          const replay = run.receipts.some((r) => r.key === `key-${op.key}` && r.status === "completed");
          if (replay) {
            assert.equal(fresh.length, 0, "a replayed begin adds no receipt");
          } else {
            assert.equal(fresh.length, 1, `a begin that committed before the fault at ${at} left exactly one new receipt`);
            assert.equal(fresh[0]!.idempotency_key, `key-${op.key}`);
            assert.equal(fresh[0]!.status, "begun");
            p.apply({ receipt: fresh[0] });
          }
        }
        break;
      }
      case "checkpoint": {
        assert.equal(got, "checkpoint_write_error", `a fault at ${at} during task.checkpoint answers checkpoint_write_error`);
        assert.ok(cur && !terminal(cur.status));
        const pausing = !op.progress && cur.status === "in_progress";
        if (!before) {
          // committed: the task is paused (or keeps running), memory holds it, but no text was returned;
          // a pending checkpoint it saved first was applied with it (its pause too)
          const replayedPause = waiting !== null && waiting.task === cur.id && waiting.pause === true;
          if (!op.progress || replayedPause) m.setStatus(cur, cur.status === "in_progress" ? "paused" : cur.status);
          // the pending file is cleared only after the commit, before the reply
          m.pending = at === "checkpoint.before_reply" ? null : waiting;
        }
        // the failure path ends the lease (also a progress checkpoint's), and keeps the checkpoint
        // in the pending file unless one waits there already, or the process is dead
        cur.lease = null;
        if (!crash && !waiting) m.pending = { task: cur.id, pause: pausing };
        break;
      }
      case "resume": {
        assert.ok(cur && !terminal(cur.status));
        // the new turn commits (with the replay, or without it when memory refused it); the
        // pending checkpoint stays until a later resume or checkpoint has saved it
        m.resumeEffect(cur);
        // after the replay committed, the checkpoint still waiting was applied (its pause is spent):
        // a later checkpoint saves it without applying it again
        m.pending = waiting && at === "resume.after_replay" ? { ...waiting, pause: false } : waiting;
        if (at === "memory.before_commit" && !crash) {
          assert.equal(got, "ok", "resume goes on without the replay when memory refuses it");
          assert.equal(ans.result.replayed, null);
          assert.notEqual(ans.result.pending_checkpoint, null);
        } else {
          assert.equal(got, "internal");
        }
        break;
      }
      case "finish": {
        assert.equal(got, "internal", "a finish whose outcome record failed answers internal");
        const t = op.task === null ? cur : m.tasks[op.task % m.tasks.length]!;
        // the fault fired, so the finish was allowed and its runs were cancelled before the save
        if (op.cancelRuns && (this.bugs.finishCancelsRunsThenRefuses || this.bugs.finishCancelsRunsBeforeItsOutcomeIsSaved) && t) for (const r of m.openRuns(t.id)) r.status = "cancelled";
        break;
      }
      default:
        throw new Error(`no fault semantics for ${op.t} at ${at}`);
    }
    if (crash) await this.#restart();
  }

  // -------------------------------------------------------------------------------------------
  // After every step: agreement and invariants
  // -------------------------------------------------------------------------------------------

  async check(integrity = true): Promise<void> {
    const m = this.m;
    const sys = this.sys;
    const status = await sys.ok("task.status");
    if (!m.current) assert.equal(status.task, null, "no task yet");
    assert.equal(status.pending_checkpoint !== null, m.pending !== null, `pending checkpoint: implementation ${JSON.stringify(status.pending_checkpoint)}, model ${JSON.stringify(m.pending)}`);
    if (m.pending && status.pending_checkpoint.task_id !== "") assert.equal(status.pending_checkpoint.task_id, m.pending.task);

    // every task the model knows (the current one first), with its lease and its runs
    for (const t of m.tasks) {
      const st = t === m.current ? status : await sys.ok("task.status", { task_id: t.id });
      compareTask(st.task, t, t === m.current && m.pending !== null);
      if (m.current !== t) assert.equal(st.task.access_mode, "read_only", `I3: a task that is not current holds a lease: ${t.id}`);
      // who granted: every grant in the log is the host's
      for (const e of st.task.lease_log) if (e.event === "granted") assert.match(String(e.by), /^host:/, `a lease of ${t.id} granted by someone other than the host`);
      const runs = m.runs.filter((r) => r.task === t.id);
      assert.deepEqual(
        (st.runs as { run_id: string; status: string; owner: string; epoch: number; parent_run_id: string | null; open_items: number }[])
          .map((r) => ({ id: r.run_id, status: r.status, owner: r.owner, epoch: r.epoch, parent: r.parent_run_id, open: r.open_items }))
          .sort((a, b) => a.id.localeCompare(b.id)),
        runs
          .map((r) => ({ id: r.id, status: r.status, owner: r.owner, epoch: r.epoch, parent: r.parent?.id ?? null, open: r.carried.filter((x) => x.status === "unknown").length + (r.parent ? chainCharges(r.parent).length : 0) }))
          .sort((a, b) => a.id.localeCompare(b.id)),
        `runs of task ${t.id}`,
      );
    }
    const root = await sys.root();
    const count = Number((await root.db.execute("SELECT COUNT(*) AS n FROM tasks")).rows[0]!.n);
    assert.equal(count, m.foreign.size + m.tasks.length, "the root holds exactly the tasks started (none lost, none overwritten)");

    for (const run of m.runs) {
      const listed = (await sys.ok("receipt.list", { run_id: run.id })).receipts as { receipt_id: string; idempotency_key: string; kind: string; status: string; attempt: number; result_ref: string | null }[];
      assert.deepEqual(
        listed.map((r) => ({ id: r.receipt_id, key: r.idempotency_key, kind: r.kind, status: r.status, attempt: r.attempt, ref: r.result_ref !== null })),
        run.receipts.map((r) => ({ id: r.id, key: r.key, kind: r.kind, status: r.status, attempt: r.attempt, ref: r.hasRef })),
        `receipts of run ${run.id}`,
      );
      // each kind counted where it belongs: the run's tool calls are its tool_call receipts only
      const budget = (await sys.ok("budget.status", { run_id: run.id })).budget as { spent: { tool_calls: number; requests: number } };
      assert.equal(budget.spent.tool_calls, run.receipts.filter((r) => r.kind === "tool_call").length, `tool calls of run ${run.id}`);
      assert.equal(budget.spent.requests, run.receipts.filter((r) => r.kind === "model_request").length, `requests of run ${run.id}`);
    }

    // I2 / A1: everything acknowledged reads back; a checkpoint's text verbatim
    for (const a of m.acked) {
      const got = await sys.call("memory.get", { id: a.id });
      assert.ok(got.result, `${a.what} ${a.id} was acknowledged but memory.get says ${JSON.stringify(got.error)}`);
      if (a.text !== null) assert.equal(got.result.record.content, a.text, `${a.what} ${a.id} reads back other than it was returned`);
    }

    // forgotten notes stay gone (restarts and replays included)
    for (const id of m.forgotten) {
      const got = await sys.call("memory.get", { id });
      assert.equal(got.error?.data?.kind, "not_found", `forgotten note ${id} reads back: ${JSON.stringify(got.result)?.slice(0, 200)}`);
    }
    // every approval asked, with the host's answer, and no other
    if (m.current || m.approvals.length) {
      const listed = (await sys.ok("approval.list", { all_tasks: true })).approvals as { approval_id: string; task_id: string; action: string; status: string }[];
      assert.deepEqual(
        listed.filter((a) => !m.foreign.has(a.task_id)).map((a) => [a.approval_id, a.task_id, a.action, a.status]).reverse(),
        m.approvals.map((a) => [a.id, a.task, a.action, a.status]),
        "the approvals and their answers",
      );
    }

    // A3: nothing completed without its outcome
    const bad = await root.db.execute("SELECT COUNT(*) AS n FROM receipts WHERE status = 'completed' AND (result_ref IS NULL OR settled_at IS NULL)");
    assert.equal(Number(bad.rows[0]!.n), 0, "a receipt says completed without its result");
    // A4 (and the state read back above)
    if (integrity || this.#restartedSinceCheck) {
      const ic = await root.db.execute("PRAGMA integrity_check");
      assert.equal(String(ic.rows[0]![0]), "ok", "PRAGMA integrity_check");
      // no temp file survives (opening a root removes orphans; a failed atomic write its own)
      for (const d of [join(sys.dir, ".longrun"), join(sys.dir, "raw_data")]) {
        if (existsSync(d)) assert.deepEqual(readdirSync(d).filter((n) => n.endsWith(".tmp")), [], `temp files left in ${d}`);
      }
      this.#restartedSinceCheck = false;
    }
  }
}

function compareTask(real: any, t: MTask, pending = false): void {
  assert.ok(real, `task.status has no task, the model has ${t.id}`);
  assert.equal(real.task_id, t.id, "task id (the current task, when asked without one)");
  assert.equal(real.status, t.status, `status of ${t.id}`);
  assert.equal(real.turn_index, t.turn, `turn of ${t.id}`);
  // task.status shows a lease only while it is in force: of this turn, in progress, uses left,
  // and no failed checkpoint pending (which ended it, whatever the stored state still says)
  const l = t.lease;
  const held = l && !pending && l.turn === t.turn && t.status === "in_progress" && (l.maxUses === null || l.uses < l.maxUses) ? l : null;
  assert.equal(real.access_mode, held ? "writable" : "read_only", `access mode of ${t.id}`);
  assert.equal(real.write_lease_turn, held ? held.turn : null, `write_lease_turn of ${t.id}`);
  if (!held) {
    assert.equal(real.lease, null, `lease of ${t.id}`);
  } else {
    assert.deepEqual(
      { turn: real.lease.turn, scope: real.lease.scope, max_uses: real.lease.max_uses, uses: real.lease.uses },
      { turn: held.turn, scope: held.scoped ? SCOPE : null, max_uses: held.maxUses, uses: held.uses },
      `lease of ${t.id}`,
    );
  }
  // I3, on the implementation's own state: writable only with a lease of this turn, in progress
  if (real.access_mode === "writable") {
    assert.equal(real.write_lease_turn, real.turn_index, "I3: writable with a lease of another turn");
    assert.equal(real.lease?.turn, real.turn_index, "I3: the lease's turn");
    assert.equal(real.status, "in_progress", "I3: writable while not in progress");
  }
}

async function expectAnswer(p: Plan, ans: Answer): Promise<void> {
  const e = p.expect;
  if ("ok" in e) {
    assert.ok(!ans.error, `${p.method} ${JSON.stringify(p.params)} (${p.side}): expected success, got ${JSON.stringify(ans.error)}`);
    if (e.check) await e.check(ans.result);
    return;
  }
  assert.ok(ans.error, `${p.method} ${JSON.stringify(p.params)} (${p.side}): expected ${e.kind}${e.reason ? ` (${e.reason})` : ""}, got success ${JSON.stringify(ans.result)?.slice(0, 400)}`);
  assert.equal(ans.error.data?.kind, e.kind, `${p.method} ${JSON.stringify(p.params)} (${p.side}): ${ans.error.message}`);
  if (e.reason) assert.equal(ans.error.data.reason, e.reason, `${p.method}: reason (${ans.error.message})`);
  for (const [k, v] of Object.entries(e.data ?? {})) assert.deepEqual(ans.error.data[k], v, `${p.method}: data.${k}`);
}

/** Runs one sequence on a fresh root under `base` (or the system temp directory) and removes it. */
export async function runOnFreshRoot(actions: readonly Action[], options: RunnerOptions & { base?: string; ids?: IdSource } = {}): Promise<RunStats> {
  const sys = RealSystem.create(options.base, options.ids);
  try {
    return await new ModelRunner(sys, options).run(actions);
  } finally {
    await sys.dispose();
  }
}
