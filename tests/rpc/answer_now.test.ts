/**
 * The gate check answered at once (`Method.now`, the dispatcher's path without a wait): the same
 * answers, errors and refusals as the handler, also when another process changes the state or
 * writes a pending checkpoint, and never ahead of a call that arrived before it.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { afterEach, beforeEach, describe, test } from "node:test";
import { Dispatcher } from "../../src/rpc/dispatcher.ts";
import { toErrorObject } from "../../src/rpc/errors.ts";
import type { Caller } from "../../src/rpc/method.ts";
import { allMethods } from "../../src/rpc/methods/index.ts";
import { RootRegistry } from "../../src/root/registry.ts";
import type { Root } from "../../src/root/root.ts";
import { removeDir, tempDir } from "../support/helpers.ts";
import { BINARY } from "../support/server.ts";

const HOST: Caller = { side: "host", via: "test" };
const AGENT: Caller = { side: "agent", via: "test" };
const ACTION = { action: "edit src/app.ts" };

interface Answer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data: Record<string, unknown> };
}

describe("writes.require answered at once", () => {
  let dir: string;
  let roots: RootRegistry;
  let d: Dispatcher;
  let id = 1;
  const call = async (method: string, params: Record<string, unknown> = {}, caller = AGENT): Promise<Answer> =>
    JSON.parse((await d.handleText(JSON.stringify({ jsonrpc: "2.0", id: id++, method, params }), caller))!);
  /** The same check through the handler's way (the contract's `requireWritable`), as an answer. */
  const slow = async (root: Root, action: string): Promise<Answer> => {
    try {
      return { result: { ok: true, ...(await root.contract.requireWritable(action)) } };
    } catch (e) {
      return { error: JSON.parse(JSON.stringify(toErrorObject(e))) };
    }
  };
  /** Whether the dispatcher would answer this check at once: the method's own `now` on the open root. */
  const answersAtOnce = (root: Root, action: string) => {
    const m = allMethods().find((x) => x.name === "writes.require")!;
    try {
      return m.now!({ root, caller: AGENT }, { action }) !== undefined;
    } catch {
      return true; // a refusal given at once
    }
  };

  beforeEach(async () => {
    dir = tempDir();
    roots = new RootRegistry({ defaultRoot: dir, rootOptions: { searchInWorker: false } });
    d = new Dispatcher({ methods: allMethods(), roots });
    assert.ok(!(await call("task.start", { description: "t" }, HOST)).error);
  });
  afterEach(async () => {
    await roots.closeAll();
    removeDir(dir);
  });

  test("a granted lease: the same answer as the handler, and given at once", async () => {
    await call("writes.enable", { reason: "r" }, HOST);
    const first = await call("writes.require", ACTION);
    const root = await roots.get();
    assert.ok(answersAtOnce(root, ACTION.action), "the state was just read: the check needs no wait");
    const fast = await call("writes.require", ACTION);
    assert.deepEqual(fast.result, first.result);
    assert.deepEqual(fast.result, (await slow(root, ACTION.action)).result);
    assert.equal(fast.result!.ok, true);
  });

  test("refusals are the handler's: read-only, out of scope, no task", async () => {
    const root = await roots.get();
    await call("writes.require", ACTION);
    const readOnly = await call("writes.require", ACTION);
    assert.equal(readOnly.error?.data.kind, "write_gate_violation");
    assert.equal(readOnly.error?.data.reason, "read_only");
    assert.deepEqual(readOnly.error?.data, (await slow(root, ACTION.action)).error?.data);

    await call("writes.enable", { reason: "r", scope: ["docs/**"] }, HOST);
    await call("writes.require", ACTION);
    const out = await call("writes.require", ACTION);
    assert.equal(out.error?.data.reason, "out_of_scope");
    assert.deepEqual(out.error?.data, (await slow(root, ACTION.action)).error?.data);

    const bad = await call("writes.require", { action: 7 });
    assert.equal(bad.error?.code, -32602, "params are still checked first");
  });

  test("a lease that must change in storage (a counted use) still records the use", async () => {
    await call("writes.enable", { reason: "r", max_uses: 2 }, HOST);
    const root = await roots.get();
    await call("writes.require", ACTION);
    assert.equal(answersAtOnce(root, ACTION.action), false, "a counted use is a write: the handler's way");
    const second = await call("writes.require", ACTION);
    assert.equal((second.result!.lease as { uses: number }).uses, 2);
    const third = await call("writes.require", ACTION);
    assert.equal(third.error?.data.reason, "uses_exhausted");
  });

  test("another process begins a new turn: the next check refuses, as the handler does", { skip: existsSync(BINARY) ? false : "no dist/longrun: build it first (./compile.sh)" }, async () => {
    await call("writes.enable", { reason: "r" }, HOST);
    assert.equal((await call("writes.require", ACTION)).result?.ok, true);
    const root = await roots.get();
    assert.ok(answersAtOnce(root, ACTION.action));
    const resumed = spawnSync(BINARY, ["resume", "--root", dir], { encoding: "utf8" });
    assert.equal(resumed.status, 0, resumed.stderr);
    const after = await call("writes.require", ACTION);
    assert.equal(after.error?.data.kind, "write_gate_violation");
    assert.equal(after.error?.data.reason, "read_only");
    assert.equal(after.error?.data.turn, 2, "the new turn, read from the database another process wrote");
  });

  test("another process writes a pending checkpoint: the next check refuses, naming it", async () => {
    await call("writes.enable", { reason: "r" }, HOST);
    assert.equal((await call("writes.require", ACTION)).result?.ok, true);
    const root = await roots.get();
    const pending = root.paths.pending;
    // what a failed checkpoint leaves when even its text could not be kept: an empty file, no database change
    const made = spawnSync("sh", ["-c", ': > "$1"', "sh", pending]);
    assert.equal(made.status, 0);
    const after = await call("writes.require", ACTION);
    assert.equal(after.error?.data.reason, "read_only");
    assert.equal(after.error?.data.pending_path, pending);
    assert.deepEqual(after.error?.data, (await slow(root, ACTION.action)).error?.data);
  });

  test("a check sent right after a turn.end, before it finished, sees the lease ended", async () => {
    await call("writes.enable", { reason: "r" }, HOST);
    assert.equal((await call("writes.require", ACTION)).result?.ok, true);
    const line = (method: string, params: Record<string, unknown>) => JSON.stringify({ jsonrpc: "2.0", id: id++, method, params });
    // both handed over in one tick, as lines of one chunk of stdin are
    const ended = d.handleText(line("turn.end", { reason: "done" }), HOST);
    const checked = d.handleText(line("writes.require", ACTION), AGENT);
    const [end, check] = (await Promise.all([ended, checked])).map((t) => JSON.parse(t!) as Answer);
    assert.ok(!end!.error);
    assert.equal(check!.error?.data.reason, "read_only");
  });
});
