/**
 * What the status page shows, read through the dispatcher with the viewer's side (the same
 * methods, schemas, lanes and refusals as `/rpc`): the task, its lease as a gate would judge it,
 * recent turns and grants, runs with their receipts and budgets, artifacts and adjustments. A
 * section that fails to read says so and never blanks the rest.
 */
import { readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { checkGate } from "../../core/lease.ts";
import type { TaskSummary } from "../../core/ports.ts";
import type { TaskState } from "../../core/task.ts";
import type { Adjustment } from "../../ledger/adjustments.ts";
import type { ArtifactVersion } from "../../ledger/artifacts.ts";
import type { Receipt } from "../../ledger/receipts.ts";
import type { Approval } from "../../ledger/approvals.ts";
import type { RunSummary } from "../../ledger/runs.ts";
import type { Dispatcher } from "../../rpc/dispatcher.ts";
import type { ErrorObject } from "../../rpc/errors.ts";
import type { Caller, Side } from "../../rpc/method.ts";
import { ROOT_PATHS } from "../../root/layout.ts";

/** Bounds on what one snapshot carries (the page shows the newest; counts are always whole). */
export const SNAPSHOT_LIMITS = { tasks: 200, runs: 20, receipts_per_group: 25, timeline: 40, artifacts: 200, adjustments: 100, roots: 200 } as const;

export type ReceiptGroup = { count: number; items: Receipt[] };
export type RunView = Omit<RunSummary, "budget"> & {
  budget: Omit<RunSummary["budget"], "elapsed_seconds" | "seconds_left">;
  receipts: Record<Receipt["status"], ReceiptGroup> | null;
};

/** The lease as the gate sees it now: `why` is the gate's refusal reason when the agent may not write. */
export interface LeaseView {
  writable: boolean;
  why: string | null;
  turn: number;
  lease: TaskState["lease"];
}

/** One line of "recent turns and grants", newest first. */
export interface TimelineEntry {
  at: string;
  turn: number;
  /** `ended`: the lease ran out by its own bounds (time to live or writes), with no event of its own in the log. */
  event: "granted" | "revoked" | "requested" | "status" | "ended";
  text: string;
  by: string | null;
  scope: string[] | null;
}

export interface Problem {
  section: string;
  kind: string;
  message: string;
}

export interface Snapshot {
  side: Side;
  root: string;
  roots: string[];
  /** The newest tasks (the current one always among them) and how many the root has. */
  tasks: TaskSummary[];
  tasks_total: number;
  task: TaskState | null;
  current: boolean;
  lease: LeaseView | null;
  pending_checkpoint: unknown;
  timeline: TimelineEntry[];
  runs: RunView[];
  runs_total: number;
  /** The task's newest approvals (pending and answered), newest first. */
  approvals: Approval[];
  /** The newest adjustments and artifact versions, and how many there are. */
  adjustments: Adjustment[];
  adjustments_total: number;
  artifacts: ArtifactVersion[];
  artifacts_total: number;
  problems: Problem[];
}

type Answer = { result?: unknown; error?: ErrorObject };

/**
 * The roots a page may pick: the default root, then every allowed directory that is a root and
 * every direct child of one that is (has `.longrun/`). Only roots that already exist: viewing
 * never lays out a new one.
 */
export function rootChoices(defaultRoot: string, allowRoots: string[]): string[] {
  const out = new Set<string>([defaultRoot]);
  const isRoot = (dir: string) => {
    try {
      return statSync(join(dir, ROOT_PATHS.longrun)).isDirectory();
    } catch {
      return false;
    }
  };
  // a link in an allowed directory to a root elsewhere is not offered (the registry refuses it too)
  const inside = (dir: string, child: string) => {
    try {
      const real = realpathSync(child);
      return real === child || real.startsWith(realpathSync(dir) + "/");
    } catch {
      return false;
    }
  };
  for (const dir of allowRoots) {
    if (out.size >= SNAPSHOT_LIMITS.roots) break;
    if (isRoot(dir)) out.add(dir);
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      if (out.size >= SNAPSHOT_LIMITS.roots) break;
      if (name.startsWith(".")) continue;
      const child = join(dir, name);
      if (isRoot(child) && inside(dir, child)) out.add(child);
    }
  }
  return [...out];
}

/** The gate's view of a task's lease, now (an action outside a scope still counts as writable: the page shows the scope). */
export function leaseView(task: TaskState, now: Date): LeaseView {
  const d = checkGate(task, "(status page)", now);
  const writable = d.ok || d.error.reason === "out_of_scope";
  // leaving in_progress revokes the lease, so the gate's first answer is "read-only": the page says the cause
  const why = d.ok || writable ? null : d.error.reason === "read_only" && task.status !== "in_progress" ? "not_in_progress" : d.error.reason;
  return { writable, why, turn: task.turn_index, lease: writable ? task.lease : null };
}

export function timelineOf(task: TaskState, now: Date = new Date()): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    ...task.lease_log.map((e) => ({ at: e.at, turn: e.turn, event: e.event, text: e.reason, by: e.by ?? null, scope: e.scope ?? null })),
    ...task.history.map((h) => ({ at: h.at, turn: h.turn, event: "status" as const, text: `${h.from ?? "new"} → ${h.to}: ${h.reason}`, by: null, scope: null })),
    ...leaseEnd(task, now),
  ];
  // newest first; on equal times the log order stands (a grant after the request that asked for it)
  return entries
    .map((e, i) => ({ e, i }))
    .sort((a, b) => (a.e.at === b.e.at ? b.i - a.i : a.e.at < b.e.at ? 1 : -1))
    .slice(0, SNAPSHOT_LIMITS.timeline)
    .map((x) => x.e);
}

/** A lease that ran out by its own bounds leaves no line in the log: the timeline says when it did. */
function leaseEnd(task: TaskState, now: Date): TimelineEntry[] {
  const l = task.lease;
  if (!l) return [];
  const entry = (at: string, text: string): TimelineEntry[] => [{ at, turn: l.turn, event: "ended", text, by: null, scope: l.scope }];
  if (l.max_uses !== null && l.uses >= l.max_uses) return entry(task.updated_at, `the lease's ${l.max_uses} write${l.max_uses === 1 ? "" : "s"} were all used`);
  if (l.expires_at !== null && Date.parse(l.expires_at) <= now.getTime()) return entry(l.expires_at, "the lease's time to live ran out");
  return [];
}

function groupReceipts(receipts: Receipt[]): Record<Receipt["status"], ReceiptGroup> {
  const groups: Record<Receipt["status"], ReceiptGroup> = {
    completed: { count: 0, items: [] },
    failed: { count: 0, items: [] },
    unknown: { count: 0, items: [] },
    begun: { count: 0, items: [] },
  };
  for (let i = receipts.length - 1; i >= 0; i--) {
    const r = receipts[i]!;
    const g = groups[r.status];
    g.count++;
    if (g.items.length < SNAPSHOT_LIMITS.receipts_per_group) g.items.push(r);
  }
  return groups;
}

export interface SnapshotInput {
  dispatcher: Dispatcher;
  caller: Caller;
  root: string;
  roots: string[];
  /** A task of the root; absent: the current one. */
  taskId?: string;
  now?: Date;
}

/** Reads everything the page shows about one root and task. Never throws for a refused read: it lands in `problems`. */
export async function snapshot(input: SnapshotInput): Promise<Snapshot> {
  const { dispatcher, caller, root } = input;
  const problems: Problem[] = [];
  const batch = async (calls: [string, Record<string, unknown>][]): Promise<Answer[]> => {
    if (calls.length === 0) return [];
    const msg = calls.map(([method, params], id) => ({ jsonrpc: "2.0", id, method, params: { ...params, root } }));
    const out = ((await dispatcher.handleMessage(msg, caller)) ?? []) as (Answer & { id: number })[];
    return calls.map((_, i) => out.find((a) => a.id === i) ?? { error: { code: -32603, message: "no answer", data: { kind: "internal" } } });
  };
  const take = <T>(section: string, a: Answer | undefined, fallback: T): T => {
    if (a?.error) {
      problems.push({ section, kind: String(a.error.data?.kind ?? "internal"), message: a.error.message });
      return fallback;
    }
    return (a?.result as T) ?? fallback;
  };

  const [statusA, listA] = await batch([
    ["task.status", input.taskId ? { task_id: input.taskId } : {}],
    ["task.list", {}],
  ]);
  const status = take<{ task: TaskState | null; pending_checkpoint: unknown; runs: RunSummary[]; approvals?: Approval[] }>("task", statusA, { task: null, pending_checkpoint: null, runs: [] });
  const tasks = take<{ tasks: TaskSummary[] }>("tasks", listA, { tasks: [] }).tasks;
  const task = status.task;
  const runs = [...(status.runs ?? [])].sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0)).slice(0, SNAPSHOT_LIMITS.runs);

  let adjustments: Adjustment[] = [];
  let artifacts: ArtifactVersion[] = [];
  const receipts: Answer[] = [];
  if (task) {
    const answers = await batch([
      ["adjust.list", { task_id: task.task_id }],
      ["artifact.list", { task_id: task.task_id }],
      ...runs.map((r): [string, Record<string, unknown>] => ["receipt.list", { run_id: r.run_id }]),
    ]);
    adjustments = take<{ adjustments: Adjustment[] }>("adjustments", answers[0], { adjustments: [] }).adjustments;
    artifacts = take<{ artifacts: ArtifactVersion[] }>("artifacts", answers[1], { artifacts: [] }).artifacts;
    receipts.push(...answers.slice(2));
  }

  const runViews: RunView[] = runs.map((r, i) => {
    const { elapsed_seconds: _e, seconds_left: _s, ...budget } = r.budget;
    const list = take<{ receipts: Receipt[] } | null>(`receipts of ${r.run_id}`, receipts[i], null);
    return { ...r, budget, receipts: list ? groupReceipts(list.receipts) : null };
  });

  return {
    side: caller.side,
    root,
    roots: input.roots,
    tasks: tasks.filter((t, i) => i < SNAPSHOT_LIMITS.tasks || t.current || t.task_id === task?.task_id),
    tasks_total: tasks.length,
    task,
    current: task !== null && tasks.some((t) => t.task_id === task.task_id && t.current),
    lease: task ? leaseView(task, input.now ?? new Date()) : null,
    pending_checkpoint: status.pending_checkpoint ?? null,
    timeline: task ? timelineOf(task, input.now ?? new Date()) : [],
    runs: runViews,
    runs_total: status.runs?.length ?? 0,
    approvals: status.approvals ?? [],
    adjustments: adjustments.slice(-SNAPSHOT_LIMITS.adjustments),
    adjustments_total: adjustments.length,
    artifacts: artifacts.length <= SNAPSHOT_LIMITS.artifacts ? artifacts : [...artifacts].sort((a, b) => (a.created_at < b.created_at ? 1 : -1)).slice(0, SNAPSHOT_LIMITS.artifacts),
    artifacts_total: artifacts.length,
    problems,
  };
}
