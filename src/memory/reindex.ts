/**
 * Builds the memory index (its slices, src/memory/slices.ts) from the memories a root already
 * holds (a root made before the index had its current form): in batches, each in its own write
 * transaction that reads how far the index got and moves that mark on, so an interrupted rebuild
 * resumes where it stopped and two processes opening the root at once never index a record twice.
 * Long bodies are read from their blobs whole (checked against their digest). When every record is
 * in, the old index is dropped.
 *
 * A build from the start indexes with segment.ts's current segmentation and records it (root_meta
 * `memory_segmentation`); searches use what segmentation 2 adds (Korean word tokens) only where it
 * is recorded. A root indexed before it is not re-indexed on open (at a million records that took
 * minutes, with the root unavailable): it keeps searching Hangul by the phrase of its bigrams,
 * which finds the same records, old and new.
 */
import type { BlobStore } from "../store/blobs.ts";
import type { Database } from "../db/database.ts";
import { indexColumns, SEGMENTATION, SEGMENTATION_KEY } from "./segment.ts";
import { CURRENT } from "./forget.ts";
import { indexSteps, SLICE_SIZE_SQL, sliceSizeOf } from "./slices.ts";

const BATCH = 500;
const DONE = "done";
const SET_META_SQL = "INSERT INTO root_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value";

export async function rebuildMemoryIndex(db: Database, blobs: BlobStore): Promise<number> {
  let indexed = 0;
  for (;;) {
    const finished = await db.write(async (tx) => {
      const meta = (await tx.execute({ sql: "SELECT key, value FROM root_meta WHERE key IN ('memory_index_from', ?)", args: [SEGMENTATION_KEY] })).rows;
      const mark = meta.find((r) => r.key === "memory_index_from")?.value;
      if (mark === undefined) return true;
      if (mark === DONE) return true;
      const size = sliceSizeOf((await tx.execute(SLICE_SIZE_SQL)).rows);
      const from = Number(mark);
      // a build from the start indexes every record with the current segmentation: no pass after it
      if (from === 0) await tx.execute({ sql: SET_META_SQL, args: [SEGMENTATION_KEY, SEGMENTATION] });
      const rows = (await tx.execute({ sql: `SELECT seq, type, title, content, keywords, raw_ref, sha256 FROM memories m WHERE seq > ? AND ${CURRENT} ORDER BY seq LIMIT ?`, args: [from, BATCH] })).rows;
      for (const r of rows) {
        const content = await bodyOf(r, blobs);
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

/** The body a record is indexed with: inline, or read whole from its blob. */
async function bodyOf(r: Record<string, unknown>, blobs: BlobStore): Promise<string> {
  return r.raw_ref === null ? String(r.content) : new TextDecoder().decode(await blobs.get(String(r.raw_ref), String(r.sha256), `raw body of memory ${String(r.seq)}`));
}
