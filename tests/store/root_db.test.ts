/**
 * The root's own queries (src/store/root_db.ts) on a real database: the first project claims it,
 * the readiness probe, folding the WAL.
 */
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { claimProject, foldWal, probeRead } from "../../src/store/root_db.ts";
import { eachMigratedDb } from "../support/migrated_db.ts";

describe("a root's own queries", () => {
  const t = eachMigratedDb();

  test("claimProject: the first project named holds the database; a later one is told which", async () => {
    assert.equal(await claimProject(t.db, "alpha"), "alpha");
    assert.equal(await claimProject(t.db, "beta"), "alpha");
    assert.equal(await claimProject(t.db, "alpha"), "alpha");
  });

  test("the probe reads both connections of a new database", async () => {
    await probeRead(t.db);
  });

  test("foldWal leaves the WAL empty", async () => {
    await claimProject(t.db, "alpha");
    await foldWal(t.db);
    assert.equal(statSync(join(t.dir, "memory.db-wal"), { throwIfNoEntry: false })?.size ?? 0, 0);
  });
});
