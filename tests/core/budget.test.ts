/**
 * Budget arithmetic of a run: spending, unknown charges (uncertain or counted at a ceiling),
 * limits, time limits, and the totals across runs. Complements ledger_rules.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BUDGET_DIMENSIONS, type BudgetStatus, budgetStatus, type Charge, totalOf, unknownDimensions } from "../../src/core/run_rules/budget.ts";

const T0 = "2026-11-29T10:00:00.000Z";
const at = (ms: number) => new Date(Date.parse(T0) + ms);
const clock = (ms: number) => ({ started_at: T0, now: at(ms) });
const known = (amounts: Charge["amounts"]): Charge => ({ amounts, unknown: false });

describe("which dimensions a charge leaves unknown", () => {
  test("a known charge leaves none", () => {
    assert.deepEqual(unknownDimensions(known({ requests: 1 })), []);
  });
  test("unknown: true means every dimension the charge gives no amount for", () => {
    assert.deepEqual(unknownDimensions({ amounts: { requests: 1 }, unknown: true }), ["input_tokens", "output_tokens", "tool_calls", "cost"]);
    assert.deepEqual(unknownDimensions({ amounts: {}, unknown: true }), [...BUDGET_DIMENSIONS]);
  });
  test("a list names exactly the unknown dimensions (a copy of it)", () => {
    const list = ["cost"] as const;
    const dims = unknownDimensions({ amounts: { requests: 1, tool_calls: 0 }, unknown: list });
    assert.deepEqual(dims, ["cost"]);
    assert.notEqual(dims, list);
  });
});

describe("budget status", () => {
  test("spending sums every charge, known parts of unknown charges included; unknown charges are counted", () => {
    const s = budgetStatus({}, [
      known({ requests: 1, input_tokens: 100, output_tokens: 20, cost: 0.5 }),
      known({ requests: 1, tool_calls: 2 }),
      { amounts: { requests: 1 }, unknown: true },
      { amounts: { requests: 1, input_tokens: 10 }, unknown: ["cost"] },
    ]);
    assert.deepEqual(s.spent, { requests: 4, input_tokens: 110, output_tokens: 20, tool_calls: 2, cost: 0.5 });
    assert.equal(s.unknown_charges, 2);
    assert.deepEqual(s.effective, s.spent);
  });

  test("without limits nothing is exhausted or uncertain, nothing remains to report, effects are allowed", () => {
    const s = budgetStatus({}, [{ amounts: {}, unknown: true }, known({ cost: 1e9 })], clock(5_000));
    assert.deepEqual(s.remaining, {});
    assert.deepEqual(s.uncertain, []);
    assert.deepEqual(s.exhausted_by, []);
    assert.equal(s.exhausted, false);
    assert.equal(s.effects_allowed, true);
    assert.equal(s.seconds_left, null);
    assert.equal(s.policy, "new effects allowed");
  });

  test("remaining is limit minus effective spend, per limited dimension only, negative past the limit", () => {
    const s = budgetStatus({ requests: 10, cost: 1 }, [known({ requests: 3, cost: 1.5, input_tokens: 7 })]);
    assert.deepEqual(s.remaining, { requests: 7, cost: -0.5 });
    assert.deepEqual(s.exhausted_by, ["cost"]);
  });

  test("one below the limit is not exhausted; at the limit it is", () => {
    assert.equal(budgetStatus({ requests: 3 }, [known({ requests: 2 })]).exhausted, false);
    assert.equal(budgetStatus({ requests: 3 }, [known({ requests: 3 })]).exhausted, true);
  });

  test("a limited dimension with an unknown charge and no ceiling is uncertain: remaining null, no new effects", () => {
    const s = budgetStatus({ cost: 10, requests: 5 }, [known({ cost: 1, requests: 1 }), { amounts: { requests: 1 }, unknown: true }]);
    assert.deepEqual(s.uncertain, ["cost"]);
    assert.deepEqual(s.remaining, { requests: 3, cost: null });
    assert.equal(s.exhausted, false);
    assert.equal(s.effects_allowed, false);
    assert.match(s.policy, /^uncertain \(cost\): .*no new effects until budget\.reconcile/);
  });

  test("the policy names every uncertain dimension", () => {
    const s = budgetStatus({ input_tokens: 1000, cost: 10 }, [{ amounts: { requests: 1 }, unknown: true }]);
    assert.deepEqual(s.uncertain, ["input_tokens", "cost"]);
    assert.match(s.policy, /^uncertain \(input_tokens, cost\): /);
  });

  test("an unknown charge only makes uncertain the dimensions it leaves unknown", () => {
    const s = budgetStatus({ cost: 10, requests: 5 }, [{ amounts: { requests: 1 }, unknown: ["cost"] }]);
    assert.deepEqual(s.uncertain, ["cost"]);
    assert.equal(s.remaining.requests, 4);
    const onlyKnown = budgetStatus({ requests: 5 }, [{ amounts: { requests: 1 }, unknown: ["cost"] }]);
    assert.deepEqual(onlyKnown.uncertain, []);
    assert.equal(onlyKnown.effects_allowed, true);
  });

  test("a ceiling counts each unknown charge at it, so the dimension is certain again", () => {
    const s = budgetStatus({ cost: 10, unknown_ceiling: { cost: 3 } }, [known({ cost: 1 }), { amounts: {}, unknown: true }, { amounts: {}, unknown: ["cost"] }]);
    assert.equal(s.spent.cost, 1);
    assert.equal(s.effective.cost, 7);
    assert.equal(s.remaining.cost, 3);
    assert.deepEqual(s.uncertain, []);
    assert.equal(s.effects_allowed, true);
  });

  test("both uncertain and exhausted: exhaustion is what the policy reports", () => {
    const s = budgetStatus({ cost: 10, requests: 1 }, [{ amounts: { requests: 1 }, unknown: true }]);
    assert.deepEqual(s.uncertain, ["cost"]);
    assert.deepEqual(s.exhausted_by, ["requests"]);
    assert.equal(s.effects_allowed, false);
    assert.match(s.policy, /^exhausted \(requests\): no new effects; spending is still recorded/);
  });

  test("elapsed time comes from the clock, in seconds to the millisecond, never negative", () => {
    assert.equal(budgetStatus({}, [], clock(90_500)).elapsed_seconds, 90.5);
    assert.equal(budgetStatus({}, [], clock(1_234)).elapsed_seconds, 1.234);
    assert.equal(budgetStatus({}, [], clock(-5_000)).elapsed_seconds, 0);
    assert.equal(budgetStatus({}, []).elapsed_seconds, 0);
  });

  test("a deadline: seconds left until it, exhausted from the instant it is reached", () => {
    const deadline = at(60_000).toISOString();
    const before = budgetStatus({ deadline }, [], clock(58_766));
    assert.equal(before.seconds_left, 1.234);
    assert.equal(before.exhausted, false);
    assert.equal(before.effects_allowed, true);
    const atIt = budgetStatus({ deadline }, [], clock(60_000));
    assert.equal(atIt.seconds_left, 0);
    assert.deepEqual(atIt.exhausted_by, ["deadline"]);
    assert.equal(atIt.effects_allowed, false);
    assert.equal(budgetStatus({ deadline }, [], clock(59_999)).exhausted, false);
    assert.equal(budgetStatus({ deadline }, [], clock(61_500)).seconds_left, -1.5);
  });

  test("wall_seconds: seconds left of the run's age limit, exhausted when the run is that old", () => {
    const limits = { wall_seconds: 30 };
    assert.equal(budgetStatus(limits, [], clock(10_250)).seconds_left, 19.75);
    assert.equal(budgetStatus(limits, [], clock(29_999)).exhausted, false);
    assert.deepEqual(budgetStatus(limits, [], clock(30_000)).exhausted_by, ["wall_seconds"]);
  });

  test("with both time limits, seconds left is the nearer one; every limit that is up is named", () => {
    const deadline = at(100_000).toISOString();
    assert.equal(budgetStatus({ deadline, wall_seconds: 30 }, [], clock(10_000)).seconds_left, 20);
    assert.equal(budgetStatus({ deadline, wall_seconds: 300 }, [], clock(10_000)).seconds_left, 90);
    const up = budgetStatus({ deadline, wall_seconds: 30, cost: 1 }, [known({ cost: 1 })], clock(200_000));
    assert.deepEqual(up.exhausted_by, ["cost", "deadline", "wall_seconds"]);
    assert.match(up.policy, /^exhausted \(cost, deadline, wall_seconds\): no new effects/);
  });
});

describe("totals across runs", () => {
  test("known spend and unknown charges add up over every run", () => {
    const runs: BudgetStatus[] = [
      budgetStatus({}, [known({ requests: 2, cost: 1.5 }), { amounts: {}, unknown: true }]),
      budgetStatus({ cost: 1 }, [known({ requests: 1, tool_calls: 4, cost: 0.25 }), { amounts: {}, unknown: ["cost"] }, { amounts: {}, unknown: true }]),
    ];
    assert.deepEqual(totalOf(runs), { spent: { requests: 3, input_tokens: 0, output_tokens: 0, tool_calls: 4, cost: 1.75 }, unknown_charges: 3, runs: 2 });
    assert.deepEqual(totalOf([]), { spent: { requests: 0, input_tokens: 0, output_tokens: 0, tool_calls: 0, cost: 0 }, unknown_charges: 0, runs: 0 });
  });
});
