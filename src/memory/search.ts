/**
 * The memory search itself: FTS5 over the CJK-aware index (`memory_index`), ranked by bm25
 * (title weighs most, then keywords, then body), paginated with an opaque cursor. Ranking happens
 * inside the index, over a bounded window: the `SEARCH_WINDOW` newest matching records (FTS5
 * walks a term's rowids newest first and stops there); only the page's rows are then joined to
 * their records. A query that matches more records than the window ranks the newest of them: an
 * older match beyond the window is not returned (README: limits). Runs wherever it is given a
 * database: in the memory Worker for the server, in-process where no Worker is wanted.
 */
import { LIMITS } from "../core/limits.ts";
import type { MemoryHit, SearchOptions, SearchPage } from "../core/ports.ts";
import type { Database } from "./db.ts";
import { buildMatchQuery, kindToken, makeSnippet, splitQuery } from "./segment.ts";

/** How many of the newest matching records a search ranks. */
export const SEARCH_WINDOW = 20_000;

export function memoryId(seq: number): string {
  return "S_" + String(seq).padStart(4, "0");
}

export function parseMemoryId(id: string): number | null {
  const m = /^S_(\d{1,15})$/.exec(id);
  return m ? Number(m[1]) : null;
}

export function encodeCursor(offset: number): string {
  return "o" + offset.toString(36);
}

export function decodeCursor(cursor: string | undefined): number | null {
  if (cursor === undefined || cursor === "") return 0;
  const m = /^o([0-9a-z]{1,10})$/.exec(cursor);
  return m ? parseInt(m[1]!, 36) : null;
}

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

/**
 * Searches memory. A term that is a memory id (`S_0042`) also finds that record directly, first
 * on the first page. Scores are bm25 negated: higher is better.
 */
export async function searchMemories(db: Database, query: string | readonly string[], options: SearchOptions = {}): Promise<SearchPage> {
  const terms = queryTerms(query);
  const match = buildMatchQuery(terms);
  const limit = Math.min(Math.max(1, options.limit ?? 10), LIMITS.search_limit);
  const offset = decodeCursor(options.cursor) ?? 0;
  const idSeqs = [...new Set(terms.map((t) => parseMemoryId(t.toUpperCase())).filter((n): n is number => n !== null))];
  const typeFilter = options.type ? " AND m.type = ?" : "";
  const typeArgs = options.type ? [options.type] : [];
  const exact: MemoryHit[] = [];
  if (idSeqs.length && offset === 0) {
    const rs = await db.execute({
      sql: `SELECT ${HIT_COLUMNS} FROM memories m WHERE m.seq IN (${idSeqs.map(() => "?").join(",")})${typeFilter} ORDER BY m.seq DESC`,
      args: [...idSeqs, ...typeArgs],
    });
    for (const r of rs.rows.slice(0, limit)) exact.push(toHit(r, terms, 0));
  }
  if (!match) return { hits: exact, next_cursor: null };
  const filtered = options.type ? `({kind} : ${kindToken(options.type)}) AND (${match})` : match;
  const exclude = idSeqs.length ? ` WHERE hits.rowid NOT IN (${idSeqs.map(() => "?").join(",")})` : "";
  const want = limit - exact.length;
  const rs = await db.execute({
    sql: `WITH hits AS (
            SELECT rowid, bm25(memory_index, 5.0, 1.0, 3.0, 1.0, 0.0) AS rank
            FROM memory_index WHERE memory_index MATCH ? ORDER BY rowid DESC LIMIT ?
          ), page AS (
            SELECT rowid, rank FROM hits${exclude} ORDER BY rank, rowid DESC LIMIT ? OFFSET ?
          )
          SELECT ${HIT_COLUMNS}, page.rank FROM page JOIN memories m ON m.seq = page.rowid ORDER BY page.rank, m.seq DESC`,
    args: [filtered, SEARCH_WINDOW, ...idSeqs, want + 1, offset],
  });
  const rows = rs.rows.slice(0, want);
  const hits = rows.map((r) => toHit(r, terms, -Number(r.rank)));
  const top = hits.reduce((m, h) => Math.max(m, h.score), 0);
  for (const h of exact) h.score = top + 1;
  return { hits: [...exact, ...hits], next_cursor: rs.rows.length > want ? encodeCursor(offset + want) : null };
}
