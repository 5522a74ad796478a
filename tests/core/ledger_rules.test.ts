import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { budgetStatus } from "../../src/core/run_rules/budget.ts";
import { coverage, mergeRanges } from "../../src/core/run_rules/coverage.ts";
import { beginVerdict, settleAllowed } from "../../src/core/run_rules/receipts.ts";

describe("budget rules", () => {
  test("an unknown charge is counted as unknown, never as zero", () => {
    const s = budgetStatus({ cost: 10 }, [{ amounts: { cost: 2 }, unknown: false }, { amounts: {}, unknown: true }]);
    assert.equal(s.spent.cost, 2);
    assert.equal(s.unknown_charges, 1);
    assert.equal(s.exhausted, false);
  });
  test("a limit may count each unknown charge at a ceiling", () => {
    const s = budgetStatus({ cost: 10, unknown_ceiling: { cost: 4 } }, [{ amounts: { cost: 2 }, unknown: false }, { amounts: {}, unknown: true }, { amounts: {}, unknown: true }]);
    assert.equal(s.effective.cost, 10);
    assert.equal(s.exhausted, true);
    assert.deepEqual(s.exhausted_by, ["cost"]);
    assert.equal(s.remaining.cost, 0);
  });
  test("reaching a limit exactly exhausts it; dimensions without limits never do", () => {
    const s = budgetStatus({ tool_calls: 2 }, [{ amounts: { tool_calls: 1, cost: 1e9 }, unknown: false }, { amounts: { tool_calls: 1 }, unknown: false }]);
    assert.deepEqual(s.exhausted_by, ["tool_calls"]);
    assert.equal(budgetStatus({}, [{ amounts: { cost: 1e9 }, unknown: true }]).exhausted, false);
  });
});

describe("context coverage", () => {
  test("ranges merge and a partial read is never complete", () => {
    assert.deepEqual(mergeRanges([[5, 8], [0, 3], [2, 5], [9, 9]]), [[0, 8]]);
    const partial = coverage(10, [[0, 4], [6, 10]]);
    assert.equal(partial.bytes_read, 8);
    assert.equal(partial.complete, false);
    assert.equal(coverage(10, [[0, 4], [4, 10]]).complete, true);
    assert.equal(coverage(0, []).complete, true);
    assert.equal(coverage(10, [[8, 50]]).bytes_read, 2);
  });
});

describe("receipt rules", () => {
  const r = (status: "begun" | "completed" | "failed" | "unknown", digest = "d") => ({ status, args_digest: digest, attempt: 1 });
  test("a new key begins attempt 1; a completed key replays; a failed key begins the next attempt", () => {
    assert.deepEqual(beginVerdict(null, "d"), { kind: "new", attempt: 1 });
    assert.deepEqual(beginVerdict(r("completed"), "d"), { kind: "replay" });
    assert.deepEqual(beginVerdict(r("failed"), "d"), { kind: "new", attempt: 2 });
  });
  test("an unknown or in-flight key, or the same key with other arguments, is refused", () => {
    assert.deepEqual(beginVerdict(r("unknown"), "d"), { kind: "refuse", reason: "unknown" });
    assert.deepEqual(beginVerdict(r("begun"), "d"), { kind: "refuse", reason: "in_flight" });
    assert.deepEqual(beginVerdict(r("completed"), "other"), { kind: "refuse", reason: "args_differ" });
  });
  test("settling: begun freely, unknown only with evidence, settled never again", () => {
    assert.equal(settleAllowed("begun", "completed", false), true);
    assert.equal(settleAllowed("unknown", "completed", false), false);
    assert.equal(settleAllowed("unknown", "failed", true), true);
    assert.equal(settleAllowed("completed", "failed", true), false);
  });
});
