/**
 * Gaps with identity (local, and on sqld under LONGRUN_TEST_STORE=sqld): what a task's drafts do
 * not yet cover, as items with ids that move open → closed across runs and artifact versions; each
 * version shows the gaps open when it was saved and those it closed.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { RpcFixture } from "./rpc.ts";

describe("gaps", () => {
  let fx: RpcFixture;
  beforeEach(() => (fx = new RpcFixture()));
  afterEach(() => fx.close());

  const run = async (owner: string) => (await fx.ok("run.start", { owner, tools: ["fetch"] })).run;
  const texts = (gaps: { text: string }[]) => gaps.map((g) => g.text);

  test("a run's gaps get ids; the next run names the same gap again, not a second one; a version that covers a gap closes it", async () => {
    await fx.ok("task.start", { description: "survey the pension funds" });
    const first = await run("lead");
    const v1 = (await fx.ok("artifact.put", { name: "survey", kind: "draft", content: "funds A and B", run_id: first.run_id, epoch: 1, gaps: ["fund C's fees", "2025 data"] })).artifact;
    assert.deepEqual(texts(v1.gaps.open), ["fund C's fees", "2025 data"], "the draft shows what it does not yet cover");
    const ended = await fx.ok("run.finish", { run_id: first.run_id, epoch: 1, outcome: "window exhausted", gaps: ["fund C's fees", "tracking error"] });
    const ids = Object.fromEntries(ended.gaps.map((g: { text: string; gap_id: string }) => [g.text, g.gap_id]));
    assert.deepEqual(Object.keys(ids), ["fund C's fees", "tracking error"]);
    assert.equal(ids["fund C's fees"], v1.gaps.open[0].gap_id, "the same text is the same gap");
    const second = (await fx.ok("run.continue", { parent_run_id: first.run_id, owner: "lead-2", budget: {} })).run;
    const v2 = (await fx.ok("artifact.put", { name: "survey", kind: "full", content: "funds A, B and C", run_id: second.run_id, epoch: 1, closes: [ids["fund C's fees"]] })).artifact;
    assert.deepEqual(texts(v2.gaps.closed_here), ["fund C's fees"]);
    assert.deepEqual(texts(v2.gaps.open), ["2025 data", "tracking error"]);
    const all = (await fx.ok("gap.list")).gaps;
    const c = all.find((g: { gap_id: string }) => g.gap_id === ids["fund C's fees"]);
    assert.deepEqual([c.status, c.opened.run_id, c.closed.run_id, c.closed.artifact], ["closed", first.run_id, second.run_id, { name: "survey", version: 2 }]);
    // the older version still shows the gap open: as it was when it was saved
    const old = (await fx.ok("artifact.get", { name: "survey", version: 1 })).artifact;
    assert.deepEqual(texts(old.gaps.open), ["fund C's fees", "2025 data"]);
    assert.deepEqual(texts((await fx.ok("gap.list", { status: "open" })).gaps), ["2025 data", "tracking error"]);
    const kinds = (await fx.ok("events.read", { kinds: ["gap."] })).events.map((e: { kind: string }) => e.kind);
    assert.deepEqual(kinds, ["gap.opened", "gap.opened", "gap.opened", "gap.closed"]);
  });

  test("a closed gap stays closed: closing it again or another task's gap is refused and nothing is saved; naming it again opens a new one", async () => {
    const { task } = await fx.ok("task.start", { description: "one" });
    const r = await run("lead");
    const [gap] = (await fx.ok("run.finish", { run_id: r.run_id, epoch: 1, outcome: "done", gaps: ["fund C"] })).gaps;
    await fx.ok("artifact.put", { name: "s", kind: "full", content: "with C", closes: [gap.gap_id] });
    const again = await fx.fail("artifact.put", { name: "s", kind: "full", content: "again", closes: [gap.gap_id] });
    assert.deepEqual([again.data.reason, again.data.gap_id], ["gap_closed", gap.gap_id]);
    assert.equal((await fx.ok("artifact.list", { name: "s" })).artifacts.length, 1, "the refused version was not saved");
    const reopened = (await fx.ok("artifact.put", { name: "s", kind: "draft", content: "C's fees changed", gaps: ["fund C"] })).artifact;
    assert.notEqual(reopened.gaps.open[0].gap_id, gap.gap_id, "a regression is a new gap");
    await fx.ok("task.start", { description: "two" });
    const foreign = await fx.fail("artifact.put", { name: "t", kind: "full", content: "x", closes: [reopened.gaps.open[0].gap_id] });
    assert.equal(foreign.data.kind, "not_found", "a gap of another task");
    assert.deepEqual(texts((await fx.ok("gap.list", { task_id: task.task_id, status: "open" })).gaps), ["fund C"]);
  });

  test("only the host closes a gap without an artifact, with a note", async () => {
    await fx.ok("task.start", { description: "one" });
    const r = await run("lead");
    const [gap] = (await fx.ok("run.finish", { run_id: r.run_id, epoch: 1, outcome: "done", gaps: ["2019 data"] })).gaps;
    assert.equal((await fx.fail("gap.close", { gap_id: gap.gap_id, note: "I say so" })).data.kind, "unauthorized");
    const closed = (await fx.ok("gap.close", { gap_id: gap.gap_id, note: "the user does not need 2019" }, "host")).gap;
    assert.deepEqual([closed.status, closed.closed.by, closed.closed.note, closed.closed.artifact], ["closed", "host:test", "the user does not need 2019", null]);
    assert.equal((await fx.fail("gap.close", { gap_id: "G_9999", note: "x" }, "host")).data.kind, "not_found");
    assert.equal((await fx.fail("gap.close", { gap_id: "9999", note: "x" }, "host")).data.kind, "invalid_params");
  });
});
