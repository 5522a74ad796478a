/**
 * Retention rules (`.longrun/settings.json` `retention`, or beside the state of a root on sqld
 * under LONGRUN_TEST_STORE=sqld): memories of the named types older than the rule's days are
 * forgotten (gone from search and memory.get, an event each), others stay, checkpoints and
 * outcomes are never forgotten whatever a rule says, a malformed rule forgets nothing; and a
 * running `longrun serve` applies the rules by itself soon after it opens the root.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { RpcFixture } from "../ledger/rpc.ts";
import { TestClock } from "../support/clock.ts";
import { until } from "../support/helpers.ts";
import { serveEachTest } from "../support/each_root.ts";
import { openTestDb } from "../support/state.ts";
import { writeTestSettings } from "../support/sqld.ts";

const DAY = 86_400;

describe("retention rules (a clock the test moves)", () => {
  let fx: RpcFixture;
  let clock: TestClock;
  beforeEach(() => {
    clock = new TestClock();
    fx = new RpcFixture({ clock });
  });
  afterEach(() => fx.close());

  test("notes past their days are forgotten; other types, newer notes and checkpoints stay", async () => {
    await fx.ok("task.start", { description: "keep only what matters" });
    const note = await fx.ok("memory.save", { type: "note", title: "old zanzibar note", content: "zanzibar words" });
    const log = await fx.ok("memory.save", { type: "log", title: "old zanzibar log", content: "zanzibar log" });
    await fx.ok("task.checkpoint", { summary: "zanzibar checkpoint", next_step: "go on", kind: "progress" });
    writeTestSettings(fx.dir, { retention: [{ types: ["note"], older_than_days: 30 }, { types: ["*"], older_than_days: 365 }] });
    const root = await fx.root();
    assert.deepEqual(await root.applyRetention(), [], "nothing is 30 days old yet");
    clock.advance(31 * DAY);
    const fresh = await fx.ok("memory.save", { type: "note", title: "a fresh zanzibar note", content: "zanzibar new" });
    assert.deepEqual(await root.applyRetention(), [note.id], "the old note only: the fresh one and the log stay");
    assert.equal((await fx.ok("memory.get", { id: fresh.id })).record.title, "a fresh zanzibar note");
    assert.equal((await fx.fail("memory.get", { id: note.id })).data.kind, "not_found");
    assert.equal((await fx.ok("memory.get", { id: log.id })).record.title, "old zanzibar log");
    const hits = (await fx.ok("memory.search", { query: "zanzibar" })).hits.map((h: { id: string }) => h.id);
    assert.ok(!hits.includes(note.id) && hits.includes(log.id));
    clock.advance(400 * DAY);
    const all = await root.applyRetention();
    assert.ok(all.includes(log.id), "the every-type rule takes the log at a year");
    assert.equal((await fx.ok("task.checkpoints")).checkpoints.length, 1, "the checkpoint stays: recovery reads it");
    const forgotten = (await fx.ok("events.read", { kinds: ["memory.forgotten"] })).events;
    assert.deepEqual(forgotten.map((e: { detail: { memory_id: string } }) => e.detail.memory_id).slice(0, 1), [note.id]);
    assert.equal(forgotten[0].detail.by, "longrun:retention");
    assert.match(forgotten[0].detail.reason, /note older than 30 days/);
  });

  test("a malformed rule forgets nothing and says which", async () => {
    await fx.ok("task.start", { description: "t" });
    const note = await fx.ok("memory.save", { type: "note", title: "kept", content: "kept" });
    clock.advance(100 * DAY);
    for (const bad of [{ retention: { types: ["note"] } }, { retention: [{ types: [], older_than_days: 3 }] }, { retention: [{ types: ["note"], older_than_days: 0 }] }, "{not json"]) {
      writeTestSettings(fx.dir, bad);
      await assert.rejects((await fx.root()).applyRetention(), /retention not applied/);
    }
    assert.equal((await fx.ok("memory.get", { id: note.id })).record.title, "kept");
  });
});

describe("retention in a running server (the compiled binary)", () => {
  const serve = serveEachTest();

  test("longrun serve applies the rules soon after it opens the root", async () => {
    const s = serve();
    await s.result("task.start", { description: "old notes" });
    const note = await s.result("memory.save", { type: "note", title: "an old note", content: "quokka words" });
    await s.close();
    // the passage of time, by hand: the note was saved 40 days ago
    const db = await openTestDb(serve.dir());
    try {
      await db.execute({ sql: "UPDATE memories SET created_at = ? WHERE seq = ?", args: [new Date(Date.now() - 40 * DAY * 1000).toISOString(), Number(note.id.slice(2))] });
    } finally {
      await db.close();
    }
    writeTestSettings(serve.dir(), { retention: [{ types: ["note"], older_than_days: 30 }] });
    const again = serve();
    await again.result("task.status");
    await until(async () => (await again.call("memory.get", { id: note.id })).error !== undefined, "the note forgotten by the running server");
    assert.equal((await again.result("memory.search", { query: "quokka" })).hits.length, 0);
  });
});
