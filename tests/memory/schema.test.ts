import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { Database } from "../../src/db/database.ts";
import { MIGRATIONS, migrate, schemaVersion } from "../../src/db/schema.ts";
import { Root } from "../../src/root/root.ts";
import { holdWriteLock, REPO, removeDir, run, scriptArgv, tempDir } from "../support/helpers.ts";

describe("memory.db schema and settings", () => {
  let dir = "";
  let root: Root;
  before(async () => {
    dir = tempDir();
    root = await Root.open(dir, { searchInWorker: false });
  });
  after(async () => {
    await root.close();
    removeDir(dir);
  });

  test("it runs in WAL mode with synchronous=FULL, on the inline and on the Worker's writing connection", async () => {
    assert.equal((await root.db.execute("PRAGMA journal_mode")).rows[0]![0], "wal");
    assert.equal(Number((await root.db.execute("PRAGMA synchronous")).rows[0]![0]), 2);
    const served = await Root.open(dir, { searchInWorker: true });
    try {
      assert.equal(Number((await served.db.execute("PRAGMA synchronous")).rows[0]![0]), 2, "the writer Worker's connection");
    } finally {
      await served.close();
    }
  });

  test("a write waits for another process's lock instead of failing busy", async () => {
    const release = await holdWriteLock(join(dir, "memory.db"));
    const started = Date.now();
    const save = root.memory.save({ type: "note", title: "waits", content: "for the lock", keywords: [] });
    const released = new Promise((r) => setTimeout(r, 300)).then(release); // the holder goes after 300 ms
    const saved = await save;
    await released;
    assert.ok(saved.created);
    assert.ok(Date.now() - started >= 250, "it waited for the holder to go");
  });

  test("the schema is created by numbered migrations, each recorded once", async () => {
    const rows = (await root.db.execute("SELECT version, name FROM schema_migrations ORDER BY version")).rows;
    assert.deepEqual(rows.map((r) => Number(r.version)), MIGRATIONS.map((m) => m.version));
    assert.equal(await migrate(root.db), 0, "a second run applies nothing");
    assert.equal(await schemaVersion(root.db), MIGRATIONS.at(-1)!.version);
  });

  test("two processes migrating a new database at once apply each migration once", async () => {
    const d = tempDir();
    try {
      const fixture = join(REPO, "tests", "fixtures", "migrate.ts");
      const runs = await Promise.all([run(scriptArgv(fixture, [d])), run(scriptArgv(fixture, [d]))]);
      for (const r of runs) assert.equal(r.code, 0, r.stderr);
      assert.equal(runs.reduce((n, r) => n + Number(r.stdout.trim()), 0), MIGRATIONS.length);
      const db = await Database.open(pathToFileURL(join(d, "memory.db")).href);
      const n = (await db.execute("SELECT COUNT(*) AS n FROM schema_migrations")).rows[0]!.n;
      await db.close();
      assert.equal(Number(n), MIGRATIONS.length);
    } finally {
      removeDir(d);
    }
  });

  test("a database from a newer longrun is refused on open", async () => {
    const d = tempDir();
    const first = await Root.open(d, { searchInWorker: false });
    await first.db.execute("INSERT INTO schema_migrations(version, name, applied_at) VALUES (999, 'future', 'x')");
    await first.close();
    try {
      await assert.rejects(Root.open(d, { searchInWorker: false }), /newer than this longrun knows/);
    } finally {
      removeDir(d);
    }
  });
});
