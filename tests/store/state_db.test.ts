import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { StateCorruptError } from "../../src/core/errors.ts";
import { removeOrphanTemps, writeFileAtomic } from "../../src/store/atomic.ts";
import { Root } from "../../src/root/root.ts";
import { REPO, removeDir, run, scriptArgv, tempDir, until } from "../support/helpers.ts";
import { type Fixture, openFixture } from "../contract/setup.ts";
import { corruptTask, readTask } from "../support/state.ts";

const CLI = join(REPO, "tests", "fixtures", "contract_cli.ts");

describe("the task state in memory.db", () => {
  let fx: Fixture;
  beforeEach(async () => (fx = await openFixture({ searchInWorker: false })));
  afterEach(() => fx.close());

  const corruptions: [string, string][] = [
    ["truncated JSON", '{"task_id":"T_1","status":"in_pro'],
    ["not JSON at all", "\u0001\u0002garbage"],
    ["JSON of the wrong shape", '{"hello":"world"}'],
    ["an unknown status", '{"task_id":"T_1","description":"d","status":"done","access_mode":"read_only"}'],
    ["nothing", ""],
  ];
  for (const [name, content] of corruptions) {
    test(`a stored state with ${name} raises state_corrupt naming the database, never "no task"`, async () => {
      await fx.root.contract.startTask("t");
      await corruptTask(fx.dir, content);
      for (const op of [() => fx.root.contract.status(), () => fx.root.contract.requireWritable("w"), () => fx.root.contract.resume()]) {
        await assert.rejects(op(), (e: unknown) => {
          assert.ok(e instanceof StateCorruptError);
          assert.equal(e.kind, "state_corrupt");
          assert.match(String(e.data.path), /memory\.db/);
          return true;
        });
      }
      await assert.rejects(fx.root.contract.startTask("a new task must not overwrite it"), { kind: "state_corrupt" });
      const rs = await fx.root.db.execute("SELECT state FROM tasks");
      assert.equal(rs.rows[0]!.state, content, "the stored state was left untouched");
    });
  }

  test("a state from a newer longrun is refused, not downgraded", async () => {
    await fx.root.contract.startTask("t");
    await corruptTask(fx.dir, JSON.stringify({ format: 99, task_id: "T", description: "", status: "paused", access_mode: "read_only" }));
    await assert.rejects(fx.root.contract.status(), { kind: "state_corrupt" });
  });

  test("the version increases by one on every save, and the stored row says so", async () => {
    const c = fx.root.contract;
    const versions = [(await c.startTask("t")).task.version];
    versions.push((await c.beginTurn()).version);
    versions.push((await c.enableWrites({ reason: "r", granted_by: "host" })).version);
    versions.push((await c.endTurn()).version);
    versions.push((await c.checkpoint({ summary: "s", next_step: "n" })).task.version);
    versions.push((await c.resume()).task.version);
    assert.deepEqual(versions, [1, 2, 3, 4, 5, 6]);
    assert.equal((await readTask(fx.dir)).version, 6);
    assert.equal(Number((await fx.root.db.execute("SELECT version FROM tasks")).rows[0]!.version), 6);
  });

  test("reads are served from a cache that another process's commit invalidates", async () => {
    await fx.root.contract.startTask("t");
    const first = await fx.root.state.load();
    assert.equal(await fx.root.state.load(), first, "unchanged: the same frozen object, no read");
    const r = await run(scriptArgv(CLI, [fx.dir, "begin_turn"]));
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await fx.root.state.load())!.turn_index, 2, "another connection's commit is seen");
  });

  test("temp files of dead writers are removed on open; a live writer's are kept", async () => {
    const dead = join(fx.root.paths.longrun, ".pending_checkpoint.json.999999.abc.tmp");
    const live = join(fx.root.paths.longrun, `.pending_checkpoint.json.${process.pid}.abc.tmp`);
    writeFileSync(dead, "{");
    writeFileSync(live, "{");
    removeOrphanTemps(fx.root.paths.longrun);
    assert.equal(existsSync(dead), false);
    assert.equal(existsSync(live), true);
  });

  test("writeFileAtomic replaces the whole file or nothing", () => {
    const p = join(fx.dir, "f.json");
    writeFileAtomic(p, "old");
    assert.throws(() => writeFileAtomic(p, "new", { crash: (pt) => { if (pt === "file.after_temp_fsync") throw new Error("boom"); } }));
    assert.equal(readFileSync(p, "utf8"), "old");
    assert.deepEqual(readdirSync(fx.dir).filter((n) => n.endsWith(".tmp")), []);
  });
});

describe("roots from an earlier longrun (state in .longrun/state.json)", () => {
  let dir = "";
  beforeEach(() => {
    dir = tempDir();
    mkdirSync(join(dir, ".longrun"));
  });
  afterEach(() => removeDir(dir));

  const legacy = (fields: Record<string, unknown>) =>
    writeFileSync(join(dir, ".longrun", "state.json"), JSON.stringify({ task_id: "T_legacy", description: "port the importer", status: "in_progress", access_mode: "read_only", turn_index: 4, version: 9, ...fields }));

  test("a readable state moves into the database on first open, once, and the file is kept renamed", async () => {
    legacy({ format: 3, write_lease_turn: null, phase: "p2", next_step: "n" });
    const root = await Root.open(dir, { searchInWorker: false });
    try {
      const t = (await root.contract.status()).task!;
      assert.equal(t.task_id, "T_legacy");
      assert.equal(t.turn_index, 4);
      assert.equal(t.version, 9);
      assert.equal(t.phase, "p2");
      assert.equal(existsSync(join(dir, ".longrun", "state.json")), false);
      assert.equal(readdirSync(join(dir, ".longrun")).filter((n) => n.startsWith("state.json.migrated-")).length, 1);
      assert.equal((await root.contract.beginTurn()).version, 10, "it goes on from the file's version");
    } finally {
      await root.close();
    }
    const again = await Root.open(dir, { searchInWorker: false });
    try {
      assert.equal((await again.contract.status()).task!.turn_index, 5, "opened again: nothing imported twice");
    } finally {
      await again.close();
    }
  });

  test("a legacy state that says writable arrives read-only", async () => {
    legacy({ access_mode: "writable" });
    const root = await Root.open(dir, { searchInWorker: false });
    try {
      const t = (await root.contract.status()).task!;
      assert.equal(t.access_mode, "read_only");
      assert.equal(t.lease, null);
      await assert.rejects(root.contract.requireWritable("w"), { kind: "write_gate_violation" });
    } finally {
      await root.close();
    }
  });

  test("an unreadable legacy state is state_corrupt (never no task), kept in place; recovery moves it aside and rebuilds", async () => {
    writeFileSync(join(dir, ".longrun", "state.json"), '{"trunc');
    const root = await Root.open(dir, { searchInWorker: false });
    try {
      await assert.rejects(root.contract.status(), (e: unknown) => e instanceof StateCorruptError && String(e.data.path).endsWith("state.json"));
      await assert.rejects(root.contract.startTask("must not replace it"), { kind: "state_corrupt" });
      assert.equal(readFileSync(join(dir, ".longrun", "state.json"), "utf8"), '{"trunc');
      // a checkpoint of the same task in memory (as the earlier longrun would have saved it)
      await root.memory.save({ type: "session", title: "cp", content: 'x\n<!-- longrun-state: {"task_id":"T_legacy","status":"paused","turn_index":3,"checkpoint_id":"c1","description":"port"} -->', keywords: [], task_id: "T_legacy", dedupe_key: "checkpoint:c1" });
      const r = await root.contract.recoverFromMemory();
      assert.equal(r.task!.task_id, "T_legacy");
      assert.ok(r.quarantined && existsSync(r.quarantined) && readFileSync(r.quarantined, "utf8") === '{"trunc');
      assert.equal((await root.contract.status()).task!.task_id, "T_legacy");
    } finally {
      await root.close();
    }
  });
});

describe("two processes on one root", () => {
  let fx: Fixture;
  beforeEach(async () => (fx = await openFixture({ searchInWorker: false })));
  afterEach(() => fx.close());

  test("concurrent writers never lose an update", async () => {
    await fx.root.contract.startTask("t");
    const n = 15;
    const [a, b] = await Promise.all([
      run(scriptArgv(CLI, [fx.dir, "begin_turns", JSON.stringify({ n })])),
      run(scriptArgv(CLI, [fx.dir, "begin_turns", JSON.stringify({ n })])),
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const t = (await fx.root.contract.status()).task!;
    assert.equal(t.turn_index, 1 + 2 * n);
    assert.equal(t.version, 1 + 2 * n);
  });

  test("concurrent memory writers never see SQLITE_BUSY: every save lands", async () => {
    const n = 40;
    const runs = await Promise.all(["a", "b"].map((tag) => run(scriptArgv(CLI, [fx.dir, "save_memories", JSON.stringify({ n, tag })]))));
    for (const r of runs) {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout.trim()).result, n, r.stdout);
    }
    const count = Number((await fx.root.db.execute("SELECT COUNT(*) AS n FROM memories")).rows[0]!.n);
    assert.equal(count, 2 * n);
  });

  test("the loser of a compare-and-swap gets ConflictError and writes nothing", async () => {
    await fx.root.contract.startTask("t");
    const go = join(fx.dir, "go");
    const start = (phase: string) => {
      const argv = scriptArgv(CLI, [fx.dir, "cas", JSON.stringify({ go, phase })]);
      const child = spawn(argv[0]!, argv.slice(1), { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
      const done = new Promise<void>((r) => child.on("close", () => r()));
      return { lines: () => out.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)), done };
    };
    const a = start("from a");
    const b = start("from b");
    await until(() => a.lines().length >= 1 && b.lines().length >= 1, "both writers read version 1");
    writeFileSync(go, "");
    await Promise.all([a.done, b.done]);
    const outcomes = [a.lines().at(-1), b.lines().at(-1)];
    const wins = outcomes.filter((o) => o.result === 2);
    const losses = outcomes.filter((o) => o.error?.kind === "conflict");
    assert.equal(wins.length, 1, JSON.stringify(outcomes));
    assert.equal(losses.length, 1, JSON.stringify(outcomes));
    assert.equal(losses[0].error.data.expected_version, 1);
    assert.equal(losses[0].error.data.actual_version, 2);
    const t = (await fx.root.contract.status()).task!;
    assert.equal(t.version, 2);
  });
});
