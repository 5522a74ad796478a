import assert from "node:assert/strict";
import { searchHold } from "../support/helpers.ts";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { TaskContract } from "../../src/core/contract.ts";
import { WriteGateViolation } from "../../src/core/errors.ts";
import { readTask, writeTask } from "../support/state.ts";
import { type Fixture, openFixture, openFixtureWith } from "./setup.ts";
import { skipped } from "../support/skips.ts";
import { LOCAL_ONLY, TEST_STORE } from "../support/sqld.ts";

function gateError(reason: string) {
  return (e: unknown) => {
    assert.ok(e instanceof WriteGateViolation, String(e));
    assert.equal(e.reason, reason);
    return true;
  };
}

describe("I3: a write lease covers one turn", () => {
  let fx: Fixture;
  let c: TaskContract;
  beforeEach(async () => {
    fx = await openFixture();
    c = fx.root.contract;
    await c.startTask("refactor the auth layer");
  });
  afterEach(() => fx.close());

  test("a new task is read-only and refuses a write", async () => {
    await assert.rejects(c.requireWritable("demo write"), (e: unknown) => {
      assert.ok(e instanceof WriteGateViolation);
      assert.equal(e.reason, "read_only");
      assert.equal(e.turn, 1);
      assert.equal(e.lease_turn, null);
      assert.equal(e.data.action, "demo write");
      return true;
    });
  });

  test("a lease granted in this turn allows writes in this turn, and records who granted it", async () => {
    const t = await c.enableWrites({ reason: "plan approved", granted_by: "host" });
    assert.equal(t.access_mode, "writable");
    assert.equal(t.write_lease_turn, 1);
    const ok = await c.requireWritable("edit src/auth.ts");
    assert.equal(ok.turn, 1);
    assert.equal(ok.lease.granted_by, "host");
    assert.equal(ok.lease.reason, "plan approved");
  });

  test("the lease does not survive the next turn", async () => {
    await c.enableWrites({ reason: "ok", granted_by: "host" });
    await c.beginTurn("next user message");
    await assert.rejects(c.requireWritable("keep editing"), gateError("read_only"));
  });

  test("a stale lease is refused even if the mode is writable, and is revoked on disk", async () => {
    await c.enableWrites({ reason: "ok", granted_by: "host" });
    // Another writer advanced the turn without touching the lease fields (an older host, say).
    const raw = await readTask(fx.dir);
    raw.turn_index = 2;
    raw.version += 1;
    await writeTask(fx.dir, raw);
    assert.equal(raw.access_mode, "writable");
    await assert.rejects(c.requireWritable("continue editing"), (e: unknown) => {
      assert.ok(e instanceof WriteGateViolation);
      assert.equal(e.reason, "stale_lease");
      assert.equal(e.lease_turn, 1);
      assert.equal(e.turn, 2);
      return true;
    });
    const after = await readTask(fx.dir);
    assert.equal(after.access_mode, "read_only");
    assert.equal(after.write_lease_turn, null);
  });

  const revokers: [string, (c: TaskContract) => Promise<unknown>][] = [
    ["turn.begin", (c) => c.beginTurn()],
    ["turn.end", (c) => c.endTurn()],
    ["task.checkpoint", (c) => c.checkpoint({ summary: "s", next_step: "n" })],
    ["task.resume", (c) => c.resume()],
    ["task.recover", async (c) => {
      await c.checkpoint({ summary: "s", next_step: "n" });
      await c.resume();
      await c.enableWrites({ reason: "again", granted_by: "host" });
      return c.recoverFromMemory({ force: true, by: "host" });
    }],
    ["a transition out of in_progress", (c) => c.transition("blocked", "waiting on the vendor")],
  ];
  for (const [name, revoke] of revokers) {
    test(`${name} revokes the lease`, async () => {
      await c.enableWrites({ reason: "ok", granted_by: "host" });
      await revoke(c);
      const t = (await c.status()).task!;
      assert.equal(t.access_mode, "read_only");
      assert.equal(t.write_lease_turn, null);
      assert.equal(t.lease, null);
      await assert.rejects(c.requireWritable("write"), { kind: "write_gate_violation" });
    });
  }

  test("resume and recover each begin a new turn", async () => {
    await c.checkpoint({ summary: "s", next_step: "n" });
    assert.equal((await c.resume()).task.turn_index, 2);
    assert.equal((await c.recoverFromMemory({ force: true, by: "host" })).task!.turn_index, 3);
  });

  test("a legacy writable state is revoked on load", { skip: skipped("tests/contract/i3: a legacy writable state", TEST_STORE === "sqld" && LOCAL_ONLY) }, async () => {
    // A v2 state file: no format, no turn fields, a persistent "writable" switch, found on open.
    await fx.close();
    fx = await openFixtureWith((dir) => {
      mkdirSync(join(dir, ".longrun"), { recursive: true });
      writeFileSync(join(dir, ".longrun", "state.json"), JSON.stringify({ task_id: "T_legacy", description: "old task", status: "in_progress", access_mode: "writable" }));
    });
    c = fx.root.contract;
    const t = (await c.status()).task!;
    assert.equal(t.access_mode, "read_only");
    assert.equal(t.write_lease_turn, null);
    assert.equal(t.task_id, "T_legacy");
    await assert.rejects(c.requireWritable("write with the old switch"), gateError("read_only"));
  });

  test("a scoped lease refuses an action outside its scope with out_of_scope", async () => {
    await c.enableWrites({ reason: "only src", granted_by: "host", scope: ["src/**"] });
    await c.requireWritable("edit src/a.ts");
    await assert.rejects(c.requireWritable("edit .env"), gateError("out_of_scope"));
    await c.requireWritable("edit src/b.ts");
  });

  test("a lease with max_uses is used up, across calls", async () => {
    await c.enableWrites({ reason: "one write", granted_by: "host", max_uses: 1 });
    await c.requireWritable("write once");
    await assert.rejects(c.requireWritable("write twice"), gateError("uses_exhausted"));
  });

  test("a lease is granted only to a task in progress", async () => {
    await c.transition("blocked", "waiting");
    await assert.rejects(c.enableWrites({ reason: "ok", granted_by: "host" }), { kind: "conflict" });
    await c.transition("failed", "gave up");
    await assert.rejects(c.enableWrites({ reason: "ok", granted_by: "host" }), { kind: "no_active_task" });
  });

  test("a write request is recorded but grants nothing", async () => {
    const t = await c.requestWrites("may I edit src?", ["src/**"], "agent");
    assert.equal(t.access_mode, "read_only");
    assert.equal(t.lease_log.at(-1)?.event, "requested");
    assert.deepEqual(t.lease_log.at(-1)?.scope, ["src/**"]);
    await assert.rejects(c.requireWritable("edit src/a.ts"), gateError("read_only"));
  });
});

describe("a gate check never waits for a memory search", () => {
  test("requireWritable answers while a search is still in flight in the Worker", async () => {
    const hold = searchHold(false);
    const fx = await openFixture({ testOnlySearchHold: hold.buffer });
    try {
      const c = fx.root.contract;
      await c.startTask("t", ["x"]);
      await c.enableWrites({ reason: "ok", granted_by: "host" });
      hold.arm(); // the next search blocks the Worker until released
      let searchDone = false;
      const search = fx.root.memory.search("anything").then(() => (searchDone = true));
      const gate = await c.requireWritable("edit file");
      assert.equal(gate.turn, 1);
      assert.equal(searchDone, false, "the search cannot have finished: it is held");
      hold.release();
      await search;
      assert.equal(searchDone, true);
    } finally {
      hold.release();
      await fx.close();
    }
  });
});
