/**
 * The memory search itself: FTS5 over the CJK-aware index, kept in slices of consecutive memory
 * numbers (slices.ts), ranked by bm25 (title weighs most, then keywords, then body), paginated
 * with an opaque cursor. Results come in two parts:
 *
 * 1. the ranked window: the `SEARCH_WINDOW` newest matching records, ranked by bm25 with the term
 *    statistics of the slice each record is in (FTS5 walks a term's rowids newest first and stops
 *    at the window; no query counts every match of a common term across the whole memory);
 * 2. after the window, every older match, newest first (a cursor that remembers where it was).
 *
 * So paging on finds every match (recall is not bounded by the window); a strong match older than
 * the window (the 200 newest matches) is found on a later page, not ranked among the first ones.
 * Only the page's rows are joined to their records. Runs wherever it is given a database: in the
 * memory Worker for the server, in-process where no Worker is wanted.
 */
import { LIMITS } from "../core/limits.ts";
import type { MemoryHit, SearchOptions, SearchPage } from "../core/ports.ts";
import type { Database } from "../db/database.ts";
import { buildMatchQuery, kindToken, makeSnippet, SEGMENTATION, SEGMENTATION_KEY, splitQuery } from "./segment.ts";
import { CURRENT } from "./forget.ts";
import { LIST_SLICES_SQL, SLICE_SIZE_KEY, sliceSizeOf, slicesOf, sliceStart, sliceTable } from "./slices.ts";

/** How many of the newest matching records a search ranks before it lists older ones by age. */
export const SEARCH_WINDOW = 200;

/** bm25 weights per index column: title, body, keywords, chars (one-character queries), kind. */
const WEIGHTS = "5.0, 1.0, 3.0, 1.0, 0.0";

const META_SQL = "SELECT key, value FROM root_meta WHERE key IN (?, ?)";

import { memoryId, parseMemoryId } from "./memory_id.ts";

export { memoryId, parseMemoryId };

/** Where a page starts: at an offset into the ranked window, or below a memory number (older matches). */
export type Cursor = { offset: number } | { below: number };

export function encodeCursor(c: Cursor): string {
  return "offset" in c ? "o" + c.offset.toString(36) : "r" + c.below.toString(36);
}

/** The cursor a `next_cursor` stands for; the first page when none is given; null when it is not one. */
export function decodeCursor(cursor: string | undefined): Cursor | null {
  if (cursor === undefined || cursor === "") return { offset: 0 };
  const m = CURSOR.exec(cursor);
  if (!m) return null;
  const n = parseInt(m[2]!, 36);
  return m[1] === "o" ? { offset: n } : { below: n };
}

export const CURSOR = /^([or])([0-9a-z]{1,11})$/;

export function queryTerms(query: string | readonly string[]): string[] {
  return typeof query === "string" ? splitQuery(query) : query.map((t) => t.trim()).filter(Boolean);
}

export const HIT_COLUMNS = "m.seq, m.type, m.title, m.content, m.task_id, m.created_at";

export function toHit(r: Record<string, unknown>, terms: readonly string[], score: number): MemoryHit {
  return {
    id: memoryId(Number(r.seq)),
    type: String(r.type),
    title: String(r.title),
    snippet: makeSnippet(String(r.content), terms),
    score,
    task_id: r.task_id === null ? null : String(r.task_id),
    created_at: String(r.created_at),
  };
}

interface Ranked {
  rowid: number;
  rank: number;
}

/** What every search reads before its query: root_meta's slice size and segmentation, and the slices (newest first). */
interface Layout {
  dv: number | null;
  meta: Record<string, unknown>[];
  slices: number[];
}

/** Per local database, its layout as of a data version (it changes only with a commit, which moves the version). */
const LAYOUTS = new WeakMap<Database, Layout>();

/**
 * The layout, read again only when something committed since it was last read: on a local file
 * the WAL-index header says so (one `pread`), read before the rows, so a commit in between costs
 * a read, never a stale layout. A server's connection reads it every time (its data version is
 * one connection's of many).
 */
async function layoutOf(db: Database): Promise<Layout> {
  const dv = db.url.startsWith("file:") ? await db.dataVersion() : null;
  const known = dv === null ? undefined : LAYOUTS.get(db);
  if (known && known.dv === dv) return known;
  const meta = (await db.execute({ sql: META_SQL, args: [SLICE_SIZE_KEY, SEGMENTATION_KEY] })).rows;
  const layout = { dv, meta, slices: slicesOf((await db.execute(LIST_SLICES_SQL)).rows) };
  if (dv !== null) LAYOUTS.set(db, layout);
  return layout;
}

/**
 * Searches memory. A term that is a memory id (`S_0042`) also finds that record directly, first
 * on the first page. Scores are bm25 negated: higher is better.
 */
export async function searchMemories(
  db: Database,
  query: string | readonly string[],
  options: SearchOptions = {},
  window = SEARCH_WINDOW,
): Promise<SearchPage> {
  const terms = queryTerms(query);
  const limit = Math.min(Math.max(1, options.limit ?? 10), LIMITS.search_limit);
  const cursor = decodeCursor(options.cursor);
  if (cursor === null) throw new Error(`cursor ${JSON.stringify(options.cursor)} is not a next_cursor value from an earlier search; start again without one`);
  // the slice size, whether the index holds Korean word tokens (segment.ts), and the slices
  const { meta, slices } = await layoutOf(db);
  const match = buildMatchQuery(terms, meta.some((r) => r.key === SEGMENTATION_KEY && r.value === SEGMENTATION));
  const idSeqs = [...new Set(terms.map((t) => parseMemoryId(t.toUpperCase())).filter((n): n is number => n !== null))];
  const exact: MemoryHit[] = [];
  if (idSeqs.length && "offset" in cursor && cursor.offset === 0) {
    const typeFilter = options.type ? " AND m.type = ?" : "";
    const rs = await db.execute({
      sql: `SELECT ${HIT_COLUMNS} FROM memories m WHERE m.seq IN (${idSeqs.map(() => "?").join(",")})${typeFilter} AND ${CURRENT} ORDER BY m.seq DESC`,
      args: [...idSeqs, ...(options.type ? [options.type] : [])],
    });
    for (const r of rs.rows.slice(0, limit)) exact.push(toHit(r, terms, 0));
  }
  if (!match) return { hits: exact, next_cursor: null };
  const filtered = options.type ? `({kind} : ${kindToken(options.type)}) AND (${match})` : match;
  const size = sliceSizeOf(meta.filter((r) => r.key === SLICE_SIZE_KEY));
  const shown = new Set(idSeqs);
  const want = limit - exact.length;

  /** Up to `count` matches below memory number `below` (all when null), newest first, across slices. */
  const newest = async (below: number | null, count: number): Promise<Ranked[]> => {
    const out: Ranked[] = [];
    for (const slice of slices) {
      if (out.length >= count) break;
      if (below !== null && sliceStart(slice, size) >= below) continue;
      const t = sliceTable(slice);
      const rows = await db.values({
        sql: `SELECT rowid, bm25(${t}, ${WEIGHTS}) FROM ${t} WHERE ${t} MATCH ?${below !== null ? " AND rowid < ?" : ""} ORDER BY rowid DESC LIMIT ?`,
        args: below !== null ? [filtered, below, count - out.length] : [filtered, count - out.length],
      });
      for (const r of rows) out.push({ rowid: Number(r[0]), rank: Number(r[1]) });
    }
    return out;
  };
  /** After the window: older matches, newest first, not already shown; one more than asked, to tell whether more follow. */
  const older = async (below: number, count: number): Promise<Ranked[]> => (await newest(below, count + 1 + shown.size)).filter((r) => !shown.has(r.rowid)).slice(0, count + 1);

  let page: Ranked[];
  let next: Cursor | null = null;
  if ("offset" in cursor) {
    const ranked = await newest(null, window);
    const full = ranked.length >= window;
    const oldest = ranked.reduce((m, r) => Math.min(m, r.rowid), Number.MAX_SAFE_INTEGER);
    const order = ranked.filter((r) => !shown.has(r.rowid)).sort((a, b) => a.rank - b.rank || b.rowid - a.rowid);
    page = order.slice(cursor.offset, cursor.offset + want);
    if (order.length > cursor.offset + want) next = { offset: cursor.offset + want };
    else if (full) {
      // the window ends on this page: fill it with older matches, and go on below them
      const room = want - page.length;
      const more = await older(oldest, room);
      const added = more.slice(0, room);
      page.push(...added);
      if (more.length > room) next = { below: added.length ? added.at(-1)!.rowid : oldest };
    }
  } else {
    const more = await older(cursor.below, want);
    page = more.slice(0, want);
    if (more.length > want) next = { below: page.at(-1)!.rowid };
  }
  const rows = page.length
    ? (await db.execute({ sql: `SELECT ${HIT_COLUMNS} FROM memories m WHERE m.seq IN (${page.map(() => "?").join(",")})`, args: page.map((p) => p.rowid) })).rows
    : [];
  const bySeq = new Map(rows.map((r) => [Number(r.seq), r]));
  const hits = page.filter((p) => bySeq.has(p.rowid)).map((p) => toHit(bySeq.get(p.rowid)!, terms, -p.rank));
  const top = hits.reduce((m, h) => Math.max(m, h.score), 0);
  for (const h of exact) h.score = top + 1;
  return { hits: [...exact, ...hits], next_cursor: next ? encodeCursor(next) : null };
}
