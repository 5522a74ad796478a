/**
 * The root's own queries (src/store/root_db.ts) on a real database: the first project claims it,
 * the blobs the rows name, the readiness probe, folding the WAL.
 */
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, test } from "node:test";
import { Database } from "../../src/db/database.ts";
import { migrate } from "../../src/db/schema.ts";
import { claimProject, foldWal, probeRead, referencedBlobs } from "../../src/store/root_db.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

describe("a root's own queries", () => {
  let dir: string;
  let db: Database;
  beforeEach(async () => {
    dir = tempDir();
    db = await Database.open(pathToFileURL(join(dir, "memory.db")).href, { writes: "inline" });
    await migrate(db);
  });
  afterEach(async () => {
    await db.close();
    removeDir(dir);
  });

  test("claimProject: the first project named holds the database; a later one is told which", async () => {
    assert.equal(await claimProject(db, "alpha"), "alpha");
    assert.equal(await claimProject(db, "beta"), "alpha");
    assert.equal(await claimProject(db, "alpha"), "alpha");
  });

  test("referencedBlobs is empty on a new database, and the probe reads both connections", async () => {
    assert.deepEqual([...(await referencedBlobs(db))], []);
    await probeRead(db);
  });

  test("foldWal leaves the WAL empty", async () => {
    await claimProject(db, "alpha");
    await foldWal(db);
    assert.equal(statSync(join(dir, "memory.db-wal"), { throwIfNoEntry: false })?.size ?? 0, 0);
  });
});
