/**
 * Budget rules of a run (seed 003, section 8), pure.
 *
 * - Spending is the sum of charges, and every charge is recorded, also past a limit: what an
 *   in-flight request really cost is never lost. A limit stops new effects, not accounting.
 * - A charge whose amounts are unknown counts as unknown, never as zero. A limit may count each
 *   unknown charge at a ceiling (`unknown_ceiling`); without one, a limited dimension with unknown
 *   charges is *uncertain*: its remaining is reported as null, and new effects are refused until
 *   the unknown charges are reconciled (their real amounts recorded, with evidence) or the run
 *   continues under a budget that sets a ceiling.
 * - Time is a budget too: a `deadline` (an instant) and `wall_seconds` (the run's age). Time is
 *   always known: the server's clock measures it.
 * - A child run (started by a run with a slice of its budget) rolls up: what it spent counts as the
 *   parent's spend, and while it is open the rest of its slice is *reserved*: it counts toward the
 *   parent's limits (effective spend) without being spent, so parent and children together never
 *   pass the parent's limits. Once the child ends, what it did not spend returns to the parent.
 * A run is exhausted when any limited dimension's effective spend has reached its limit, or its
 * time is up; then new effects are refused (artifacts stay readable and may still be saved).
 */

export const BUDGET_DIMENSIONS = ["requests", "input_tokens", "output_tokens", "tool_calls", "cost"] as const;
export type BudgetDimension = (typeof BUDGET_DIMENSIONS)[number];
export type Amounts = Partial<Record<BudgetDimension, number>>;

export interface BudgetLimits extends Amounts {
  /** How much one unknown charge counts toward each limit (absent: the dimension is uncertain while unknown charges stand). */
  unknown_ceiling?: Amounts;
  /** No new effects from this instant on (ISO 8601). */
  deadline?: string;
  /** No new effects once the run is this many seconds old. */
  wall_seconds?: number;
}

export interface Charge {
  amounts: Amounts;
  /**
   * Whether, and where, the charge's amounts are unknown: `true` means every dimension it gives no
   * amount for (a request whose usage was never reported: its tokens, its cost, and whether it
   * made tool calls); a list names exactly the unknown dimensions.
   */
  unknown: boolean | readonly BudgetDimension[];
  /**
   * An unknown charge of an earlier run of the chain (the parent, its parent…), still unreconciled:
   * it adds nothing to this run's spend (a continuation's budget is its own), but what it left
   * unknown leaves this run's limit there uncertain too (or counts at its ceiling) until reconciled.
   */
  inherited?: boolean;
  /** A child run's roll-up: its spend as `amounts`, what is left of its slice while it is open as `reserved`. */
  child?: boolean;
  /** Counted toward the limits (effective spend), never as spent: an open child's unspent slice. */
  reserved?: Amounts;
}

/** The dimensions a charge leaves unknown. */
export function unknownDimensions(c: Charge): BudgetDimension[] {
  if (c.unknown === false) return [];
  if (c.unknown === true) return BUDGET_DIMENSIONS.filter((d) => c.amounts[d] === undefined);
  return [...c.unknown];
}

export type TimeLimit = "deadline" | "wall_seconds";

export interface BudgetStatus {
  limits: BudgetLimits;
  /** Sums of the amounts charges give (reconciled ones at their real amounts). */
  spent: Record<BudgetDimension, number>;
  /** How many of the run's own charges still have unknown amounts. */
  unknown_charges: number;
  /** How many unknown charges of earlier runs of the chain (unreconciled) bear on this run's limits. */
  inherited_unknown_charges: number;
  /** Child runs whose spend is uncertain (unknown charges without a ceiling), counted in `uncertain`. */
  uncertain_children: number;
  /** What open child runs hold of their slices and have not spent yet (part of effective spend). */
  reserved: Record<BudgetDimension, number>;
  /** Known spend plus each unknown charge at its ceiling, plus reserved slices: what the limits are checked against. */
  effective: Record<BudgetDimension, number>;
  /** Limit minus effective spend, per limited dimension (may be negative); null where it is uncertain. */
  remaining: Partial<Record<BudgetDimension, number | null>>;
  /** Limited dimensions with unknown charges and no ceiling: what is left there is not known. */
  uncertain: BudgetDimension[];
  /** Seconds since the run started, and until its deadline / wall-time limit (null without one). */
  elapsed_seconds: number;
  seconds_left: number | null;
  exhausted: boolean;
  /** The dimensions at or over their limit, and the time limits that are up. */
  exhausted_by: (BudgetDimension | TimeLimit)[];
  /** Whether a new effect may begin now: not exhausted, and nothing limited is uncertain. */
  effects_allowed: boolean;
  /** What applies to new effects, in words. */
  policy: string;
}

function zero(): Record<BudgetDimension, number> {
  return { requests: 0, input_tokens: 0, output_tokens: 0, tool_calls: 0, cost: 0 };
}

export interface BudgetClock {
  /** When the run started (ISO 8601). */
  started_at: string;
  now: Date;
}

export function budgetStatus(limits: BudgetLimits, charges: readonly Charge[], clock?: BudgetClock): BudgetStatus {
  const spent = zero();
  const unknownIn = zero();
  const reserved = zero();
  let unknown = 0;
  let inherited = 0;
  let children = 0;
  for (const c of charges) {
    const dims = unknownDimensions(c);
    if (c.child) children += dims.length ? 1 : 0;
    else if (c.unknown !== false) {
      if (c.inherited) inherited++;
      else unknown++;
    }
    for (const d of BUDGET_DIMENSIONS) reserved[d] += c.reserved?.[d] ?? 0;
    for (const d of dims) unknownIn[d]++;
    // what is known of an unknown charge (a request counted, its cost not) still counts
    for (const d of BUDGET_DIMENSIONS) spent[d] += c.amounts[d] ?? 0;
  }
  const effective = zero();
  const remaining: BudgetStatus["remaining"] = {};
  const exhaustedBy: BudgetStatus["exhausted_by"] = [];
  const uncertain: BudgetDimension[] = [];
  for (const d of BUDGET_DIMENSIONS) {
    const ceiling = limits.unknown_ceiling?.[d];
    effective[d] = spent[d] + unknownIn[d] * (ceiling ?? 0) + reserved[d];
    const limit = limits[d];
    if (limit === undefined) continue;
    if (effective[d] >= limit) exhaustedBy.push(d);
    if (unknownIn[d] > 0 && ceiling === undefined) {
      uncertain.push(d);
      remaining[d] = null;
    } else remaining[d] = limit - effective[d];
  }
  const now = clock?.now.getTime() ?? Date.now();
  const started = clock ? Date.parse(clock.started_at) : now;
  const elapsed = Math.max(0, (now - started) / 1000);
  const lefts: number[] = [];
  if (limits.deadline !== undefined) {
    const left = (Date.parse(limits.deadline) - now) / 1000;
    lefts.push(left);
    if (left <= 0) exhaustedBy.push("deadline");
  }
  if (limits.wall_seconds !== undefined) {
    const left = limits.wall_seconds - elapsed;
    lefts.push(left);
    if (left <= 0) exhaustedBy.push("wall_seconds");
  }
  const exhausted = exhaustedBy.length > 0;
  const policy = exhausted
    ? `exhausted (${exhaustedBy.join(", ")}): no new effects; spending is still recorded and artifacts may still be saved`
    : uncertain.length
    ? `uncertain (${uncertain.join(", ")}): charges of unknown amount there${inherited ? ` (${inherited} of them in an earlier run of the chain)` : ""}${children ? ` (${children} child run(s) with some)` : ""} and no unknown_ceiling, so no new effects until budget.reconcile records what they cost (or a continuation sets a ceiling)`
    : "new effects allowed";
  return {
    limits,
    spent,
    unknown_charges: unknown,
    inherited_unknown_charges: inherited,
    uncertain_children: children,
    reserved,
    effective,
    remaining,
    uncertain,
    elapsed_seconds: Math.round(elapsed * 1000) / 1000,
    seconds_left: lefts.length ? Math.round(Math.min(...lefts) * 1000) / 1000 : null,
    exhausted,
    exhausted_by: exhaustedBy,
    effects_allowed: !exhausted && uncertain.length === 0,
    policy,
  };
}

/** Sums of several statuses' known spend and unknown charges (a task's total across its runs). */
export function totalOf(statuses: readonly BudgetStatus[]): { spent: Record<BudgetDimension, number>; unknown_charges: number; runs: number } {
  const spent = zero();
  let unknown = 0;
  for (const s of statuses) {
    unknown += s.unknown_charges;
    for (const d of BUDGET_DIMENSIONS) spent[d] += s.spent[d];
  }
  return { spent, unknown_charges: unknown, runs: statuses.length };
}
