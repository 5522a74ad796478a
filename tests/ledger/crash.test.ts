/**
 * The ledger under real crashes: `longrun serve` processes of the compiled binary (its crash-test build) killed with
 * SIGKILL at named points (LONGRUN_CRASH_AT) and at random moments, and an old executor frozen
 * with SIGSTOP while another claims its run. After each, A1-A4 must hold.
 */
import assert from "node:assert/strict";
import { localStateDir, openTestDb } from "../support/state.ts";
import { testRoot } from "../support/sqld.ts";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir, tempDir, until } from "../support/helpers.ts";
import { CRASH_BINARY, Server } from "../support/server.ts";

/** The executable with crash points kept: the shipped one ignores LONGRUN_CRASH_AT. */
const binary = { name: "the compiled binary (crash-test build)", argv: [CRASH_BINARY] };

async function session<T>(root: string, fn: (s: Server) => Promise<T>, env: Record<string, string> = {}): Promise<T> {
  const s = new Server(binary, ["serve", "--root", root], env);
  try {
    return await fn(s);
  } finally {
    if (s.child.exitCode === null && s.child.signalCode === null) await s.close();
  }
}

/** A4 and friends: the database is intact, state.json parses, no temp files survive a start. */
async function checkIntegrity(root: string): Promise<void> {
  await session(root, async (s) => {
    const st = await s.result("task.status");
    assert.ok(st.task, "state.json parses and holds the task");
  });
  const db = await openTestDb(root);
  try {
    assert.equal((await db.execute("PRAGMA integrity_check")).rows[0]![0], "ok");
    // A3: nothing says completed without its outcome recorded
    assert.equal(Number((await db.execute("SELECT COUNT(*) AS n FROM receipts WHERE status = 'completed' AND result_ref IS NULL")).rows[0]!.n), 0);
  } finally {
    await db.close();
  }
  assert.deepEqual(readdirSync(localStateDir(root)).filter((n) => n.endsWith(".tmp")), []);
}

describe("receipts across SIGKILL (compiled binary)", () => {
  let root = "";
  beforeEach(async () => {
    root = await testRoot();
    await session(root, async (s) => {
      await s.result("task.start", { description: "crash test" });
      await s.result("run.start", { owner: "exec-A", tools: ["fetch"] });
    });
  });
  afterEach(() => removeDir(root));

  for (const [point, acknowledgedBefore] of [["receipt.begin.before_commit", false], ["receipt.begin.after_commit", true]] as const) {
    test(`killed at ${point}: the effect is either absent or, once claimed, unknown; never completed`, async () => {
      const killed = await session(root, async (s) => {
        await s.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "receipt.begin", params: { run_id: "R_0001", epoch: 1, tool: "fetch", idempotency_key: "k", args: {} } }) + "\n");
        return s.exited;
      }, { LONGRUN_CRASH_AT: point });
      assert.equal(killed.signal, "SIGKILL");
      await session(root, async (s) => {
        const claimed = await s.result("run.claim", { run_id: "R_0001", owner: "exec-B" });
        const receipts = (await s.result("receipt.list", { run_id: "R_0001" })).receipts;
        if (acknowledgedBefore) {
          assert.deepEqual(receipts.map((r: { status: string }) => r.status), ["unknown"]);
          assert.equal(claimed.newly_unknown.length, 1);
        } else {
          assert.deepEqual(receipts, [], "a begin that never committed left nothing");
        }
      });
      await checkIntegrity(root);
    });
  }

  for (const [point, expected] of [["receipt.settle.before_commit", "unknown"], ["receipt.settle.after_commit", "completed"]] as const) {
    test(`killed at ${point}: after a claim the receipt is ${expected}`, async () => {
      await session(root, (s) => s.result("receipt.begin", { run_id: "R_0001", epoch: 1, tool: "fetch", idempotency_key: "k", args: {} }));
      const killed = await session(root, async (s) => {
        await s.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "receipt.settle", params: { run_id: "R_0001", epoch: 1, receipt_id: "RC_0001", outcome: "completed", result_ref: "C_0009" } }) + "\n");
        return s.exited;
      }, { LONGRUN_CRASH_AT: point });
      assert.equal(killed.signal, "SIGKILL");
      await session(root, async (s) => {
        await s.result("run.claim", { run_id: "R_0001", owner: "exec-B" });
        const [r] = (await s.result("receipt.list", { run_id: "R_0001" })).receipts;
        assert.equal(r.status, expected);
        if (expected === "completed") assert.equal(r.result_ref, "C_0009");
      });
      await checkIntegrity(root);
    });
  }

  test("SIGKILLs during a mixed workload (a seeded number of answers into each round): whatever was acknowledged is there, the rest pending or unknown", async () => {
    const acked = { receipts: new Set<string>(), completed: new Set<string>(), checkpoints: new Set<string>(), artifacts: 0 };
    const unexpected: string[] = [];
    let seed = 0x5eed;
    const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    let n = 0;
    for (let round = 0; round < 6; round++) {
      await session(root, async (s) => {
        if (round > 0) {
          await s.result("run.claim", { run_id: "R_0001", owner: `exec-${round}` });
          await s.result("task.resume");
        }
        const epoch = (await s.result("run.get", { run_id: "R_0001" })).run.epoch;
        const killAfter = s.answers.length + 4 + Math.floor(next() * 24); // answers, not milliseconds
        /** An answer, or null once the server is gone; an error answer while it runs is a finding. */
        const call = async (method: string, params: Record<string, unknown>) => {
          let a: Record<string, unknown>;
          try {
            a = await s.call(method, params);
          } catch (e) {
            if (/exited before answering|write after a stream was destroyed|EPIPE|ECANCELED|ERR_STREAM_DESTROYED/.test(String(e))) return null; // the server is gone (the message differs by runtime)
            throw e;
          }
          if (a.error) unexpected.push(`${method}: ${JSON.stringify(a.error)}`);
          return (a.result as any) ?? null;
        };
        const worker = async () => {
          while (s.child.exitCode === null && s.child.signalCode === null) {
            const k = `k${n++}`;
            const b = await call("receipt.begin", { run_id: "R_0001", epoch, tool: "fetch", idempotency_key: k, args: { k } });
            if (!b) return;
            const id = b.receipt.receipt_id as string;
            acked.receipts.add(id);
            if (await call("receipt.settle", { run_id: "R_0001", epoch, receipt_id: id, outcome: "completed", result_ref: `ref-${k}` })) acked.completed.add(id);
            else return;
            const cp = await call("task.checkpoint", { summary: k, next_step: "go on" });
            if (!cp) return;
            acked.checkpoints.add(cp.memory_id);
            if (!(await call("task.resume", {}))) return;
            const a = await call("artifact.put", { name: "notes", kind: "increment", content: k });
            if (!a) return;
            acked.artifacts = Math.max(acked.artifacts, a.artifact.version);
          }
        };
        const workers = [worker(), worker(), worker()];
        await until(() => s.answers.length >= killAfter, "answers before the kill");
        process.kill(s.child.pid!, "SIGKILL");
        await s.exited;
        await Promise.all(workers);
      });
    }
    assert.deepEqual(unexpected, [], "no error answers while the server ran");
    assert.ok(acked.receipts.size > 0, "the workload got some work acknowledged");
    await session(root, async (s) => {
      await s.result("run.claim", { run_id: "R_0001", owner: "auditor" });
      const receipts = new Map<string, any>((await s.result("receipt.list", { run_id: "R_0001" })).receipts.map((r: any) => [r.receipt_id, r]));
      for (const id of acked.receipts) assert.ok(receipts.has(id), `A1: acknowledged receipt ${id} is present`);
      for (const id of acked.completed) assert.equal(receipts.get(id).status, "completed", `A1: ${id} was acknowledged completed`);
      for (const r of receipts.values()) assert.ok(r.status === "completed" || r.status === "unknown" || r.status === "failed", `A2: ${r.receipt_id} is ${r.status}`);
      for (const id of acked.checkpoints) assert.ok((await s.call("memory.get", { id })).result, `A1: checkpoint ${id} is in memory`);
      if (acked.artifacts) assert.ok((await s.result("artifact.get", { name: "notes", version: acked.artifacts })).artifact);
    });
    await checkIntegrity(root);
  });
});

describe("fencing an old executor (SIGSTOP)", () => {
  test("executor A is frozen; B claims and writes; A wakes and every write it makes is refused with stale_epoch, changing nothing", async () => {
    const root = tempDir();
    const a = new Server(binary, ["serve", "--root", root]);
    const b = new Server(binary, ["serve", "--root", root]);
    try {
      await a.result("task.start", { description: "fencing" });
      const run = (await a.result("run.start", { owner: "exec-A", tools: ["fetch"] })).run;
      await a.result("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "a-1", args: {} });
      process.kill(a.child.pid!, "SIGSTOP");
      const claimed = await b.result("run.claim", { run_id: run.run_id, owner: "exec-B" });
      assert.equal(claimed.run.epoch, 2);
      await b.result("receipt.begin", { run_id: run.run_id, epoch: 2, tool: "fetch", idempotency_key: "b-1", args: {} });
      const before = await b.result("run.get", { run_id: run.run_id });
      // A's writes were sent while it was frozen; they run the moment it wakes.
      const writes = [
        a.call("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "a-2", args: {} }),
        a.call("receipt.settle", { run_id: run.run_id, epoch: 1, receipt_id: "RC_0001", outcome: "completed", result_ref: "late" }),
        a.call("budget.charge", { run_id: run.run_id, epoch: 1, cost: 5 }),
        a.call("run.finish", { run_id: run.run_id, epoch: 1, outcome: "A thinks it is done" }),
      ];
      await new Promise((r) => setTimeout(r, 50));
      process.kill(a.child.pid!, "SIGCONT");
      for (const w of await Promise.all(writes)) assert.equal((w.error as any)?.data?.kind, "stale_epoch", JSON.stringify(w));
      const after = await b.result("run.get", { run_id: run.run_id });
      assert.deepEqual(after.run, { ...before.run, updated_at: after.run.updated_at });
      assert.deepEqual(after.receipt_counts, before.receipt_counts);
      // the run's age moves on by itself; every amount is as it was
      const amounts = (x: any) => ({ ...x.budget, elapsed_seconds: 0, seconds_left: null });
      assert.deepEqual(amounts(after), amounts(before));
      assert.equal(after.unknown_receipts[0].receipt_id, "RC_0001", "A's late result was not applied");
      assert.ok(after.events.some((e: any) => e.kind === "late_result"));
    } finally {
      try {
        process.kill(a.child.pid!, "SIGCONT");
      } catch {
        // already gone
      }
      await a.close();
      await b.close();
      removeDir(root);
    }
  });
});

