/** A real libSQL database, migrated to the current schema, in a temp directory of its own for each test. */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach } from "node:test";
import { Database } from "../../src/db/database.ts";
import { migrate } from "../../src/db/schema.ts";
import { removeDir, tempDir } from "./helpers.ts";

/** Call inside a describe: each test gets `dir` and its `db` (writes on the calling thread), closed and removed after it. */
export function eachMigratedDb(): { readonly dir: string; readonly db: Database } {
  const current = { dir: "", db: null as unknown as Database };
  beforeEach(async () => {
    current.dir = tempDir();
    current.db = await Database.open(pathToFileURL(join(current.dir, "memory.db")).href, { writes: "inline" });
    await migrate(current.db);
  });
  afterEach(async () => {
    await current.db.close();
    removeDir(current.dir);
  });
  return current;
}
