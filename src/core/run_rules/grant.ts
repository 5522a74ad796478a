/**
 * Run grants (seed 003: "more to investigate is not a new authorization"), pure. The agent side
 * asks for a run or a continuation: its tools, sources, the providers data may be sent to
 * (`send`), its scope and budget. The host grants what was asked or less, or refuses. These rules
 * decide what "less" means, so a grant can never be wider than its request:
 *
 * - a list (tools, sources, send, scope) is granted as the request's or a subset of it (a request
 *   of `"*"` allows any list);
 * - a budget keeps every limit the request set, at the same amount or lower; a limit the request
 *   left open may be added; a deadline only earlier, wall time only shorter;
 * - `unknown_ceiling` lets effects go on while charges are unknown, so a grant may raise a ceiling
 *   the request set (each unknown counts more) or drop it, never add one the request did not set.
 *
 * A standing allowance (the host's, in the root's settings) is a grant made in advance: a request
 * fits it when its lists are within the allowance's; the budget granted is the request's,
 * narrowed by the allowance's limits.
 */
import { BUDGET_DIMENSIONS, type BudgetLimits } from "./budget.ts";

export const GRANT_LISTS = ["tools", "sources", "send", "scope"] as const;
export type GrantList = (typeof GRANT_LISTS)[number];
export type Permissions = Record<GrantList, string[]>;

/** Where a grant is wider than what bounds it: the field and the values (or the limit) that are wider. */
export interface Wider {
  field: string;
  wider: unknown[];
  allowed: unknown;
}

/** The items of `want` not covered by `bound` (none when `bound` holds `"*"`). */
export function widerItems(bound: readonly string[], want: readonly string[]): string[] {
  return bound.includes("*") ? [] : want.filter((x) => !bound.includes(x));
}

/** Every way `granted` is wider than `bound`, list by list; empty when it is within. */
export function widerPermissions(bound: Permissions, granted: Permissions): Wider[] {
  const out: Wider[] = [];
  for (const k of GRANT_LISTS) {
    const wider = widerItems(bound[k] ?? [], granted[k] ?? []);
    if (wider.length) out.push({ field: k, wider, allowed: bound[k] ?? [] });
  }
  return out;
}

const instant = (s: string) => Date.parse(s);

/**
 * Every way budget `granted` is wider than `bound`, empty when it is within.
 * @example widerBudget({ cost: 5 }, { cost: 10 }) // [{ field: "budget.cost", wider: [10], allowed: 5 }]
 */
export function widerBudget(bound: BudgetLimits, granted: BudgetLimits): Wider[] {
  const out: Wider[] = [];
  for (const d of BUDGET_DIMENSIONS) {
    const b = bound[d];
    if (b === undefined) continue;
    const g = granted[d];
    if (g === undefined || g > b) out.push({ field: `budget.${d}`, wider: [g ?? "no limit"], allowed: b });
  }
  if (bound.wall_seconds !== undefined && (granted.wall_seconds === undefined || granted.wall_seconds > bound.wall_seconds)) {
    out.push({ field: "budget.wall_seconds", wider: [granted.wall_seconds ?? "no limit"], allowed: bound.wall_seconds });
  }
  if (bound.deadline !== undefined && (granted.deadline === undefined || instant(granted.deadline) > instant(bound.deadline))) {
    out.push({ field: "budget.deadline", wider: [granted.deadline ?? "no deadline"], allowed: bound.deadline });
  }
  for (const d of BUDGET_DIMENSIONS) {
    const g = granted.unknown_ceiling?.[d];
    if (g === undefined) continue;
    const b = bound.unknown_ceiling?.[d];
    if (b === undefined || g < b) out.push({ field: `budget.unknown_ceiling.${d}`, wider: [g], allowed: b ?? "no ceiling" });
  }
  return out;
}

/** `budget` narrowed by `cap`: every limit of `cap` applies, at the lower of the two amounts. */
export function capBudget(budget: BudgetLimits, cap: BudgetLimits): BudgetLimits {
  const out: BudgetLimits = { ...budget };
  for (const d of BUDGET_DIMENSIONS) {
    const c = cap[d];
    if (c !== undefined) out[d] = budget[d] === undefined ? c : Math.min(budget[d]!, c);
  }
  if (cap.wall_seconds !== undefined) out.wall_seconds = budget.wall_seconds === undefined ? cap.wall_seconds : Math.min(budget.wall_seconds, cap.wall_seconds);
  if (cap.deadline !== undefined) out.deadline = budget.deadline === undefined || instant(cap.deadline) < instant(budget.deadline) ? cap.deadline : budget.deadline;
  if (budget.unknown_ceiling) {
    // a ceiling the allowance does not set is not the allowance's to give
    const ceil: NonNullable<BudgetLimits["unknown_ceiling"]> = {};
    for (const d of BUDGET_DIMENSIONS) {
      const b = budget.unknown_ceiling[d];
      const c = cap.unknown_ceiling?.[d];
      if (b !== undefined && c !== undefined) ceil[d] = Math.max(b, c);
    }
    if (Object.keys(ceil).length) out.unknown_ceiling = ceil;
    else delete out.unknown_ceiling;
  }
  return out;
}

/** A standing allowance: research runs the host grants in advance (root settings, `run_allowances`). */
export interface Allowance extends Partial<Permissions> {
  name: string;
  budget?: BudgetLimits;
}

/**
 * The budget an allowance grants a request, or null when the request does not fit it (a list
 * outside the allowance's). An allowance without a list allows none of it (only an empty request).
 */
export function allowanceGrant(a: Allowance, want: Permissions, budget: BudgetLimits): BudgetLimits | null {
  const bound: Permissions = { tools: a.tools ?? [], sources: a.sources ?? [], send: a.send ?? [], scope: a.scope ?? ["*"] };
  if (widerPermissions(bound, want).length) return null;
  return capBudget(budget, a.budget ?? {});
}

/**
 * A user task's own bounds on its runs (host-set at task.start): lists a run may draw from and a
 * budget no run may exceed. A list left out bounds nothing.
 */
export interface TaskBounds extends Partial<Permissions> {
  budget?: BudgetLimits;
}

/** Every way a run's authorization and budget go beyond the task's bounds; empty when within. */
export function widerThanBounds(bounds: TaskBounds, auth: Permissions, budget: BudgetLimits): Wider[] {
  const out: Wider[] = [];
  for (const k of GRANT_LISTS) {
    const b = bounds[k];
    if (b === undefined) continue;
    const wider = widerItems(b, auth[k] ?? []);
    if (wider.length) out.push({ field: k, wider, allowed: b });
  }
  return [...out, ...widerBudget(bounds.budget ?? {}, budget)];
}

/** In words, for a refusal: `tools: "shell" is not in fetch, calc`. */
export function describeWider(w: readonly Wider[]): string {
  return w
    .map((x) => `${x.field}: ${x.wider.map((v) => JSON.stringify(v)).join(", ")} is wider than ${Array.isArray(x.allowed) ? x.allowed.join(", ") || "nothing" : JSON.stringify(x.allowed)}`)
    .join("; ");
}
