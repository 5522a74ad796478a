import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { StateCorruptError } from "../../src/core/errors.ts";
import { removeOrphanTemps, writeFileAtomic } from "../../src/store/atomic.ts";
import { REPO, run, scriptArgv, until } from "../helpers.ts";
import { type Fixture, openFixture } from "../contract/setup.ts";

const CLI = join(REPO, "tests", "fixtures", "contract_cli.ts");

describe("state.json", () => {
  let fx: Fixture;
  beforeEach(async () => (fx = await openFixture({ searchInWorker: false })));
  afterEach(() => fx.close());

  const corruptions: [string, string][] = [
    ["truncated JSON", '{"task_id":"T_1","status":"in_pro'],
    ["not JSON at all", "\u0000\u0001garbage"],
    ["JSON of the wrong shape", '{"hello":"world"}'],
    ["an unknown status", '{"task_id":"T_1","description":"d","status":"done","access_mode":"read_only"}'],
    ["an empty file", ""],
  ];
  for (const [name, content] of corruptions) {
    test(`a state file with ${name} raises state_corrupt naming the path, never "no task"`, async () => {
      writeFileSync(fx.root.paths.state, content);
      for (const op of [() => fx.root.contract.status(), () => fx.root.contract.requireWritable("w"), () => fx.root.contract.resume()]) {
        await assert.rejects(op(), (e: unknown) => {
          assert.ok(e instanceof StateCorruptError);
          assert.equal(e.kind, "state_corrupt");
          assert.equal(e.data.path, fx.root.paths.state);
          return true;
        });
      }
      await assert.rejects(fx.root.contract.startTask("a new task must not overwrite it"), { kind: "state_corrupt" });
      assert.equal(readFileSync(fx.root.paths.state, "utf8"), content, "the file was left untouched");
    });
  }

  test("a state file from a newer longrun is refused, not downgraded", async () => {
    writeFileSync(fx.root.paths.state, JSON.stringify({ format: 99, task_id: "T", description: "", status: "paused", access_mode: "read_only" }));
    await assert.rejects(fx.root.contract.status(), { kind: "state_corrupt" });
  });

  test("the version increases by one on every save", async () => {
    const c = fx.root.contract;
    const versions = [(await c.startTask("t")).task.version];
    versions.push((await c.beginTurn()).version);
    versions.push((await c.enableWrites({ reason: "r", granted_by: "host" })).version);
    versions.push((await c.endTurn()).version);
    versions.push((await c.checkpoint({ summary: "s", next_step: "n" })).task.version);
    versions.push((await c.resume()).task.version);
    assert.deepEqual(versions, [1, 2, 3, 4, 5, 6]);
    assert.equal(JSON.parse(readFileSync(fx.root.paths.state, "utf8")).version, 6);
  });

  test("a write leaves no temp file behind and the file is private (0600)", async () => {
    await fx.root.contract.startTask("t");
    assert.deepEqual(readdirSync(fx.root.paths.longrun).filter((n) => n.endsWith(".tmp")), []);
    const { statSync } = await import("node:fs");
    assert.equal(statSync(fx.root.paths.state).mode & 0o777, 0o600);
  });

  test("temp files of dead writers are removed on open; a live writer's are kept", async () => {
    const dead = join(fx.root.paths.longrun, ".state.json.999999.abc.tmp");
    const live = join(fx.root.paths.longrun, `.state.json.${process.pid}.abc.tmp`);
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
