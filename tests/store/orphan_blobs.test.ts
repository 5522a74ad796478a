/**
 * Orphan blob collection (src/store/blobs.ts, db_blobs.ts, Root.collectOrphanBlobs) on a real
 * database in a temp dir: a true orphan goes; every blob a row names (a memory's long body, an
 * artifact, an attachment, a context) stays, and so does one a save in flight has written but not
 * yet committed (younger than the grace period), and a file whose name is not a blob's. And the
 * collection runs off the request path: held between its steps (the `pace.step` seam), a gate
 * check is answered and a save commits.
 */
import assert from "node:assert/strict";
import { existsSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { ORPHAN_GRACE_MS, Root } from "../../src/root/root.ts";
import { writeBlob } from "../../src/store/blobs.ts";
import { blobsNamed, dbBlobs } from "../../src/store/db_blobs.ts";
import { removeDir, tempDir } from "../support/helpers.ts";
import { eachMigratedDb } from "../support/migrated_db.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const HOUR_AGO = () => new Date(Date.now() - 3600_000);

describe("orphan blobs in raw_data/", () => {
  let dir: string;
  let root: Root;
  beforeEach(async () => {
    dir = tempDir();
    root = await Root.open(dir);
  });
  afterEach(async () => {
    await root.close();
    removeDir(dir);
  });

  /** Blobs of every kind a row names, an orphan, one in flight and a foreign file; all but the in-flight one old. */
  async function lay(): Promise<{ kept: string[]; orphan: string; inFlight: string; foreign: string }> {
    const raw = root.paths.rawData;
    await root.memory.save({ type: "note", title: "long", content: "x".repeat(20_000), keywords: [] });
    const rows = await root.db.execute("SELECT raw_ref FROM memories WHERE raw_ref IS NOT NULL");
    const memoryRef = String(rows.rows[0]!.raw_ref);
    const artifact = writeBlob(raw, "a", enc("artifact"));
    const attachment = writeBlob(raw, "a", enc("attachment"));
    const context = writeBlob(raw, "c", enc("context"));
    const at = new Date().toISOString();
    await root.db.execute({
      sql: `INSERT INTO artifacts(task_id, name, version, kind, supersedes, run_seq, ref, size, sha256, note, created_at) VALUES ('t', 'a', 1, 'full', '[]', NULL, ?, ?, ?, '', ?)`,
      args: [artifact.ref, artifact.size, artifact.sha256, at],
    });
    await root.db.execute({
      sql: `INSERT INTO artifact_attachments(task_id, name, version, attachment, status, ref, size, sha256, error) VALUES ('t', 'a', 1, 'f', 'ok', ?, ?, ?, NULL)`,
      args: [attachment.ref, attachment.size, attachment.sha256],
    });
    await root.db.execute({
      sql: `INSERT INTO contexts(run_seq, task_id, label, source, path, size, sha256, created_at) VALUES (NULL, 't', 'c', NULL, ?, ?, ?, ?)`,
      args: [context.ref, context.size, context.sha256, at],
    });
    const orphan = writeBlob(raw, "m", enc("orphan")).ref;
    const inFlight = writeBlob(raw, "m", enc("in flight")).ref;
    const foreign = "raw_data/notes.txt";
    writeFileSync(join(dir, foreign), "not a blob");
    const kept = [memoryRef, artifact.ref, attachment.ref, context.ref];
    for (const ref of [...kept, orphan, foreign]) utimesSync(join(dir, ref), HOUR_AGO(), HOUR_AGO());
    return { kept, orphan, inFlight, foreign };
  }

  for (const batch of [64, 1]) {
    test(`removes a true orphan and keeps every referenced blob, an in-flight one and a foreign file (steps of ${batch})`, async () => {
      const b = await lay();
      const removed = await root.collectOrphanBlobs(ORPHAN_GRACE_MS, { batch, afterMs: 0 });
      assert.deepEqual(removed, [b.orphan.slice("raw_data/".length)]);
      assert.equal(existsSync(join(dir, b.orphan)), false);
      for (const ref of [...b.kept, b.inFlight, b.foreign]) assert.ok(existsSync(join(dir, ref)), `${ref} kept`);
      assert.deepEqual([...(await blobsNamed(root.db, [...b.kept, b.orphan, b.inFlight]))].sort(), [...b.kept].sort());
    });
  }

  test("runs off the request path: held between its steps, a gate check is answered and a save commits", async () => {
    const b = await lay();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let steps = 0;
    let reachedHold!: () => void;
    const held = new Promise<void>((r) => (reachedHold = r));
    const collecting = root.collectOrphanBlobs(ORPHAN_GRACE_MS, {
      batch: 1,
      step: async () => {
        if (steps++ === 1) {
          reachedHold();
          await released;
        }
      },
    });
    await held; // one step done, the next one waiting
    // a request while the collection is held: answered (the gate refuses: no task yet), and a write commits
    await assert.rejects(root.contract.requireWritable("edit src/a.ts"), (e: Error) => /task/i.test(e.message));
    const saved = await root.memory.save({ type: "note", title: "during", content: "written while the collection waits", keywords: [] });
    assert.ok(saved.created);
    release();
    const removed = await collecting;
    assert.deepEqual(removed, [b.orphan.slice("raw_data/".length)]);
    for (const ref of [...b.kept, b.inFlight]) assert.ok(existsSync(join(dir, ref)), `${ref} kept`);
  });

  test("a dead writer's temp file in raw_data/ is gone once a root is open (listed beside the database's opening); a live writer's stays", async () => {
    const dead = join(root.paths.rawData, ".m-0123456789abcdef-01234567.txt.999999999.abcd.tmp");
    const live = join(root.paths.rawData, `.m-0123456789abcdef-01234567.txt.${process.pid}.abcd.tmp`);
    for (const options of [{}, { searchInWorker: false }]) {
      await root.close();
      writeFileSync(dead, "partial");
      writeFileSync(live, "partial");
      root = await Root.open(dir, options);
      assert.equal(existsSync(dead), false, "removed before the open resolves");
      assert.ok(existsSync(live), "a live writer's temp file is kept");
    }
  });

  test("a closed root collects nothing", async () => {
    const b = await lay();
    const collecting = root.collectOrphanBlobs(ORPHAN_GRACE_MS, { batch: 1 });
    await root.close();
    assert.deepEqual(await collecting, []);
    assert.ok(existsSync(join(dir, b.orphan)));
  });
});

describe("orphan blobs in the database (a root on a libSQL server)", () => {
  const t = eachMigratedDb();

  test("removes an old unnamed blob row, keeps a named one and one in flight, in steps of one", async () => {
    const blobs = dbBlobs(t.db, "test");
    const named = await blobs.put("m", enc("named body"));
    const orphan = await blobs.put("m", enc("orphan body"));
    const inFlight = await blobs.put("m", enc("in flight"));
    const old = Date.now() - 3600_000;
    await t.db.execute({ sql: "UPDATE blobs SET created_ms = ? WHERE ref IN (?, ?)", args: [old, named.ref, orphan.ref] });
    await t.db.execute({
      sql: `INSERT INTO memories(type, title, content, keywords, raw_ref, sha256, size, created_at) VALUES ('note', 't', 'c', '[]', ?, ?, ?, ?)`,
      args: [named.ref, named.sha256, named.size, new Date().toISOString()],
    });
    const removed = await blobs.collectOrphans((refs) => blobsNamed(t.db, refs), ORPHAN_GRACE_MS, { batch: 1 });
    assert.deepEqual(removed, [orphan.ref.slice("raw_data/".length)]);
    const left = (await t.db.values("SELECT ref FROM blobs ORDER BY ref")).map((r) => String(r[0]));
    assert.deepEqual(left, [named.ref, inFlight.ref].sort());
  });
});
