/**
 * Opening a root (src/root/steps.ts, src/root/open.ts): the steps run in their one order and what
 * they opened is closed when one fails; the store is a server's project only when one is
 * configured; the gate's task-state open lays nothing out.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { openRoot } from "../../src/root/open.ts";
import { OPEN_STEPS, type OpenPlan, rootStore, runPlan } from "../../src/root/steps.ts";
import { errorKind } from "../../src/core/errors.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

const SERVER = { url: "http://127.0.0.1:9", project: "p", stateDir: "/nowhere/.longrun/p" };

describe("opening a root", () => {
  let dir: string;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => removeDir(dir));

  test("runPlan runs the steps in order, skips those a plan leaves out, and closes once when one fails", async () => {
    const seen: string[] = [];
    const c = { closed: 0, close() { this.closed++; } };
    const plan = Object.fromEntries(OPEN_STEPS.map((s) => [s, s === "reindex" ? null : () => void seen.push(s)])) as OpenPlan<typeof c>;
    assert.equal(await runPlan(plan, c), c);
    assert.deepEqual(seen, ["layout", "database", "migrate", "legacy import", "identity"]);
    assert.equal(c.closed, 0);
    const failing = { ...plan, migrate: () => Promise.reject(new Error("newer schema")) };
    seen.length = 0;
    await assert.rejects(runPlan(failing, c), /newer schema/);
    assert.deepEqual(seen, ["layout", "database"]);
    assert.equal(c.closed, 1);
  });

  test("rootStore picks the server's project only when one is configured", () => {
    assert.deepEqual(rootStore(dir, null), { kind: "local", dir });
    assert.deepEqual(rootStore(dir, SERVER), { kind: "server", server: SERVER });
  });

  test("the gate's open of a directory with no database holds no task and lays nothing out", async () => {
    const { contract, state, close } = await openRoot({ store: rootStore(dir, null), scope: "gate" });
    try {
      assert.equal(await state.load(), null);
      await assert.rejects(contract.requireWritable("Edit"), (e) => errorKind(e) === "no_active_task");
    } finally {
      close();
    }
    assert.deepEqual(readdirSync(dir), []);
  });

  test("on a server, the gate refuses a missing state directory and makes none; the other hooks lay it out", async () => {
    const server = { ...SERVER, stateDir: join(dir, ".longrun", "p") };
    await assert.rejects(openRoot({ store: rootStore(dir, server), scope: "gate" }), { name: "StoreConfigError" });
    assert.equal(existsSync(server.stateDir), false);
    const opened = await openRoot({ store: rootStore(dir, server), scope: "state" });
    opened.close();
    assert.equal(existsSync(server.stateDir), true);
  });
});
