/**
 * The state cache's change detector (src/db/change_detector.ts): the WAL-index header of
 * `memory.db-shm`, read without SQL, with `PRAGMA data_version` whenever it cannot tell. Other
 * processes change the state here for real: a libSQL process (a second host) and the hook, a
 * process of the binary on the runtime's own SQLite. Corrupt headers come from the test seam
 * only (writing them into a live `-shm` would be a fault of SQLite's, not ours).
 */
import assert from "node:assert/strict";
import { copyFileSync, existsSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { testSeamShmHeader, WalIndexWatch } from "../../src/db/change_detector.ts";
import { Root } from "../../src/root/root.ts";
import { REPO, removeDir, run, scriptArgv, tempDir } from "../support/helpers.ts";
import { hook } from "../support/hook_run.ts";
import { TEST_STORE } from "../support/sqld.ts";
import { skipped } from "../support/skips.ts";

const CLI = join(REPO, "tests", "fixtures", "contract_cli.ts");

async function other(dir: string, op: string, params?: unknown): Promise<void> {
  const r = await run(scriptArgv(CLI, [dir, op, ...(params === undefined ? [] : [JSON.stringify(params)])]));
  assert.equal(r.code, 0, r.stderr);
}

/** Header bytes a look may find, none of which may be taken for "nothing changed". */
const CORRUPT: [string, (h: Uint8Array) => void][] = [
  ["the two copies differ (a writer between them)", (h) => (h[48 + 8]! ^= 1)],
  ["the checksum does not match (a torn read)", (h) => ((h[8]! ^= 1), (h[48 + 8]! ^= 1))],
  ["isInit is 0", (h) => ((h[12] = 0), (h[48 + 12] = 0))],
  ["the version is not SQLite's", (h) => ((h[0]! ^= 1), (h[48]! ^= 1))],
];

describe("the WAL-index header as the state cache's change detector", { skip: skipped("tests/store/change_detector", TEST_STORE === "sqld" ? "a server store has no -shm: it reads afresh" : false) }, () => {
  let dir = "";
  let root: Root;
  beforeEach(async () => {
    dir = tempDir();
    root = await Root.open(dir, { searchInWorker: false });
  });
  afterEach(async () => {
    testSeamShmHeader.corrupt = null;
    await root.close();
    removeDir(dir);
  });

  test("a look says same until another process commits, then changed once", async () => {
    await root.contract.startTask("t");
    const watch = new WalIndexWatch(root.paths.memoryDb);
    assert.equal(watch.look(), "changed", "the first look knows nothing earlier");
    assert.equal(watch.look(), "same");
    await other(dir, "begin_turn");
    assert.equal(watch.look(), "changed");
    assert.equal(watch.look(), "same");
  });

  for (const [name, corrupt] of CORRUPT) {
    test(`a header where ${name} is unsure, and the gate still sees another process end the lease`, async () => {
      await root.contract.startTask("t");
      await root.contract.enableWrites({ reason: "r", granted_by: "host" });
      assert.equal((await root.contract.requireWritable("w")).turn, 1);
      const watch = new WalIndexWatch(root.paths.memoryDb);
      assert.equal(watch.look(), "changed");
      testSeamShmHeader.corrupt = corrupt;
      assert.equal(watch.look(), "unsure");
      await other(dir, "begin_turn"); // a new turn: the lease is gone
      await assert.rejects(root.contract.requireWritable("w"), { kind: "write_gate_violation", reason: "read_only" });
      testSeamShmHeader.corrupt = null;
      assert.equal(watch.look(), "changed", "after an unsure look the next good one counts as a change");
    });
  }

  test("a -shm that is missing, unlinked or replaced is unsure; its replacement is read afresh", async () => {
    await root.contract.startTask("t");
    const copy = join(dir, "copy.db");
    const watch = new WalIndexWatch(copy);
    assert.equal(watch.look(), "unsure", "no copy.db-shm yet");
    copyFileSync(`${root.paths.memoryDb}-shm`, `${copy}-shm`);
    assert.equal(watch.look(), "changed");
    assert.equal(watch.look(), "same");
    unlinkSync(`${copy}-shm`);
    assert.equal(watch.look(), "unsure", "unlinked since it was opened");
    assert.equal(watch.look(), "unsure", "and missing");
    copyFileSync(`${root.paths.memoryDb}-shm`, `${copy}-shm`);
    assert.equal(watch.look(), "changed", "a new file: nothing known about it");
    assert.ok(existsSync(`${copy}-shm`));
  });

  test("the hook's process (the runtime's SQLite) ends the turn: the open root's next gate check refuses", async () => {
    await root.close();
    await hook(dir, "UserPromptSubmit", { prompt: "Rename the loader\n/approve go ahead" });
    root = await Root.open(dir, { searchInWorker: false });
    const before = await root.contract.requireWritable("edit a");
    assert.equal(before.lease.granted_by, "host:claude-prompt");
    await root.contract.requireWritable("edit b"); // served from the cache now
    const st = await hook(dir, "Stop", { stop_hook_active: false, last_assistant_message: "Renamed the loader." });
    assert.equal(st.code, 0, st.stderr);
    await assert.rejects(root.contract.requireWritable("edit c"), { kind: "write_gate_violation" });
  });

  test("the database's change number moves on every commit of another process, with or without the header", async () => {
    await root.contract.startTask("t");
    const db = root.db;
    await db.dataVersion(); // the first asks the journal mode, then watches the header
    let looks = 0;
    testSeamShmHeader.corrupt = () => void looks++;
    const a = await db.dataVersion();
    assert.equal(await db.dataVersion(), a);
    assert.equal(looks, 2, "each answered from the header");
    await other(dir, "begin_turn");
    const b = await db.dataVersion();
    assert.notEqual(b, a);
    testSeamShmHeader.corrupt = CORRUPT[0]![1];
    const c = await db.dataVersion();
    await other(dir, "begin_turn");
    assert.notEqual(await db.dataVersion(), c, "the pragma's answer, when the header cannot tell");
  });
});
