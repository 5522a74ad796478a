/**
 * Project memory on libSQL: records with `S_0001`-style ids per root, long bodies under
 * `raw_data/` with generated names (the index keeps a reference and a sha256), a CJK-aware FTS5
 * index. Writes run here, awaited by the contract (I2's ordering depends on it); searches go to
 * a `Searcher` (the memory Worker in the server) so a slow search never holds up the main thread.
 */
import { LimitExceededError } from "../core/errors.ts";
import { INLINE_BODY_BYTES, LIMITS, PREVIEW_CHARS } from "../core/limits.ts";
import type {
  Clock,
  CrashPoint,
  MemoryHit,
  MemoryRecord,
  MemoryStore,
  NewMemory,
  SaveResult,
  SearchOptions,
  SearchPage,
} from "../core/ports.ts";
import { type BlobStore, sha256Hex } from "../store/blobs.ts";
import type { SqlExec, SqlStep } from "../db/sql.ts";
import type { Database, ScriptStep, Tx } from "../db/database.ts";
import { HIT_COLUMNS, memoryId, parseMemoryId, toHit } from "./search.ts";
import { indexColumns } from "./segment.ts";
import { indexSteps, sliceOf } from "./slices.ts";
import { CURRENT, FORGET_MAX_IDS, type ForgetResult, forgetIn, linkVersionIn, updatableIn } from "./forget.ts";
import type { PlannedSave } from "../store/state_batch.ts";
import { blobsNamed } from "../store/db_blobs.ts";

export interface Searcher {
  search(query: string | readonly string[], options?: SearchOptions): Promise<SearchPage>;
  close(): Promise<void>;
}

export interface LibsqlMemoryOptions {
  db: Database;
  /** Where long bodies go (the root's `raw_data/`, or the database of a root on a server). */
  blobs: BlobStore;
  searcher: Searcher;
  /** The database's index slice size (root_meta; see slices.ts). */
  sliceSize: number;
  crash?: CrashPoint;
  /** What a record's `created_at` says, and what retention measures from (the root's clock). */
  clock?: Clock;
}

/** The number of the last memory ever saved (numbers are never reused). */
const LAST_SEQ = "COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'memories'), 0)";
const LAST_SEQ_SQL = `SELECT ${LAST_SEQ} AS n`;

type Row = Record<string, unknown>;

interface Prepared {
  bytes: Uint8Array;
  sha256: string;
  rawRef: string | null;
  createdAt: string;
  keywords: string;
}

/** A record's column values for `memories`, without its dedupe key: type, title, content, keywords, task_id, raw_ref, sha256, size, created_at. */
function rowArgs(rec: NewMemory, p: Prepared): [string, string, string, string, string | null, string | null, string, number, string] {
  return [rec.type, rec.title, p.rawRef ? rec.content.slice(0, PREVIEW_CHARS) : rec.content, p.keywords, rec.task_id ?? null, p.rawRef, p.sha256, p.bytes.length, p.createdAt];
}

/** A libSQL transaction as the `SqlExec` the insert takes. */
function txExec(tx: Tx): SqlExec {
  return { run: async (sql, args = []) => (await tx.execute({ sql, args: [...args] })).rows as unknown as Row[] };
}

export class LibsqlMemory implements MemoryStore {
  readonly #db: Database;
  readonly #blobs: BlobStore;
  readonly #searcher: Searcher;
  readonly #crash: CrashPoint;
  readonly #clock: Clock;
  readonly #sliceSize: number;
  /** The highest memory number this process saw saved: the next one is what a planned save takes (`planIn`). */
  #lastSeq: number | null = null;

  constructor(options: LibsqlMemoryOptions) {
    this.#sliceSize = options.sliceSize;
    this.#db = options.db;
    this.#blobs = options.blobs;
    this.#searcher = options.searcher;
    this.#crash = options.crash ?? (() => {});
    this.#clock = options.clock ?? { now: () => new Date() };
  }

  search(query: string | readonly string[], options?: SearchOptions): Promise<SearchPage> {
    return this.#searcher.search(query, options);
  }

  async save(rec: NewMemory): Promise<SaveResult> {
    if (rec.dedupe_key) {
      const existing = await this.#byDedupeKey(rec.dedupe_key);
      if (existing) return { record: existing, created: false };
    }
    const p = await this.#prepare(rec);
    try {
      const out = await this.#db.write((tx) => this.#insert(txExec(tx), rec, p));
      this.#crash("memory.after_commit");
      if (!out.result.created && p.rawRef) await this.#blobs.remove(p.rawRef);
      return out.result;
    } catch (e) {
      if (p.rawRef) await this.#blobs.remove(p.rawRef);
      throw e;
    }
  }

  /**
   * Saves many records in one write transaction (an import): all or none, sent as one script (no
   * round trip per record). Returns their ids in order. Records with a dedupe key go one by one.
   */
  async saveMany(recs: readonly NewMemory[]): Promise<string[]> {
    if (recs.some((r) => r.dedupe_key)) {
      const ids: string[] = [];
      for (const r of recs) ids.push((await this.save(r)).record.id);
      return ids;
    }
    const prepared: Prepared[] = [];
    for (const r of recs) prepared.push(await this.#prepare(r));
    try {
      // The numbers are chosen here, so each record's index slice is known when the script is
      // written; another writer that took them first makes the insert fail on the key: read again.
      for (let attempt = 1; ; attempt++) {
        const last = Number((await this.#db.execute(LAST_SEQ_SQL)).rows[0]!.n);
        if (last + recs.length > LIMITS.memories_per_root) {
          throw new LimitExceededError("memories_per_root", LIMITS.memories_per_root, last + recs.length, "memories");
        }
        const steps: ScriptStep[] = [];
        recs.forEach((rec, i) => {
          const seq = last + 1 + i;
          steps.push({
            sql: `INSERT INTO memories(seq, type, title, content, keywords, task_id, dedupe_key, raw_ref, sha256, size, created_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)`,
            args: [seq, ...rowArgs(rec, prepared[i]!)],
          });
          // the slice's table is made by the first of its records in this script
          const index = indexSteps(seq, this.#sliceSize, indexColumns(rec));
          steps.push(...(i === 0 || sliceOf(seq, this.#sliceSize) !== sliceOf(seq - 1, this.#sliceSize) ? index : index.slice(1)));
        });
        try {
          await this.#db.script(steps);
        } catch (e) {
          if (attempt < 8 && /UNIQUE constraint failed: memories\.seq/.test(String((e as Error)?.message))) continue;
          throw e;
        }
        this.#saw(last + recs.length);
        this.#crash("memory.after_commit");
        return recs.map((_, i) => memoryId(last + 1 + i));
      }
    } catch (e) {
      for (const p of prepared) if (p.rawRef) await this.#blobs.remove(p.rawRef);
      throw e;
    }
  }

  /**
   * Saves inside a caller's write transaction (a checkpoint's one commit with its state). The
   * long body's blob is written first; `discard` removes it when that transaction does not commit.
   */
  async saveIn(tx: SqlExec, rec: NewMemory): Promise<{ result: SaveResult; discard: () => void }> {
    const p = await this.#prepare(rec, tx);
    const discard = () => {
      if (p.rawRef) void this.#blobs.remove(p.rawRef);
    };
    try {
      const out = await this.#insert(tx, rec, p);
      if (!out.result.created) discard();
      return { result: out.result, discard: out.result.created ? discard : () => {} };
    } catch (e) {
      discard();
      throw e;
    }
  }

  /**
   * A save as statements of a caller's batch (an optimistic checkpoint, store/state_batch.ts):
   * the record takes the number after the highest this process saw saved (plus `nth` for the
   * batch's later saves), checked in the batch (a `check`: else it is undone) to be still the
   * next one, never used, with the dedupe key unused. The first plan of a
   * root reads the last number. Null when it cannot be planned: a long body (its blob is written
   * before the transaction), or a number past the root's limit (a plain save refuses it).
   */
  async planIn(rec: NewMemory, nth: number): Promise<PlannedSave | null> {
    this.#lastSeq ??= Number((await this.#db.read(LAST_SEQ_SQL)).rows[0]!.n); // once per root, then known from its own saves
    checkLength("title", rec.title, LIMITS.short_text_chars);
    checkLength("content", rec.content, LIMITS.memory_content_chars);
    if (rec.keywords.length > LIMITS.list_items) throw new LimitExceededError("keywords", LIMITS.list_items, rec.keywords.length, "items");
    const bytes = new TextEncoder().encode(rec.content);
    if (bytes.length > INLINE_BODY_BYTES) return null;
    const seq = this.#lastSeq + 1 + nth;
    if (seq > LIMITS.memories_per_root && !/^(checkpoint|outcome):/.test(rec.dedupe_key ?? "")) return null; // refused as a plain save refuses it
    const p: Prepared = { bytes, sha256: sha256Hex(bytes), rawRef: null, createdAt: this.#clock.now().toISOString(), keywords: JSON.stringify(rec.keywords) };
    const [type, title, content, keywords, taskId, ...rest] = rowArgs(rec, p);
    const steps: SqlStep[] = [
      { sql: `SELECT 1 WHERE ${LAST_SEQ} = ? AND NOT EXISTS (SELECT 1 FROM memories WHERE dedupe_key = ?)`, args: [seq - 1, rec.dedupe_key ?? null], check: true },
      {
        sql: "INSERT INTO memories(seq, type, title, content, keywords, task_id, dedupe_key, raw_ref, sha256, size, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        args: [seq, type, title, content, keywords, taskId, rec.dedupe_key ?? null, ...rest],
      },
      ...indexSteps(seq, this.#sliceSize, indexColumns(rec)),
    ];
    this.#crash("memory.before_commit");
    const record: MemoryRecord = { id: memoryId(seq), type: rec.type, title: rec.title, content: rec.content, keywords: [...rec.keywords], task_id: rec.task_id ?? null, created_at: p.createdAt, raw_ref: null, sha256: p.sha256, size: bytes.length };
    return { steps, result: { record, created: true }, committed: () => this.#saw(seq) };
  }

  #saw(seq: number): void {
    if (this.#lastSeq === null || seq > this.#lastSeq) this.#lastSeq = seq;
  }

  /** Checks the limits and writes a long body's blob: before any transaction. */
  async #prepare(rec: NewMemory, within?: SqlExec): Promise<Prepared> {
    checkLength("title", rec.title, LIMITS.short_text_chars);
    checkLength("content", rec.content, LIMITS.memory_content_chars);
    if (rec.keywords.length > LIMITS.list_items) throw new LimitExceededError("keywords", LIMITS.list_items, rec.keywords.length, "items");
    const bytes = new TextEncoder().encode(rec.content);
    const sha256 = sha256Hex(bytes);
    const rawRef = bytes.length > INLINE_BODY_BYTES ? (await this.#blobs.put("m", bytes, this.#crash, "txt", within)).ref : null;
    return { bytes, sha256, rawRef, createdAt: this.#clock.now().toISOString(), keywords: JSON.stringify(rec.keywords) };
  }

  /** The rows of one save, inside a write transaction: deduped, capped, inserted and indexed. */
  async #insert(tx: SqlExec, rec: NewMemory, p: Prepared): Promise<{ result: SaveResult }> {
    // one statement in the common case: a dedupe key already used inserts nothing and returns nothing
    const [type, title, content, keywords, taskId, ...rest] = rowArgs(rec, p);
    const ins = await tx.run(
      `INSERT INTO memories(type, title, content, keywords, task_id, dedupe_key, raw_ref, sha256, size, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(dedupe_key) DO NOTHING RETURNING *`,
      [type, title, content, keywords, taskId, rec.dedupe_key ?? null, ...rest],
    );
    const row = ins[0];
    if (!row) {
      const existing = await tx.run("SELECT * FROM memories WHERE dedupe_key = ?", [rec.dedupe_key ?? null]);
      return { result: { record: await this.#toRecord(existing[0]!), created: false } };
    }
    // the number of records ever saved is the new row's sequence number; checkpoints and outcomes are never refused
    const seq = Number(row.seq);
    this.#saw(seq);
    if (seq > LIMITS.memories_per_root && !/^(checkpoint|outcome):/.test(rec.dedupe_key ?? "")) {
      throw new LimitExceededError("memories_per_root", LIMITS.memories_per_root, seq, "memories");
    }
    for (const step of indexSteps(seq, this.#sliceSize, indexColumns(rec))) await tx.run(step.sql, step.args);
    this.#crash("memory.before_commit");
    return { result: { record: await this.#toRecord(row, rec.content), created: true } };
  }

  /** Forgets records (forget.ts): gone from the index, the row and raw_data; a tombstone stays. */
  async forget(ids: readonly string[], by: string, reason: string | null, skipState = false): Promise<ForgetResult> {
    const out = await this.#db.write((tx) => forgetIn(tx, ids, by, reason, this.#sliceSize, skipState ? "skip" : "refuse"));
    // bodies are shared by content: one goes only when no row names it any more
    const named = await blobsNamed(this.#db, out.blobs);
    for (const ref of out.blobs) if (!named.has(ref)) await this.#blobs.remove(ref);
    return out.result;
  }

  /**
   * Inside `tx` (task.delete's): forgets a task's checkpoints and outcome (what recovery reads: the
   * task goes with them) and, with `all`, every other record saved under it; the rest stay project
   * memory. Returns what was forgotten, how many were kept, and the blob refs to remove after the commit.
   */
  async forgetTaskIn(tx: Tx, taskId: string, all: boolean, by: string, reason: string | null): Promise<{ forgotten: string[]; kept: number; blobs: string[] }> {
    const rs = await tx.execute({
      sql: `SELECT m.seq, (m.dedupe_key LIKE 'checkpoint:%' OR m.dedupe_key LIKE 'outcome:%') AS state FROM memories m
            WHERE m.task_id = ? AND NOT EXISTS (SELECT 1 FROM memory_tombstones t WHERE t.seq = m.seq) ORDER BY m.seq`,
      args: [taskId],
    });
    const chosen = rs.rows.filter((r) => all || Number(r.state) === 1).map((r) => memoryId(Number(r.seq)));
    const out = await forgetIn(tx, chosen, by, reason, this.#sliceSize, "forget");
    return { forgotten: out.result.forgotten, kept: rs.rows.length - chosen.length, blobs: out.blobs };
  }

  /**
   * One retention rule's pass: forgets current records of `types` (`*`: any) created before
   * `before`, never a checkpoint or outcome, a batch of ids per transaction; returns the ids.
   */
  async forgetOlderThan(types: readonly string[], before: Date, by: string, reason: string): Promise<string[]> {
    const any = types.includes("*");
    const out: string[] = [];
    for (;;) {
      const rs = await this.#db.read({
        sql: `SELECT m.seq FROM memories m WHERE m.created_at < ? ${any ? "" : `AND m.type IN (${types.map(() => "?").join(",")})`}
              AND (m.dedupe_key IS NULL OR (m.dedupe_key NOT LIKE 'checkpoint:%' AND m.dedupe_key NOT LIKE 'outcome:%'))
              AND NOT EXISTS (SELECT 1 FROM memory_tombstones t WHERE t.seq = m.seq) ORDER BY m.seq LIMIT ?`,
        args: [before.toISOString(), ...(any ? [] : types), FORGET_MAX_IDS],
      });
      if (!rs.rows.length) return out;
      const done = await this.forget(rs.rows.map((r) => memoryId(Number(r.seq))), by, reason);
      out.push(...done.forgotten);
      if (rs.rows.length < FORGET_MAX_IDS) return out;
    }
  }

  /** A new version of a record (forget.ts): the old leaves the index and stays readable by id. */
  async update(id: string, change: { content: string; title?: string; keywords?: string[] }): Promise<SaveResult> {
    const probe = await this.#db.read({ sql: "SELECT type, title, keywords, task_id FROM memories WHERE seq = ?", args: [parseMemoryId(id) ?? -1] });
    const old = probe.rows[0];
    const rec: NewMemory = {
      type: String(old?.type ?? "note"),
      title: change.title ?? String(old?.title ?? ""),
      content: change.content,
      keywords: change.keywords ?? (old ? (JSON.parse(String(old.keywords)) as string[]) : []),
      task_id: old?.task_id === null || old?.task_id === undefined ? null : String(old.task_id),
    };
    const p = await this.#prepare(rec);
    try {
      const out = await this.#db.write(async (tx) => {
        const row = await updatableIn(tx, id);
        const saved = await this.#insert(txExec(tx), { ...rec, type: String(row.type), task_id: row.task_id === null ? null : String(row.task_id) }, p);
        const newSeq = parseMemoryId(saved.result.record.id)!;
        await linkVersionIn(tx, Number(row.seq), newSeq, this.#sliceSize);
        return { ...saved.result, record: { ...saved.result.record, supersedes: id, superseded_by: null } };
      });
      return out;
    } catch (e) {
      if (p.rawRef) await this.#blobs.remove(p.rawRef);
      throw e;
    }
  }

  async #byDedupeKey(key: string): Promise<MemoryRecord | null> {
    const rs = await this.#db.read({ sql: "SELECT * FROM memories WHERE dedupe_key = ?", args: [key] });
    return rs.rows[0] ? await this.#toRecord(rs.rows[0]) : null;
  }

  async get(id: string): Promise<MemoryRecord | null> {
    const seq = parseMemoryId(id);
    if (seq === null) return null;
    const rs = await this.#db.read({ sql: "SELECT * FROM memories m WHERE m.seq = ? AND NOT EXISTS (SELECT 1 FROM memory_tombstones t WHERE t.seq = m.seq)", args: [seq] });
    return rs.rows[0] ? await this.#toRecord(rs.rows[0]) : null;
  }

  async recent(taskId: string, limit: number): Promise<MemoryHit[]> {
    const rs = await this.#db.read({
      sql: `SELECT ${HIT_COLUMNS} FROM memories m WHERE m.task_id = ? AND ${CURRENT} ORDER BY m.seq DESC LIMIT ?`,
      args: [taskId, limit],
    });
    return rs.rows.map((r) => toHit(r, [], 0));
  }

  async stateRecords(limit: number): Promise<MemoryRecord[]> {
    const rs = await this.#db.read({
      sql: `SELECT * FROM memories
            WHERE dedupe_key LIKE 'checkpoint:%' OR dedupe_key LIKE 'outcome:%'
            ORDER BY seq DESC LIMIT ?`,
      args: [limit],
    });
    return Promise.all(rs.rows.map((r) => this.#toRecord(r)));
  }

  async checkpointRecords(taskId: string, limit: number, below?: string): Promise<MemoryRecord[]> {
    const rs = await this.#db.read({
      sql: `SELECT * FROM memories WHERE task_id = ? AND seq < ? AND dedupe_key LIKE 'checkpoint:%' ORDER BY seq DESC LIMIT ?`,
      args: [taskId, (below === undefined ? null : parseMemoryId(below)) ?? Number.MAX_SAFE_INTEGER, limit],
    });
    return Promise.all(rs.rows.map((r) => this.#toRecord(r)));
  }

  checkpointRecord(checkpointId: string): Promise<MemoryRecord | null> {
    return this.#byDedupeKey(`checkpoint:${checkpointId}`);
  }

  /** Reads a record's whole body: inline, or from raw_data/ checked against its sha256 (unless the caller has it). */
  async #toRecord(r: Row, known?: string): Promise<MemoryRecord> {
    const rawRef = r.raw_ref === null ? null : String(r.raw_ref);
    let content = known ?? String(r.content);
    if (rawRef && known === undefined) {
      content = new TextDecoder().decode(await this.#blobs.get(rawRef, String(r.sha256), `raw body of ${memoryId(Number(r.seq))}`));
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
      ...(r.supersedes !== null && r.supersedes !== undefined ? { supersedes: memoryId(Number(r.supersedes)) } : {}),
      ...(r.superseded_by !== null && r.superseded_by !== undefined ? { superseded_by: memoryId(Number(r.superseded_by)) } : {}),
    };
  }
}

function checkLength(field: string, value: string, limit: number): void {
  if (value.length > limit) throw new LimitExceededError(field, limit, value.length, "characters");
}
