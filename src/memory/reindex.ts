/**
 * Builds the memory index (its slices, src/memory/slices.ts) from the memories a root already
 * holds (a root made before the index had its current form): in batches, each in its own write
 * transaction that reads how far the index got and moves that mark on, so an interrupted rebuild
 * resumes where it stopped and two processes opening the root at once never index a record twice.
 * Long bodies are read from their blobs whole (checked against their digest). When every record is
 * in, the old index is dropped.
 *
 * Then, once, the records indexed with an older segmentation get segment.ts's current one (a
 * build from the start is already in it). root_meta `memory_segmentation` holds `2@<seq>`, how far
 * that pass got, while it runs, and searches use what segmentation 2 adds only once it reads `2`.
 * Only records with Hangul in them are indexed differently (their Korean word tokens), so only
 * theirs are deleted from their slice and inserted again, a batch per write transaction; any other
 * record is only read (where a third or more hold Hangul, the index is built anew instead). A record not in its slice (its index row still to come from the save that
 * made it) is left to that save.
 */
import type { BlobStore } from "../store/blobs.ts";
import type { Database } from "../db/database.ts";
import { indexColumns, SEGMENTATION, SEGMENTATION_KEY } from "./segment.ts";
import { indexSteps, LIST_SLICES_SQL, SLICE_SIZE_SQL, sliceOf, sliceSizeOf, slicesOf, sliceTable } from "./slices.ts";

const BATCH = 500;
/** Records read per transaction of the segmentation pass (most of them only read). */
const SEGMENT_BATCH = 2000;
const DONE = "done";
const HANGUL = /\p{Script=Hangul}/u;
const HANGUL_SHARE_SQL = "SELECT count(*) AS total, count(*) FILTER (WHERE title GLOB '*[가-힣]*' OR content GLOB '*[가-힣]*' OR keywords GLOB '*[가-힣]*') AS hangul FROM memories";
const SET_META_SQL = "INSERT INTO root_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value";

export async function rebuildMemoryIndex(db: Database, blobs: BlobStore): Promise<number> {
  let indexed = 0;
  for (;;) {
    const finished = await db.write(async (tx) => {
      const meta = (await tx.execute({ sql: "SELECT key, value FROM root_meta WHERE key IN ('memory_index_from', ?)", args: [SEGMENTATION_KEY] })).rows;
      const mark = meta.find((r) => r.key === "memory_index_from")?.value;
      if (mark === undefined) return true;
      if (mark === DONE) {
        const segmented = meta.find((r) => r.key === SEGMENTATION_KEY)?.value;
        return segmented === SEGMENTATION || (await resegment(tx, blobs, segmented === undefined ? null : String(segmented)));
      }
      const size = sliceSizeOf((await tx.execute(SLICE_SIZE_SQL)).rows);
      const from = Number(mark);
      // a build from the start indexes every record with the current segmentation: no pass after it
      if (from === 0) await tx.execute({ sql: SET_META_SQL, args: [SEGMENTATION_KEY, SEGMENTATION] });
      const rows = (await tx.execute({ sql: "SELECT seq, type, title, content, keywords, raw_ref, sha256 FROM memories WHERE seq > ? ORDER BY seq LIMIT ?", args: [from, BATCH] })).rows;
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

type Tx = Parameters<Parameters<Database["write"]>[0]>[0];

/** The body a record is indexed with: inline, or read whole from its blob. */
async function bodyOf(r: Record<string, unknown>, blobs: BlobStore): Promise<string> {
  return r.raw_ref === null ? String(r.content) : new TextDecoder().decode(await blobs.get(String(r.raw_ref), String(r.sha256), `raw body of memory ${String(r.seq)}`));
}

/** One batch of the segmentation pass, from where `mark` (`2@<seq>`, or any older value: the start) says; true when it is done. */
async function resegment(tx: Tx, blobs: BlobStore, mark: string | null): Promise<boolean> {
  const at = mark?.startsWith(`${SEGMENTATION}@`) ? Number(mark.slice(SEGMENTATION.length + 1)) : 0;
  const from = Number.isSafeInteger(at) ? at : 0;
  const slices = new Set(slicesOf((await tx.execute(LIST_SLICES_SQL)).rows));
  if (from === 0) {
    // where a third or more of the records hold Hangul, building the index anew is cheaper than deleting and inserting each
    const n = (await tx.execute(HANGUL_SHARE_SQL)).rows[0]!;
    if (Number(n.hangul) * 3 >= Number(n.total) && Number(n.total) > 0) {
      for (const slice of slices) await tx.execute(`DROP TABLE IF EXISTS ${sliceTable(slice)}`);
      await tx.execute("UPDATE root_meta SET value = '0' WHERE key = 'memory_index_from'");
      return false;
    }
  }
  const size = sliceSizeOf((await tx.execute(SLICE_SIZE_SQL)).rows);
  const rows = (await tx.execute({ sql: "SELECT seq, type, title, content, keywords, raw_ref, sha256 FROM memories WHERE seq > ? ORDER BY seq LIMIT ?", args: [from, SEGMENT_BATCH] })).rows;
  for (const r of rows) {
    const seq = Number(r.seq);
    const table = sliceTable(sliceOf(seq, size));
    if (!slices.has(sliceOf(seq, size))) continue;
    const keywords = JSON.parse(String(r.keywords)) as string[];
    if (!HANGUL.test(String(r.title)) && !HANGUL.test(keywords.join(" ")) && r.raw_ref === null && !HANGUL.test(String(r.content))) continue;
    const content = await bodyOf(r, blobs);
    if (!HANGUL.test(String(r.title)) && !HANGUL.test(keywords.join(" ")) && !HANGUL.test(content)) continue;
    if (!(await tx.execute({ sql: `SELECT 1 FROM ${table} WHERE rowid = ?`, args: [seq] })).rows.length) continue;
    await tx.execute({ sql: `DELETE FROM ${table} WHERE rowid = ?`, args: [seq] });
    const columns = indexColumns({ title: String(r.title), content, keywords, type: String(r.type) });
    for (const step of indexSteps(seq, size, columns)) await tx.execute(step);
  }
  const done = rows.length < SEGMENT_BATCH;
  const value = done ? SEGMENTATION : `${SEGMENTATION}@${String(rows.at(-1)!.seq)}`;
  await tx.execute({ sql: SET_META_SQL, args: [SEGMENTATION_KEY, value] });
  return done;
}
