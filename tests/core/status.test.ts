import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { TransitionError } from "../../src/core/errors.ts";
import { assertTransition, isTerminal, TASK_STATUSES, type TaskStatus } from "../../src/core/status.ts";
import { LEGAL_TRANSITIONS } from "../support/statuses.ts";

const LEGAL: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = LEGAL_TRANSITIONS;

describe("task status transitions", () => {
  test("there are exactly seven statuses", () => {
    assert.deepEqual([...TASK_STATUSES].sort(), Object.keys(LEGAL).sort());
  });

  for (const from of TASK_STATUSES) {
    for (const to of TASK_STATUSES) {
      const legal = LEGAL[from].includes(to);
      test(`${from} -> ${to} is ${legal ? "allowed" : "refused with TransitionError"}`, () => {
        if (legal) {
          assertTransition(from, to);
          return;
        }
        assert.throws(
          () => assertTransition(from, to),
          (e: unknown) => {
            assert.ok(e instanceof TransitionError);
            assert.equal(e.kind, "transition_error");
            assert.equal(e.code, -32002);
            assert.equal(e.from, from);
            assert.equal(e.to, to);
            assert.deepEqual([...e.allowed], LEGAL[from]);
            assert.deepEqual(e.data.allowed, LEGAL[from]);
            return true;
          },
        );
      });
    }
  }

  test("completed and failed are terminal; nothing else is", () => {
    for (const s of TASK_STATUSES) assert.equal(isTerminal(s), s === "completed" || s === "failed", s);
  });
});
