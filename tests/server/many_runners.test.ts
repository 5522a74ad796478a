/**
 * Many runners, one sqld project: separate processes of the binary with separate state
 * directories and no shared local files, random SIGKILLs of runners, and the server itself killed
 * and restarted mid-run. Whatever was acknowledged is there afterwards; grants and revocations made
 * by one runner hold in every other; a stale executor is fenced; no update is lost.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client/web";
import { after, before, describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary, Server } from "../support/server.ts";
import { type Sqld, sqldMissing, startSqld } from "../support/sqld.ts";

const skip = sqldMissing();
const RUNNERS = 4;
const ROUNDS = Number(process.env.LONGRUN_MANY_RUNNERS_ROUNDS ?? 60);

/** A small seeded generator (mulberry32): a failing run can be repeated with its seed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Answer = { result?: any; error?: { code: number; message: string; data: Record<string, any> } };

describe("many runners share one sqld project (real processes, random kills)", { skip }, () => {
  let db: Sqld;
  const dirs: string[] = [];
  const runners: Server[] = [];
  const seed = Number(process.env.LONGRUN_SEED ?? Date.now() % 100000);

  const spawnRunner = (i: number) => new Server({ name: "binary", argv: [BINARY] }, ["serve", "--store", db.url, "--project", "shared", "--state-dir", dirs[i]!]);
  /** One call; null when the runner (or the server under it) went away before answering. */
  const call = async (i: number, method: string, params: Record<string, unknown> = {}): Promise<Answer | null> => {
    try {
      return (await runners[i]!.call(method, params)) as Answer;
    } catch (e) {
      if (/exited before answering|EPIPE|ECANCELED|ERR_STREAM_DESTROYED|write after/.test(String(e))) return null;
      throw e;
    }
  };
  const restart = async (i: number) => {
    const r = runners[i]!;
    if (r.child.exitCode === null && r.child.signalCode === null) {
      r.child.kill("SIGKILL");
      await r.exited;
    }
    runners[i] = spawnRunner(i);
  };

  before(async () => {
    requireBinary();
    db = await startSqld();
    for (let i = 0; i < RUNNERS; i++) dirs.push(tempDir());
    for (let i = 0; i < RUNNERS; i++) runners.push(spawnRunner(i));
  });
  after(async () => {
    for (const r of runners) if (r.child.exitCode === null && r.child.signalCode === null) await r.close().catch(() => {});
    await db.stop();
    for (const d of dirs) removeDir(d);
  });

  test(`acknowledged saves, checkpoints and claims survive kills of runners and of the server (seed via LONGRUN_SEED)`, async () => {
    const random = rng(seed);
    const pick = () => Math.floor(random() * RUNNERS);
    const task = (await runners[0]!.result("task.start", { description: "shared research" })).task;
    const run = (await runners[0]!.result("run.start", { owner: "exec-0", tools: ["fetch"], sources: [], budget: {} })).run;
    let epoch = 1; // the newest acknowledged claim
    const saved = new Map<string, string>(); // memory id -> title, acknowledged
    const checkpoints: string[] = []; // acknowledged checkpoint memory ids
    const unexpected: string[] = [];
    let fenced = 0;
    let killsOfRunners = 0;
    let serverRestarts = 0;
    const okOrFault = (what: string, a: Answer | null) => {
      // a runner killed mid-call answers nothing; the server killed is storage_error (unreachable) or a
      // checkpoint kept pending; a lost compare-and-swap is conflict. Anything else is a finding.
      if (!a || a.result) return;
      const kind = a.error?.data?.kind;
      if (kind === "storage_error" || kind === "conflict" || kind === "checkpoint_write_error" || kind === "write_gate_violation") return;
      unexpected.push(`${what}: ${JSON.stringify(a.error)}`);
    };

    for (let round = 0; round < ROUNDS; round++) {
      // a few calls at once on different runners: real contention on the one database
      const jobs: Promise<void>[] = [];
      for (let k = 0; k < 3; k++) {
        const i = pick();
        const title = `note ${round}.${k} by runner ${i}`;
        jobs.push(call(i, "memory.save", { type: "note", title, content: `seed ${seed}` }).then((a) => {
          okOrFault("memory.save", a);
          if (a?.result) saved.set(a.result.id, title);
        }));
      }
      const c = pick();
      jobs.push(call(c, "task.checkpoint", { summary: `round ${round}`, next_step: "go on", kind: "progress" }).then((a) => {
        okOrFault("task.checkpoint", a);
        if (a?.result) checkpoints.push(a.result.memory_id);
      }));
      await Promise.all(jobs);

      // a grant made through one runner holds in another; a checkpoint through a third ends it for all
      if (round % 5 === 0) {
        const [g, r, e] = [pick(), pick(), pick()];
        const grant = await call(g, "writes.enable", { reason: `round ${round}` });
        okOrFault("writes.enable", grant);
        if (grant?.result) {
          const req = await call(r, "writes.require", { action: "edit shared.md" });
          okOrFault("writes.require", req);
          if (req && !req.result && req.error?.data?.kind === "write_gate_violation") unexpected.push(`a grant made in runner ${g} was not seen by runner ${r}: ${req.error.message}`);
          const end = await call(e, "task.checkpoint", { summary: "end of turn", next_step: "next" });
          okOrFault("task.checkpoint", end);
          if (end?.result) {
            checkpoints.push(end.result.memory_id);
            const after = await call(r, "writes.require", { action: "edit shared.md" });
            if (after?.result) unexpected.push(`runner ${r} still allowed a write after runner ${e}'s checkpoint ended the lease`);
            const resumed = await call(e, "task.resume");
            okOrFault("task.resume", resumed);
          }
        }
      }

      // ownership moves: the new owner's epoch fences the old one in every runner
      if (round % 4 === 1) {
        const [newOwner, stale] = [pick(), pick()];
        const claim = await call(newOwner, "run.claim", { run_id: run.run_id, owner: `exec-${newOwner}` });
        okOrFault("run.claim", claim);
        if (claim?.result) {
          const before = epoch;
          epoch = claim.result.run.epoch;
          assert.ok(epoch > before, `epochs only grow (${before} -> ${epoch})`);
          const old = await call(stale, "receipt.begin", { run_id: run.run_id, epoch: before, tool: "fetch", idempotency_key: `k${round}`, args: { round } });
          if (old?.result) unexpected.push(`a begin with the old epoch ${before} was accepted after claim ${epoch}`);
          if (old?.error?.data?.kind === "stale_epoch") fenced++;
        }
      }

      // chaos: a runner killed (and started again) in a third of the rounds, the server in one of ten
      if (random() < 0.33) {
        await restart(pick());
        killsOfRunners++;
      }
      if (round % 10 === 7) {
        await db.kill();
        const down = await call(pick(), "memory.save", { type: "note", title: "while down", content: "x" });
        assert.equal(down?.error?.data?.reason, "unreachable", JSON.stringify(down));
        await db.start();
        serverRestarts++;
      }
    }
    assert.deepEqual(unexpected, []);

    // everything acknowledged is in the database, exactly once
    const c = createClient({ url: db.url });
    try {
      for (const [id, title] of saved) {
        const seq = Number(id.slice(2));
        const rows = (await c.execute({ sql: "SELECT title FROM memories WHERE seq = ?", args: [seq] })).rows;
        assert.equal(rows[0]?.title, title, `acknowledged ${id} (${title}) is there`);
      }
      const titles = (await c.execute("SELECT title, COUNT(*) AS n FROM memories WHERE type = 'note' GROUP BY title HAVING n > 1 AND title <> 'while down'")).rows;
      assert.deepEqual(titles, [], "no save was applied twice");
      for (const id of checkpoints) {
        const rows = (await c.execute({ sql: "SELECT dedupe_key FROM memories WHERE seq = ?", args: [Number(id.slice(2))] })).rows;
        assert.match(String(rows[0]?.dedupe_key), /^checkpoint:/, `acknowledged checkpoint ${id} is there`);
      }
      const runRow = (await c.execute({ sql: "SELECT epoch FROM runs WHERE seq = ?", args: [Number(run.run_id.slice(2))] })).rows[0]!;
      assert.ok(Number(runRow.epoch) >= epoch, "the newest acknowledged claim stands");
      const state = JSON.parse(String((await c.execute({ sql: "SELECT state FROM tasks WHERE task_id = ?", args: [task.task_id] })).rows[0]!.state));
      assert.ok(state.version > checkpoints.length, `every acknowledged checkpoint moved the task on (version ${state.version}, ${checkpoints.length} checkpoints)`);
    } finally {
      c.close();
    }
    assert.ok(saved.size > ROUNDS, `work was done (${saved.size} saves)`);
    assert.ok(killsOfRunners > 0 && serverRestarts > 0 && fenced > 0, `chaos happened: ${killsOfRunners} runner kills, ${serverRestarts} server restarts, ${fenced} stale begins fenced (seed ${seed})`);
  });
});
