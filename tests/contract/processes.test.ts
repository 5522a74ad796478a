/**
 * The contract in real child processes (tests/fixtures/contract_cli.ts on this runtime): I2 across
 * SIGKILL at crash points, and checkpoint data read back by a new process.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { REPO, run, scriptArgv } from "../support/helpers.ts";
import { FailingMemory } from "./doubles.ts";
import { contractWith, countCheckpoints, CP, type Fixture, openFixture } from "./setup.ts";

const CLI = join(REPO, "tests", "fixtures", "contract_cli.ts");

async function cli(dir: string, op: string, params: unknown = {}, env: Record<string, string> = {}) {
  const r = await run(scriptArgv(CLI, [dir, op, JSON.stringify(params)]), { env });
  const line = r.stdout.trim().split("\n").filter(Boolean).at(-1);
  return { ...r, out: line ? JSON.parse(line) : null };
}

describe("I2 across crashes (real child processes killed with SIGKILL)", () => {
  let fx: Fixture;
  beforeEach(async () => (fx = await openFixture()));
  afterEach(() => fx.close());

  test("a crash between replay and cleanup never yields a second memory record", async () => {
    await fx.root.contract.startTask("t");
    await assert.rejects(contractWith(fx.root, new FailingMemory(fx.root.memory)).checkpoint(CP), { kind: "checkpoint_write_error" });

    const crashed = await cli(fx.dir, "resume", {}, { LONGRUN_CRASH_AT: "resume.after_replay" });
    assert.equal(crashed.signal, "SIGKILL");
    assert.equal(await countCheckpoints(fx.root), 1, "the replay reached memory before the crash");
    assert.ok(existsSync(fx.root.paths.pending), "the crash came before cleanup");

    const again = await cli(fx.dir, "resume");
    assert.equal(again.out.result.replayed.created, false);
    assert.equal(await countCheckpoints(fx.root), 1);
    assert.equal(existsSync(fx.root.paths.pending), false);
  });

  // Before the commit nothing of the checkpoint exists; after it, memory and state hold it together.
  for (const [point, committed] of [["memory.before_commit", false], ["checkpoint.before_commit", false], ["checkpoint.after_commit", true], ["checkpoint.before_reply", true]] as const) {
    test(`killed at ${point}: nothing is claimed that is not saved; the checkpoint is whole or absent, never half`, async () => {
      await cli(fx.dir, "start", { description: "crash test" });
      const r = await cli(fx.dir, "checkpoint", CP, { LONGRUN_CRASH_AT: point });
      assert.equal(r.signal, "SIGKILL", r.stderr);
      assert.equal(r.out, null, "no checkpoint text reached the caller");
      // A4: the state reads back; the record and the state change are both there or both absent
      const st = await cli(fx.dir, "status");
      const task = st.out.result.task;
      assert.ok(task, st.stdout + st.stderr);
      assert.equal(await countCheckpoints(fx.root), committed ? 1 : 0);
      assert.equal(task.status, committed ? "paused" : "in_progress");
      assert.equal(task.last_checkpoint !== null, committed);
      assert.equal(existsSync(fx.root.paths.pending), false, "no pending file: a commit either happened or did not");
      const resumed = await cli(fx.dir, "resume");
      assert.equal(resumed.out.result.task.access_mode, "read_only");
      assert.equal(await countCheckpoints(fx.root), committed ? 1 : 0);
      const check = await fx.root.db.execute("PRAGMA integrity_check");
      assert.equal(check.rows[0]![0], "ok");
    });
  }

  test("resume after a checkpoint, in a new process, is read-only in a new turn", async () => {
    await cli(fx.dir, "start", { description: "t" });
    await cli(fx.dir, "enable");
    const cp = await cli(fx.dir, "checkpoint", CP);
    assert.equal(cp.out.result.task.turn_index, 1);
    const r = await cli(fx.dir, "resume");
    assert.equal(r.out.result.task.turn_index, 2);
    assert.equal(r.out.result.task.access_mode, "read_only");
    assert.equal(r.out.result.task.status, "in_progress");
    const gate = await cli(fx.dir, "require", { action: "write after resume" });
    assert.equal(gate.out.error.kind, "write_gate_violation");
    assert.equal(gate.out.error.data.reason, "read_only");
  });
});

describe("checkpoint data: the host's own state, saved with the checkpoint", () => {
  let fx: Fixture;
  beforeEach(async () => (fx = await openFixture()));
  afterEach(() => fx.close());

  test("a new process resumes with the data a killed one saved", async () => {
    await cli(fx.dir, "start", { description: "loop" });
    await cli(fx.dir, "checkpoint", { summary: "s", next_step: "n", kind: "progress", data: { step: 5 } });
    const r = await cli(fx.dir, "resume");
    assert.deepEqual(r.out.result.data, { step: 5 });
  });
});
