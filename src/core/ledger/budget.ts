/**
 * Budget rules of a run (seed 003, section 8), pure. Spending is the sum of charges; a charge
 * whose amounts are unknown is counted as unknown, never as zero. A limit may count each unknown
 * charge at a ceiling. A run is exhausted when any limited dimension's effective spend has reached
 * its limit; then new effects are refused (artifacts stay readable and may still be saved).
 */

export const BUDGET_DIMENSIONS = ["requests", "input_tokens", "output_tokens", "tool_calls", "cost"] as const;
export type BudgetDimension = (typeof BUDGET_DIMENSIONS)[number];
export type Amounts = Partial<Record<BudgetDimension, number>>;

export interface BudgetLimits extends Amounts {
  /** How much one unknown charge counts toward each limit (absent: unknown charges count as nothing known, but are reported). */
  unknown_ceiling?: Amounts;
}

export interface Charge {
  amounts: Amounts;
  unknown: boolean;
}

export interface BudgetStatus {
  limits: BudgetLimits;
  /** Sums of the known charges. */
  spent: Record<BudgetDimension, number>;
  /** How many charges had unknown amounts. */
  unknown_charges: number;
  /** Known spend plus each unknown charge at its ceiling: what the limits are checked against. */
  effective: Record<BudgetDimension, number>;
  /** Limit minus effective spend, per limited dimension (may be negative). */
  remaining: Amounts;
  exhausted: boolean;
  /** The dimensions at or over their limit. */
  exhausted_by: BudgetDimension[];
}

function zero(): Record<BudgetDimension, number> {
  return { requests: 0, input_tokens: 0, output_tokens: 0, tool_calls: 0, cost: 0 };
}

export function budgetStatus(limits: BudgetLimits, charges: readonly Charge[]): BudgetStatus {
  const spent = zero();
  let unknown = 0;
  for (const c of charges) {
    if (c.unknown) unknown++;
    for (const d of BUDGET_DIMENSIONS) spent[d] += c.amounts[d] ?? 0;
  }
  const effective = zero();
  const remaining: Amounts = {};
  const exhaustedBy: BudgetDimension[] = [];
  for (const d of BUDGET_DIMENSIONS) {
    effective[d] = spent[d] + unknown * (limits.unknown_ceiling?.[d] ?? 0);
    const limit = limits[d];
    if (limit !== undefined) {
      remaining[d] = limit - effective[d];
      if (effective[d] >= limit) exhaustedBy.push(d);
    }
  }
  return { limits, spent, unknown_charges: unknown, effective, remaining, exhausted: exhaustedBy.length > 0, exhausted_by: exhaustedBy };
}
