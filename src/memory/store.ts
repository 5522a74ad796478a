/**
 * Project memory on libSQL: records with `S_0001`-style ids per root, long bodies under
 * `raw_data/` with generated names (the index keeps a reference and a sha256), a CJK-aware FTS5
 * index. Writes run here, awaited by the contract (I2's ordering depends on it); searches go to
 * a `Searcher` (the memory Worker in the server) so a slow search never holds up the main thread.
 */
import { LimitExceededError } from "../core/errors.ts";
import { INLINE_BODY_BYTES, LIMITS, PREVIEW_CHARS } from "../core/limits.ts";
import type {
  CrashPoint,
  MemoryHit,
  MemoryRecord,
  MemoryStore,
  NewMemory,
  SaveResult,
  SearchOptions,
  SearchPage,
} from "../core/ports.ts";
import { readBlob, removeBlob, sha256Hex, writeBlob } from "../store/blobs.ts";
import type { Database } from "./db.ts";
import { HIT_COLUMNS, memoryId, parseMemoryId, toHit } from "./search.ts";
import { segmentForIndex } from "./segment.ts";

export interface Searcher {
  search(query: string | readonly string[], options?: SearchOptions): Promise<SearchPage>;
  close(): Promise<void>;
}

export interface LibsqlMemoryOptions {
  db: Database;
  /** The root's `raw_data/` directory. */
  rawDir: string;
  searcher: Searcher;
  crash?: CrashPoint;
}

type Row = Record<string, unknown>;

export class LibsqlMemory implements MemoryStore {
  readonly #db: Database;
  readonly #rawDir: string;
  readonly #searcher: Searcher;
  readonly #crash: CrashPoint;

  constructor(options: LibsqlMemoryOptions) {
    this.#db = options.db;
    this.#rawDir = options.rawDir;
    this.#searcher = options.searcher;
    this.#crash = options.crash ?? (() => {});
  }

  search(query: string | readonly string[], options?: SearchOptions): Promise<SearchPage> {
    return this.#searcher.search(query, options);
  }

  async save(rec: NewMemory): Promise<SaveResult> {
    checkLength("title", rec.title, LIMITS.short_text_chars);
    checkLength("content", rec.content, LIMITS.memory_content_chars);
    if (rec.keywords.length > LIMITS.list_items) throw new LimitExceededError("keywords", LIMITS.list_items, rec.keywords.length, "items");
    if (rec.dedupe_key) {
      const existing = await this.#byDedupeKey(rec.dedupe_key);
      if (existing) return { record: existing, created: false };
    }
    const bytes = new TextEncoder().encode(rec.content);
    const sha256 = sha256Hex(bytes);
    const rawRef = bytes.length > INLINE_BODY_BYTES ? writeBlob(this.#rawDir, "m", bytes).ref : null;
    const createdAt = new Date().toISOString();
    const keywords = JSON.stringify(rec.keywords);
    try {
      const out = await this.#db.write(async (tx) => {
        if (rec.dedupe_key) {
          const rs = await tx.execute({ sql: "SELECT seq FROM memories WHERE dedupe_key = ?", args: [rec.dedupe_key] });
          if (rs.rows.length) return { seq: Number(rs.rows[0]!.seq), created: false };
        }
        const count = Number((await tx.execute("SELECT COUNT(*) AS n FROM memories")).rows[0]!.n);
        if (count >= LIMITS.memories_per_root) {
          throw new LimitExceededError("memories_per_root", LIMITS.memories_per_root, count + 1, "memories");
        }
        const ins = await tx.execute({
          sql: `INSERT INTO memories(type, title, content, keywords, task_id, dedupe_key, raw_ref, sha256, size, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
          args: [
            rec.type,
            rec.title,
            rawRef ? rec.content.slice(0, PREVIEW_CHARS) : rec.content,
            keywords,
            rec.task_id ?? null,
            rec.dedupe_key ?? null,
            rawRef,
            sha256,
            bytes.length,
            createdAt,
          ],
        });
        const seq = Number(ins.rows[0]!.seq);
        await tx.execute({
          sql: "INSERT INTO memories_fts(rowid, title, body, keywords) VALUES (?, ?, ?, ?)",
          args: [seq, segmentForIndex(rec.title), segmentForIndex(rec.content), segmentForIndex(rec.keywords.join(" "))],
        });
        this.#crash("memory.before_commit");
        return { seq, created: true };
      });
      this.#crash("memory.after_commit");
      if (!out.created && rawRef) removeBlob(this.#rawDir, rawRef);
      const record = await this.get(memoryId(out.seq));
      return { record: record!, created: out.created };
    } catch (e) {
      if (rawRef) removeBlob(this.#rawDir, rawRef);
      throw e;
    }
  }

  async #byDedupeKey(key: string): Promise<MemoryRecord | null> {
    const rs = await this.#db.execute({ sql: "SELECT * FROM memories WHERE dedupe_key = ?", args: [key] });
    return rs.rows[0] ? this.#toRecord(rs.rows[0]) : null;
  }

  async get(id: string): Promise<MemoryRecord | null> {
    const seq = parseMemoryId(id);
    if (seq === null) return null;
    const rs = await this.#db.execute({ sql: "SELECT * FROM memories WHERE seq = ?", args: [seq] });
    return rs.rows[0] ? this.#toRecord(rs.rows[0]) : null;
  }

  async recent(taskId: string, limit: number): Promise<MemoryHit[]> {
    const rs = await this.#db.execute({
      sql: `SELECT ${HIT_COLUMNS} FROM memories m WHERE m.task_id = ? ORDER BY m.seq DESC LIMIT ?`,
      args: [taskId, limit],
    });
    return rs.rows.map((r) => toHit(r, [], 0));
  }

  async stateRecords(limit: number): Promise<MemoryRecord[]> {
    const rs = await this.#db.execute({
      sql: `SELECT * FROM memories
            WHERE dedupe_key LIKE 'checkpoint:%' OR dedupe_key LIKE 'outcome:%'
            ORDER BY seq DESC LIMIT ?`,
      args: [limit],
    });
    return rs.rows.map((r) => this.#toRecord(r));
  }

  /** Reads a record's whole body: inline, or from raw_data/ checked against its sha256. */
  #toRecord(r: Row): MemoryRecord {
    const rawRef = r.raw_ref === null ? null : String(r.raw_ref);
    let content = String(r.content);
    if (rawRef) {
      content = new TextDecoder().decode(readBlob(this.#rawDir, rawRef, String(r.sha256), `raw body of ${memoryId(Number(r.seq))}`));
    }
    return {
      id: memoryId(Number(r.seq)),
      type: String(r.type),
      title: String(r.title),
      content,
      keywords: JSON.parse(String(r.keywords)) as string[],
      task_id: r.task_id === null ? null : String(r.task_id),
      created_at: String(r.created_at),
      raw_ref: rawRef,
      sha256: String(r.sha256),
      size: Number(r.size),
    };
  }
}

function checkLength(field: string, value: string, limit: number): void {
  if (value.length > limit) throw new LimitExceededError(field, limit, value.length, "characters");
}
