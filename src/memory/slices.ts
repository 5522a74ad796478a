/**
 * The memory index in slices: one FTS5 table per `slice size` consecutive memory numbers
 * (`memory_slice_0` holds S_0001..S_50000 by default, `memory_slice_1` the next 50,000, ...),
 * made when the first memory of a slice is saved. Why: bm25 counts, for every query term, the
 * documents that hold it across the whole table it runs on, before it ranks anything; at 1M
 * memories that count alone took 10-100 ms per common term. Within a slice it is bounded by the
 * slice's size, whatever the total. The slice size is fixed per database (root_meta
 * `memory_slice_size`, set when the database is made), since it decides where each memory is.
 */
import { DEFAULT_SLICE_SIZE, SLICE_SIZE_KEY } from "../db/schema.ts";
export { DEFAULT_SLICE_SIZE, SLICE_SIZE_KEY } from "../db/schema.ts";

/** The slice a memory number belongs to. */
export function sliceOf(seq: number, size: number): number {
  return Math.floor((seq - 1) / size);
}

/** The first memory number of a slice. */
export function sliceStart(slice: number, size: number): number {
  return slice * size + 1;
}

export function sliceTable(slice: number): string {
  return `memory_slice_${slice}`;
}

/** Makes a slice's table if it is not there (inside the transaction that first writes to it). */
export function createSliceSql(slice: number): string {
  return `CREATE VIRTUAL TABLE IF NOT EXISTS ${sliceTable(slice)} USING fts5(
    title, body, keywords, chars, kind,
    content='', contentless_delete=1,
    tokenize='porter unicode61 remove_diacritics 2'
  )`;
}

/** Indexes one memory (its number, then indexColumns' five values) in its slice's table. */
export function insertSliceSql(slice: number): string {
  return `INSERT INTO ${sliceTable(slice)}(rowid, title, body, keywords, chars, kind) VALUES (?, ?, ?, ?, ?, ?)`;
}

/** Lists the slices that exist (their FTS5 tables, not the tables FTS5 keeps behind them). */
export const LIST_SLICES_SQL =
  "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'memory_slice_[0-9]*' AND name NOT GLOB 'memory_slice_*_*' AND sql LIKE 'CREATE VIRTUAL TABLE%'";

export const SLICE_SIZE_SQL = `SELECT value FROM root_meta WHERE key = '${SLICE_SIZE_KEY}'`;

/** Slice numbers from LIST_SLICES_SQL's rows, newest first. */
export function slicesOf(rows: readonly Record<string, unknown>[]): number[] {
  return rows.map((r) => Number(String(r.name).slice("memory_slice_".length))).filter(Number.isSafeInteger).sort((a, b) => b - a);
}

/** The slice size from SLICE_SIZE_SQL's rows (the default where the database predates it). */
export function sliceSizeOf(rows: readonly Record<string, unknown>[]): number {
  const n = Number(rows[0]?.value);
  return Number.isSafeInteger(n) && n > 0 ? n : DEFAULT_SLICE_SIZE;
}

/** The statements that index one memory: make its slice's table if needed, then insert. */
export function indexSteps(seq: number, size: number, columns: readonly string[]): { sql: string; args: (string | number)[] }[] {
  const slice = sliceOf(seq, size);
  return [
    { sql: createSliceSql(slice), args: [] },
    { sql: insertSliceSql(slice), args: [seq, ...columns] },
  ];
}
