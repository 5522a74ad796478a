/**
 * Model-based test of the contract: random sequences of host and agent calls, turn boundaries,
 * restarts (the root closed and opened again: a crash between calls) and faults at named crash
 * points, run against a real root through the dispatcher, compared with the reference model in
 * `./model.ts` after every step (see there for what is compared and which invariants are checked).
 *
 * Deterministic: a fixed seed (override with LONGRUN_MODEL_SEED, and the number of sequences with
 * LONGRUN_MODEL_RUNS). Each sequence gets a fresh root, removed after it: in TMPDIR when it is set
 * (as the suite's runner does), else under /dev/shm where writable, else the temp directory
 * (LONGRUN_MODEL_DIR chooses another place). A failure prints the seed, fast-check's replay path
 * and the shrunk sequence; keep a real bug's shrunk sequence below as a regression test.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";
import fc from "fast-check";
import { type Action, KNOWN_BUGS, KnownBugHit, runOnFreshRoot, sequenceArb } from "./model.ts";

const SEED = Number(process.env.LONGRUN_MODEL_SEED ?? 20261130);
/** Sequences in all, split over PARTS tests (seeds SEED, SEED + 1, …) so none nears a runner's per-test timeout. */
const RUNS = Number(process.env.LONGRUN_MODEL_RUNS ?? 150);
const PARTS = 3;
const MAX_LENGTH = 25;

/** Runs a fixed sequence on a fresh root; the model must agree at every step. */
async function scenario(actions: Action[], options: Parameters<typeof runOnFreshRoot>[1] = {}): Promise<void> {
  await runOnFreshRoot(actions, options);
}

/** Options of a regression test: todo while its bug is listed as open in KNOWN_BUGS. */
function openBug(flag: keyof typeof KNOWN_BUGS, what: string): { todo?: string } {
  return KNOWN_BUGS[flag] ? { todo: `open bug (KNOWN_BUGS.${flag}): ${what}` } : {};
}

describe("the contract against its reference model", () => {
  for (let part = 0; part < PARTS; part++) {
    const seed = SEED + part;
    const runs = Math.ceil(RUNS / PARTS);
    test(`random sequences (fast-check, seed ${seed}, ${runs} sequences of up to ${MAX_LENGTH} steps)`, async () => {
      let sequences = 0;
      let steps = 0;
      let faults = 0;
      let restarts = 0;
      const knownBugHits: string[] = [];
      try {
        await fc.assert(
          fc.asyncProperty(sequenceArb(MAX_LENGTH), async (actions) => {
            try {
              const s = await runOnFreshRoot(actions);
              sequences++;
              steps += s.steps;
              faults += s.faultsFired;
              restarts += s.restarts;
            } catch (e) {
              // a bug already reported and listed in KNOWN_BUGS: not this property's news
              if (e instanceof KnownBugHit) {
                knownBugHits.push(e.message);
                return;
              }
              throw e;
            }
          }),
          { seed, numRuns: runs, includeErrorInReport: true },
        );
      } catch (e) {
        console.error(`contract model: FAILED with seed ${seed} (replay this part alone: LONGRUN_MODEL_SEED=${seed} LONGRUN_MODEL_RUNS=${runs * PARTS})`);
        throw e;
      }
      console.log(`contract model: seed ${seed}: ${sequences} sequences, ${steps} steps, ${faults} faults fired, ${restarts} restarts${knownBugHits.length ? `, known bugs hit: ${knownBugHits.join("; ")}` : ""}`);
      assert.ok(steps > runs, "the sequences did something");
    });
  }

  // Fixed scenarios from the brief, run through the same model (each checks every step too).

  test("an agent's run is a request: it begins nothing, is not claimed, woken or continued until the host grants it; a refusal ends it", () =>
    scenario([
      { t: "start" },
      { t: "runStart", exec: 0, budget: 1, by: "agent" },
      { t: "begin", exec: 0, run: 0, key: 0, args: 0, tool: 0 },
      { t: "claim", exec: 1, run: 0 },
      { t: "runOp", exec: 0, run: 0, op: "wake" },
      { t: "runStart", exec: 1, budget: null, by: "host" },
      { t: "decide", run: 0, grant: true, by: "agent" },
      { t: "decide", run: 0, grant: true, by: "host" },
      { t: "decide", run: 0, grant: false, by: "host" },
      { t: "begin", exec: 0, run: 0, key: 0, args: 0, tool: 0 },
      { t: "begin", exec: 0, run: 0, key: 1, args: 0, tool: 0 },
      { t: "runOp", exec: 0, run: 0, op: "finish" },
      { t: "continue", exec: 0, run: 0, ended: true, tools: 0, budget: null, by: "agent" },
      { t: "begin", exec: 0, run: 0, key: 1, args: 0, tool: 0 },
      { t: "decide", run: 0, grant: false, by: "host" },
      { t: "continue", exec: 0, run: 0, ended: false, tools: 0, budget: null, by: "agent" },
      { t: "continue", exec: 0, run: 1, ended: false, tools: 0, budget: null, by: "host" },
      { t: "begin", exec: 0, run: 0, key: 1, args: 0, tool: 0 },
      { t: "finish", by: "host", cancelRuns: true, task: null },
    ]));

  test("a begun receipt is unknown after a crash and a claim, never completed; the old executor is fenced", () =>
    scenario([
      { t: "start" },
      { t: "runStart", exec: 0, budget: null, by: "host" },
      { t: "begin", exec: 0, run: 0, key: 0, args: 0, tool: 0 },
      { t: "restart" },
      { t: "claim", exec: 1, run: 0 },
      { t: "settle", exec: 0, run: 0, receipt: 0, outcome: "completed", ref: true, evidence: false },
      { t: "settle", exec: 1, run: 0, receipt: 0, outcome: "completed", ref: true, evidence: false },
      { t: "begin", exec: 1, run: 0, key: 0, args: 0, tool: 0 },
      { t: "settle", exec: 1, run: 0, receipt: 0, outcome: "completed", ref: true, evidence: true },
      { t: "begin", exec: 1, run: 0, key: 0, args: 0, tool: 0 },
    ]));

  test("an unknown cost is an open item of every continuation after it and stops its effects until reconciled on the run that recorded it", () =>
    scenario([
      { t: "start" },
      { t: "runStart", exec: 0, budget: 2, by: "host" },
      { t: "charge", exec: 0, run: 0 },
      { t: "runOp", exec: 0, run: 0, op: "finish" },
      { t: "continue", exec: 0, run: 0, ended: true, tools: 0, budget: 1, by: "host" },
      { t: "begin", exec: 0, run: 0, key: 0, args: 0, tool: 0 },
      { t: "reconcile", exec: 0, run: 1, charge: 0 },
      { t: "reconcile", exec: 0, run: 1, charge: 0 },
      { t: "begin", exec: 0, run: 0, key: 0, args: 0, tool: 0, kind: 1 },
    ]));

  test("a crash right after receipt.begin committed: the receipt exists, unacknowledged, and a claim makes it unknown", () =>
    scenario([
      { t: "start" },
      { t: "runStart", exec: 0, budget: 2, by: "host" },
      { t: "fault", at: "receipt.begin.after_commit", crash: true, op: { t: "begin", exec: 0, run: 0, key: 1, args: 0, tool: 0 } },
      { t: "begin", exec: 0, run: 0, key: 1, args: 0, tool: 0 },
      { t: "claim", exec: 1, run: 0 },
      { t: "begin", exec: 1, run: 0, key: 1, args: 0, tool: 0 },
      { t: "fault", at: "receipt.begin.before_commit", crash: true, op: { t: "begin", exec: 1, run: 0, key: 2, args: 0, tool: 0 } },
      { t: "begin", exec: 1, run: 0, key: 2, args: 0, tool: 0 },
      { t: "begin", exec: 1, run: 0, key: 0, args: 0, tool: 0 },
    ]));

  test("approvals and forgetting: asked twice is one record, only the host answers and once; a forgotten note stays gone across a restart; checkpoints are never forgotten", () =>
    scenario([
      { t: "start" },
      { t: "ask", action: 0 },
      { t: "ask", action: 0 },
      { t: "answer", approval: 0, approve: true, by: "agent" },
      { t: "answer", approval: 0, approve: false, by: "host" },
      { t: "answer", approval: 0, approve: true, by: "host" },
      { t: "ask", action: 0 },
      { t: "save" },
      { t: "forget", note: 0, by: "agent", checkpoint: false },
      { t: "forget", note: 0, by: "host", checkpoint: false },
      { t: "restart" },
      { t: "checkpoint", progress: true },
      { t: "forget", note: 0, by: "host", checkpoint: true },
      { t: "finish", by: "host", cancelRuns: false, task: null },
      { t: "ask", action: 1 },
    ]));

  test("the lease: host only, one turn, ended by a pause checkpoint; a request never grants", () =>
    scenario([
      { t: "start" },
      { t: "require", inScope: true },
      { t: "enable", by: "agent", scoped: false, maxUses: null },
      { t: "request" },
      { t: "require", inScope: true },
      { t: "enable", by: "host", scoped: true, maxUses: 2 },
      { t: "require", inScope: false },
      { t: "require", inScope: true },
      { t: "restart" },
      { t: "require", inScope: true },
      { t: "require", inScope: true },
      { t: "enable", by: "host", scoped: false, maxUses: null },
      { t: "checkpoint", progress: true },
      { t: "require", inScope: false },
      { t: "turnBegin", by: "host" },
      { t: "require", inScope: true },
      { t: "enable", by: "host", scoped: false, maxUses: null },
      { t: "checkpoint", progress: false },
      { t: "require", inScope: true },
      { t: "enable", by: "host", scoped: false, maxUses: null },
      { t: "resume" },
      { t: "require", inScope: true },
    ]));

  test("a checkpoint whose commit fails waits in the pending file: the gate reads read-only, resume saves it once", () =>
    scenario([
      { t: "start" },
      { t: "enable", by: "host", scoped: false, maxUses: null },
      { t: "fault", at: "checkpoint.before_commit", crash: false, op: { t: "checkpoint", progress: false } },
      { t: "require", inScope: true },
      { t: "enable", by: "host", scoped: false, maxUses: null },
      { t: "require", inScope: true },
      { t: "restart" },
      { t: "fault", at: "resume.after_replay", crash: true, op: { t: "resume" } },
      { t: "resume" },
      { t: "enable", by: "host", scoped: false, maxUses: null },
      { t: "require", inScope: true },
      { t: "fault", at: "checkpoint.after_commit", crash: true, op: { t: "checkpoint", progress: true } },
      { t: "resume" },
    ]));

  // Regression tests: the shrunk counterexamples of real bugs, stating the intended behaviour.

  test(
    "regression: task.finish with cancel_runs on a task that cannot finish changes nothing (its runs keep running)",
    openBug("finishCancelsRunsThenRefuses", "the runs are cancelled, then the finish is refused"),
    () =>
      // shrunk by fast-check (seed 3): the run is cancelled although the finish is refused
      scenario(
        [
          { t: "start" },
          { t: "transition", to: "paused", by: "host", task: null },
          { t: "runStart", exec: 0, budget: null, by: "host" },
          { t: "finish", by: "host", cancelRuns: true, task: null },
        ],
        { knownBugs: { finishCancelsRunsThenRefuses: false } },
      ),
  );

  test(
    "regression: task.finish with cancel_runs whose outcome record cannot be saved changes nothing (its runs keep running)",
    openBug("finishCancelsRunsBeforeItsOutcomeIsSaved", "the runs are cancelled, then saving the outcome fails"),
    () =>
      // shrunk by fast-check (seed 20261131)
      scenario(
        [
          { t: "start" },
          { t: "runStart", exec: 0, budget: null, by: "host" },
          { t: "fault", at: "memory.before_commit", crash: false, op: { t: "finish", by: "host", cancelRuns: true, task: null } },
          { t: "settle", exec: 0, run: 0, receipt: 0, outcome: "completed", ref: true, evidence: false },
        ],
        { knownBugs: { finishCancelsRunsBeforeItsOutcomeIsSaved: false } },
      ),
  );

  test(
    "regression: a task.start whose new id is already taken never overwrites the task that has it",
    openBug("taskIdCollisionOverwrites", "two starts in one second share an id with probability 1/65,536 and the second overwrites the first"),
    () => {
      // the collision forced by an id source double (the real one: the same second and 2 random
      // bytes): the second start draws the first task's id once, then a fresh one
      const drawn = ["T_20260101_000000_0000", "T_20260101_000000_0000"];
      const fixed = { taskId: () => drawn.shift() ?? `T_20260101_000000_${randomUUID().slice(0, 4)}`, checkpointId: () => randomUUID() };
      return scenario(
        [
          { t: "start" },
          { t: "runStart", exec: 0, budget: null, by: "host" },
          { t: "start" },
        ],
        { ids: fixed, knownBugs: { taskIdCollisionOverwrites: false } },
      );
    },
  );
});
