/**
 * Owner liveness and timed wakes (issue 28), through the compiled binary: a worker (a real child
 * process) SIGKILLed mid-run goes stale_owner after its time to live, only the host or a standby
 * the root's settings name claims it, and the old epoch is refused; the heartbeat tells the owner
 * it was cancelled, exhausted its budget, ran out of time or was superseded; a run parked with
 * wake_at is woken by a running process at its time, and a wake that fell due while no process
 * ran happens once at the next start, with two processes starting at once. Real time (no clock can
 * be injected into the binary): TTLs and wake times of about a second, polled with a deadline.
 * Runs on a local root and, under LONGRUN_TEST_STORE=sqld, on a libSQL server.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir, rootArgv, until } from "../support/helpers.ts";
import { testRoot, writeTestSettings } from "../support/sqld.ts";
import { Server, TARGETS } from "../support/server.ts";
import { type HttpChild, startHttpChild } from "../http/start.ts";

const BINARY = TARGETS[0]!;

const writeSettings = writeTestSettings;

const kinds = (events: { kind: string }[]) => events.map((e) => e.kind);

describe("owner liveness through the binary (HTTP: the host and the agent side)", () => {
  let root = "";
  let srv: HttpChild;
  let tokens: { host_token: string; agent_token: string };
  beforeEach(async () => {
    root = await testRoot();
    srv = await startHttpChild(BINARY.argv, rootArgv(["--root", root, "--port", "0"]));
    tokens = JSON.parse(readFileSync(srv.info.token_file, "utf8"));
  });
  afterEach(async () => {
    await srv.stop();
    removeDir(root);
  });

  const call = async (side: "host" | "agent", method: string, params: Record<string, unknown> = {}) => {
    const token = side === "host" ? tokens.host_token : tokens.agent_token;
    const r = await fetch(`${srv.info.url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
    return (await r.json()) as { result?: any; error?: { code: number; message: string; data: Record<string, any> } };
  };
  const ok = async (side: "host" | "agent", method: string, params: Record<string, unknown> = {}) => {
    const a = await call(side, method, params);
    if (a.error) throw new Error(`${method} (${side}) failed: ${JSON.stringify(a.error)}`);
    return a.result;
  };
  const refused = async (side: "host" | "agent", method: string, params: Record<string, unknown> = {}) => {
    const a = await call(side, method, params);
    if (!a.error) throw new Error(`${method} (${side}) unexpectedly succeeded: ${JSON.stringify(a.result)}`);
    return a.error;
  };

  test("a worker SIGKILLed mid-run shows stale_owner after its TTL (an event says so); only the host or a named standby claims it, and the old epoch is refused", async () => {
    await ok("host", "task.start", { description: "Compare the two theme funds" });
    const run = (await ok("host", "run.start", { owner: "worker-1", owner_ttl_seconds: 1, tools: ["fetch"] })).run;
    assert.equal(run.owner_ttl_seconds, 1);
    assert.equal(run.stale_owner, false);

    // the worker: a process of its own on the same root, beating and beginning an effect, then killed
    const worker = new Server(BINARY, ["serve", "--root", root]);
    const beat = await worker.result("run.heartbeat", { run_id: run.run_id, epoch: 1 });
    assert.equal(beat.stop, null, "a live owner is told to go on");
    await worker.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "fund-b", args: { fund: "B" } });
    process.kill(worker.child.pid!, "SIGKILL");
    await worker.exited;

    const stale = await until(async () => {
      const got = await ok("agent", "run.get", { run_id: run.run_id });
      return got.run.stale_owner ? got : null;
    }, "the run to show stale_owner", 20_000);
    assert.equal(stale.run.status, "running", "stale_owner is the owner's state, not a status");
    assert.ok(Date.parse(stale.run.stale_since) >= Date.parse(beat.run.owner_beat_at) + 1000, "stale from its last beat plus the TTL");
    const listed = (await ok("agent", "run.list")).runs.find((r: { run_id: string }) => r.run_id === run.run_id);
    assert.equal(listed.stale_owner, true, "run.list computes it too");
    const status = await ok("host", "task.status");
    assert.equal(status.runs[0].stale_owner, true, "task.status's runs too");
    const noted = await until(async () => {
      const events = (await ok("agent", "run.get", { run_id: run.run_id })).events;
      return events.filter((e: { kind: string }) => e.kind === "stale_owner").length ? events : null;
    }, "the running server to record the stale_owner event", 20_000);
    assert.equal(noted.filter((e: { kind: string }) => e.kind === "stale_owner").length, 1, "recorded once for the missed beat");

    // without the policy, a stale run is the host's to claim: the agent side is refused, whatever name it gives
    const noPolicy = await refused("agent", "run.claim", { run_id: run.run_id, owner: "worker-2" });
    assert.equal(noPolicy.data.kind, "unauthorized");
    assert.equal(noPolicy.data.reason, "stale_owner");
    assert.match(noPolicy.message, /standby_owners/);
    writeSettings(root, { standby_owners: ["worker-2"] });
    assert.equal((await refused("agent", "run.claim", { run_id: run.run_id, owner: "worker-3" })).data.reason, "stale_owner", "a name the settings do not give is refused");
    const claimed = await ok("agent", "run.claim", { run_id: run.run_id, owner: "worker-2", owner_ttl_seconds: 600 });
    assert.equal(claimed.run.epoch, 2);
    assert.equal(claimed.run.owner, "worker-2");
    assert.equal(claimed.run.stale_owner, false);
    assert.equal(claimed.newly_unknown.length, 1, "the effect the killed worker began is unknown");
    const claimEvent = (await ok("agent", "run.get", { run_id: run.run_id })).events.find((e: { kind: string }) => e.kind === "claimed");
    assert.equal(claimEvent.detail.stale_owner, true);
    assert.equal(claimEvent.detail.previous_owner, "worker-1");

    const old = await refused("agent", "receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "fund-c", args: { fund: "C" } });
    assert.equal(old.data.kind, "stale_epoch", "the old owner is fenced out");
    assert.equal((await ok("agent", "run.heartbeat", { run_id: run.run_id, epoch: 1 })).stop, "superseded", "and its heartbeat tells it why");
    // a live owner's run is claimed as before (no liveness rule stands in the way)
    assert.equal((await ok("agent", "run.claim", { run_id: run.run_id, owner: "worker-9" })).run.epoch, 3);
  });
});

describe("the heartbeat's answer and timed wakes through the binary (stdio)", () => {
  let root = "";
  let s: Server;
  beforeEach(async () => {
    root = await testRoot();
    s = new Server(BINARY, ["serve", "--root", root]);
  });
  afterEach(async () => {
    if (s.child.exitCode === null && s.child.signalCode === null) await s.close();
    removeDir(root);
  });

  test("the heartbeat answers budget_exhausted once a limit is reached, cancelled after the host cancels, and deadline when the time budget runs out (an event records it once)", async () => {
    await s.result("task.start", { description: "Compare the two theme funds" });
    const run = (await s.result("run.start", { owner: "worker-1", tools: ["fetch"], budget: { tool_calls: 1 } })).run;
    assert.equal((await s.result("run.heartbeat", { run_id: run.run_id, epoch: 1 })).stop, null);
    await s.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "k1", args: {} });
    assert.equal((await s.result("run.heartbeat", { run_id: run.run_id, epoch: 1 })).stop, "budget_exhausted");
    await s.result("run.cancel", { run_id: run.run_id, reason: "the user stopped it" });
    const cancelled = await s.result("run.heartbeat", { run_id: run.run_id, epoch: 1 });
    assert.equal(cancelled.stop, "cancelled");
    assert.equal(cancelled.run.status, "cancelled");

    const timed = (await s.result("run.start", { owner: "worker-1", tools: ["fetch"], budget: { wall_seconds: 1 } })).run;
    const up = await until(async () => {
      const got = await s.result("run.get", { run_id: timed.run_id });
      return kinds(got.events).includes("deadline") ? got : null;
    }, "the server to record that the run's time budget ran out", 20_000);
    assert.deepEqual(up.events.find((e: { kind: string }) => e.kind === "deadline").detail.exhausted_by, ["wall_seconds"]);
    assert.equal(up.run.status, "running", "the budget rules stop new effects; ending or continuing is the owner's and the user's");
    assert.equal((await s.error("receipt.begin", { run_id: timed.run_id, epoch: 1, tool: "fetch", idempotency_key: "late", args: {} })).data.kind, "budget_exhausted");
    assert.equal((await s.result("run.heartbeat", { run_id: timed.run_id, epoch: 1 })).stop, "deadline");
  });

  test("a run parked with wake_at is woken by the running server at its time, once, with the event saying why", async () => {
    await s.result("task.start", { description: "Check the filing again tomorrow" });
    const run = (await s.result("run.start", { owner: "worker-1", tools: ["fetch"] })).run;
    const wakeAt = new Date(Date.now() + 1500).toISOString();
    const parked = (await s.result("run.park", { run_id: run.run_id, epoch: 1, waiting_for: "the filing's next version", wake_at: wakeAt })).run;
    assert.equal(parked.status, "parked");
    assert.equal(parked.wake_at, wakeAt);
    const woken = await until(async () => {
      const got = await s.result("run.get", { run_id: run.run_id });
      return got.run.status === "running" ? got : null;
    }, "the server to wake the run", 20_000);
    assert.equal(woken.run.wake_at, null);
    assert.equal(woken.run.epoch, 1, "a wake keeps the run's identity and epoch");
    const wakes = woken.events.filter((e: { kind: string }) => e.kind === "woken");
    assert.equal(wakes.length, 1);
    assert.equal(wakes[0].detail.reason, "wake_at");
    assert.equal(wakes[0].detail.wake_at, wakeAt);
    assert.ok(Date.parse(wakes[0].at) >= Date.parse(wakeAt), "never before its time");
  });

  test("a wake that fell due while no process ran happens at the next start, exactly once, when two processes start at once", async () => {
    await s.result("task.start", { description: "Check the filing again tomorrow" });
    const run = (await s.result("run.start", { owner: "worker-1", tools: ["fetch"] })).run;
    const wakeAt = new Date(Date.now() + 1500).toISOString();
    await s.result("run.park", { run_id: run.run_id, epoch: 1, waiting_for: "later", wake_at: wakeAt });
    process.kill(s.child.pid!, "SIGKILL");
    await s.exited;
    await until(() => Date.now() > Date.parse(wakeAt) + 100, "the wake time to pass while no process runs", 20_000);

    const a = new Server(BINARY, ["serve", "--root", root]);
    const b = new Server(BINARY, ["serve", "--root", root]);
    try {
      await Promise.all([a.result("run.get", { run_id: run.run_id }), b.result("run.get", { run_id: run.run_id })]);
      await until(async () => (await a.result("run.get", { run_id: run.run_id })).run.status === "running", "one of them to wake the run", 20_000);
    } finally {
      await Promise.all([a.close(), b.close()]); // a clean stop waits for each one's pass in flight
    }
    s = new Server(BINARY, ["serve", "--root", root]);
    const got = await s.result("run.get", { run_id: run.run_id });
    assert.equal(got.run.status, "running");
    assert.equal(got.events.filter((e: { kind: string }) => e.kind === "woken").length, 1, "woken once, not by each process");
  });
});
