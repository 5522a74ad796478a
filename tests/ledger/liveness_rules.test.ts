/**
 * Owner liveness and timed wakes (issue 28), one rule per test, on a real root through the real
 * dispatcher with the root's clock injected (so a TTL passes without waiting). The processes and
 * the timer are tested through the binary in liveness.test.ts.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { snapshot } from "../../src/http/page/snapshot.ts";
import { TestClock } from "../support/clock.ts";
import { writeTestSettings } from "../support/sqld.ts";
import { RpcFixture } from "./rpc.ts";

/** A clock the test moves. */
describe("owner liveness and wake times (dispatcher, injected clock)", () => {
  let f: RpcFixture;
  let clock: TestClock;
  let run: { run_id: string };
  beforeEach(async () => {
    clock = new TestClock();
    f = new RpcFixture({ clock });
    await f.ok("task.start", { description: "Compare the two theme funds" });
    run = (await f.ok("run.start", { owner: "worker-1", owner_ttl_seconds: 60, tools: ["fetch"] })).run;
  });
  afterEach(() => f.close());

  const settings = (value: unknown) => writeTestSettings(f.dir, value);

  test("an owner is live until its TTL passes without a beat; a heartbeat at its epoch restarts it", async () => {
    clock.advance(59);
    assert.equal((await f.ok("run.get", { run_id: run.run_id })).run.stale_owner, false);
    assert.equal((await f.ok("run.heartbeat", { run_id: run.run_id, epoch: 1 })).stop, null);
    clock.advance(59);
    assert.equal((await f.ok("run.get", { run_id: run.run_id })).run.stale_owner, false, "the beat restarted the TTL");
    clock.advance(1);
    const got = (await f.ok("run.get", { run_id: run.run_id })).run;
    assert.equal(got.stale_owner, true);
    assert.equal(got.stale_since, "2026-12-02T09:01:59.000Z");
    assert.equal((await f.ok("run.list")).runs[0].stale_owner, true);
    assert.equal((await f.ok("task.status")).runs[0].stale_owner, true);
    const d = await f.dispatcher();
    const root = d.roots.defaultRoot!;
    const page = await snapshot({ dispatcher: d, caller: { side: "host", via: "test" }, root, roots: [root], now: clock.now() });
    assert.equal(page.runs[0]!.stale_owner, true, "the status page's snapshot shows it");
    assert.equal(page.runs[0]!.stale_since, "2026-12-02T09:01:59.000Z");
  });

  test("a late beat ends the staleness and records it as a stale_owner event, once", async () => {
    clock.advance(61);
    await f.ok("run.heartbeat", { run_id: run.run_id, epoch: 1 });
    await f.ok("run.heartbeat", { run_id: run.run_id, epoch: 1 });
    const got = await f.ok("run.get", { run_id: run.run_id });
    assert.equal(got.run.stale_owner, false);
    const stale = got.events.filter((e: { kind: string }) => e.kind === "stale_owner");
    assert.equal(stale.length, 1);
    assert.equal(stale[0].detail.stale_since, "2026-12-02T09:01:00.000Z");
  });

  test("a run without a TTL never goes stale, and neither does a parked one", async () => {
    clock.advance(3600);
    await f.ok("run.park", { run_id: run.run_id, epoch: 1, waiting_for: "the user's key" });
    assert.equal((await f.ok("run.get", { run_id: run.run_id })).run.stale_owner, false, "a parked run waits; nobody drives it");
    await f.ok("run.cancel", { run_id: run.run_id, reason: "next" }, "host");
    const untracked = (await f.ok("run.start", { owner: "worker-1" })).run;
    clock.advance(365 * 86_400);
    assert.equal((await f.ok("run.get", { run_id: untracked.run_id })).run.stale_owner, false);
    assert.equal((await f.ok("run.get", { run_id: untracked.run_id })).run.owner_ttl_seconds, null);
  });

  test("a live owner's run is claimed by anyone, as before; a stale one by the host, or a standby the settings name", async () => {
    assert.equal((await f.ok("run.claim", { run_id: run.run_id, owner: "anyone" }, "agent")).run.epoch, 2, "the TTL is kept from the run");
    clock.advance(61);
    const refused = await f.fail("run.claim", { run_id: run.run_id, owner: "worker-2" }, "agent");
    assert.equal(refused.data.kind, "unauthorized");
    assert.equal(refused.data.reason, "stale_owner");
    settings("{ not json");
    assert.equal((await f.fail("run.claim", { run_id: run.run_id, owner: "worker-2" }, "agent")).data.reason, "stale_owner", "unreadable settings name no standby");
    settings({ standby_owners: ["worker-2"] });
    assert.equal((await f.fail("run.claim", { run_id: run.run_id, owner: "worker-3" }, "agent")).data.reason, "stale_owner");
    const claimed = await f.ok("run.claim", { run_id: run.run_id, owner: "worker-2", owner_ttl_seconds: 5 }, "agent");
    assert.equal(claimed.run.epoch, 3);
    assert.equal(claimed.run.owner_ttl_seconds, 5);
    assert.equal(claimed.run.stale_owner, false, "the claim is the new owner's first beat");
    clock.advance(6);
    assert.equal((await f.ok("run.claim", { run_id: run.run_id, owner: "host-worker" }, "host")).run.epoch, 4, "the host claims a stale run without a policy");
  });

  test("the heartbeat: an older epoch is told superseded and changes nothing; a newer one is stale_epoch; an ended run is a conflict", async () => {
    await f.ok("run.claim", { run_id: run.run_id, owner: "worker-2" }, "host");
    const before = (await f.ok("run.get", { run_id: run.run_id })).run.owner_beat_at;
    clock.advance(10);
    const old = await f.ok("run.heartbeat", { run_id: run.run_id, epoch: 1 });
    assert.equal(old.stop, "superseded");
    assert.equal(old.run.owner_beat_at, before, "an old owner's beat keeps nobody alive");
    assert.equal((await f.fail("run.heartbeat", { run_id: run.run_id, epoch: 3 })).data.kind, "stale_epoch");
    await f.ok("run.finish", { run_id: run.run_id, epoch: 2, outcome: "done" });
    const ended = await f.fail("run.heartbeat", { run_id: run.run_id, epoch: 2 });
    assert.equal(ended.data.kind, "conflict");
    assert.equal(ended.data.reason, "run_status");
  });

  test("the heartbeat answers deadline once the time budget is up, before budget_exhausted", async () => {
    await f.ok("run.cancel", { run_id: run.run_id, reason: "next" }, "host");
    const timed = (await f.ok("run.start", { owner: "w", tools: ["fetch"], budget: { wall_seconds: 30, tool_calls: 1 } })).run;
    await f.ok("receipt.begin", { run_id: timed.run_id, epoch: 1, tool: "fetch", idempotency_key: "a", args: {} });
    assert.equal((await f.ok("run.heartbeat", { run_id: timed.run_id, epoch: 1 })).stop, "budget_exhausted");
    clock.advance(30);
    assert.equal((await f.ok("run.heartbeat", { run_id: timed.run_id, epoch: 1 })).stop, "deadline");
  });

  test("bad input changes nothing: a TTL out of bounds, a wake time too far ahead or not a time", async () => {
    await f.ok("run.cancel", { run_id: run.run_id, reason: "next" }, "host");
    for (const ttl of [0, 1.5]) assert.equal((await f.fail("run.start", { owner: "w", owner_ttl_seconds: ttl })).data.kind, "invalid_params", `ttl ${ttl}`);
    const long = await f.fail("run.start", { owner: "w", owner_ttl_seconds: 7 * 86_400 + 1 });
    assert.equal(long.data.kind, "limit_exceeded", "one over the documented limit");
    assert.equal(long.data.field, "owner_ttl_seconds");
    const next = (await f.ok("run.start", { owner: "w" })).run;
    const far = await f.fail("run.park", { run_id: next.run_id, epoch: 1, waiting_for: "x", wake_at: new Date(clock.now().getTime() + 367 * 86_400_000).toISOString() });
    assert.equal(far.data.kind, "limit_exceeded");
    assert.equal(far.data.field, "wake_at");
    assert.equal((await f.fail("run.park", { run_id: next.run_id, epoch: 1, waiting_for: "x", wake_at: "tomorrow" })).data.kind, "invalid_params");
    const got = (await f.ok("run.get", { run_id: next.run_id })).run;
    assert.equal(got.status, "running");
    assert.equal(got.wake_at, null);
  });

  test("a wake time is stored in UTC and cleared when the run is woken, cancelled or finished by hand", async () => {
    const parked = (await f.ok("run.park", { run_id: run.run_id, epoch: 1, waiting_for: "tomorrow's filing", wake_at: "2026-12-03T09:00:00+09:00" })).run;
    assert.equal(parked.wake_at, "2026-12-03T00:00:00.000Z");
    const event = (await f.ok("run.get", { run_id: run.run_id })).events.find((e: { kind: string }) => e.kind === "parked");
    assert.equal(event.detail.wake_at, "2026-12-03T00:00:00.000Z");
    assert.equal((await f.ok("run.wake", { run_id: run.run_id, epoch: 1, reason: "filing came early" })).run.wake_at, null);
  });
});
