/**
 * Builds the memory index (its slices, src/memory/slices.ts) from the memories a root already
 * holds (a root made before the index had its current form): in batches, each in its own write
 * transaction that reads how far the index got and moves that mark on, so an interrupted rebuild
 * resumes where it stopped and two processes opening the root at once never index a record twice.
 * Long bodies are read from their blobs whole (checked against their digest). When every record is
 * in, the old index is dropped.
 */
import type { BlobStore } from "../store/blobs.ts";
import type { Database } from "../db/database.ts";
import { indexColumns } from "./segment.ts";
import { indexSteps, SLICE_SIZE_SQL, sliceSizeOf } from "./slices.ts";

const BATCH = 500;
const DONE = "done";

export async function rebuildMemoryIndex(db: Database, blobs: BlobStore): Promise<number> {
  let indexed = 0;
  for (;;) {
    const finished = await db.write(async (tx) => {
      const mark = (await tx.execute("SELECT value FROM root_meta WHERE key = 'memory_index_from'")).rows[0]?.value;
      if (mark === undefined || mark === DONE) return true;
      const size = sliceSizeOf((await tx.execute(SLICE_SIZE_SQL)).rows);
      const from = Number(mark);
      const rows = (await tx.execute({ sql: "SELECT seq, type, title, content, keywords, raw_ref, sha256 FROM memories WHERE seq > ? ORDER BY seq LIMIT ?", args: [from, BATCH] })).rows;
      for (const r of rows) {
        const content = r.raw_ref === null ? String(r.content) : new TextDecoder().decode(await blobs.get(String(r.raw_ref), String(r.sha256), `raw body of memory ${String(r.seq)}`));
        const columns = indexColumns({ title: String(r.title), content, keywords: JSON.parse(String(r.keywords)) as string[], type: String(r.type) });
        for (const step of indexSteps(Number(r.seq), size, columns)) await tx.execute(step);
      }
      indexed += rows.length;
      if (rows.length < BATCH) {
        await tx.execute("DROP TABLE IF EXISTS memories_fts");
        await tx.execute({ sql: "UPDATE root_meta SET value = ? WHERE key = 'memory_index_from'", args: [DONE] });
        return true;
      }
      await tx.execute({ sql: "UPDATE root_meta SET value = ? WHERE key = 'memory_index_from'", args: [String(rows.at(-1)!.seq)] });
      return false;
    });
    if (finished) return indexed;
  }
}
