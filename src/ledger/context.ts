/**
 * Externalised context (seed 003, section 7): large results under raw_data/ by reference, read
 * back by exact byte range with coverage (per run), so a partial read never passes for a whole
 * one; a ref belongs to its task, and another task reads it only through an explicit share.
 */
import { coverage, type Coverage, type Range } from "../core/run_rules/coverage.ts";
import { ConflictError, LimitExceededError, NotFoundError, UnauthorizedError } from "../core/errors.ts";
import { CONTEXT_ID, fence, type LedgerDeps, now, orRemove, seqOf } from "./common.ts";
import { runTask } from "./run_record.ts";

/** A large result put by reference, for a run (fenced by its epoch; `source` checked against its sources) or outside runs. */
export interface PutContextInput {
  task_id: string;
  label: string;
  content: string;
  source?: string;
  run?: { run_id: string; epoch: number };
}

/** A byte range of a context ref, as text when it is UTF-8, with the reader's coverage of the ref. */
export interface ContextRead {
  ref: string;
  offset: number;
  length: number;
  text: string | null;
  data_base64: string;
  coverage: Coverage;
}

/** The context refs of the ledger's tasks. */
export class Contexts {
  constructor(private readonly d: LedgerDeps) {}

  async putContext(input: PutContextInput) {
    let runSeq: number | null = null;
    if (input.run) {
      const run = await runTask(this.d, input.run.run_id);
      runSeq = run.seq;
      if (input.source !== undefined && !run.authorization.sources.includes(input.source) && !run.authorization.sources.includes("*")) {
        throw new UnauthorizedError(`Refused: source ${JSON.stringify(input.source)} is not in run ${input.run.run_id}'s authorization`, {
          run_id: input.run.run_id,
          source: input.source,
          allowed: run.authorization.sources,
        });
      }
    }
    const blob = await this.d.blobs.put("c", new TextEncoder().encode(input.content), this.d.crash);
    const at = now(this.d);
    const seq = await orRemove(this.d, [blob.ref], () => this.d.db.write(async (tx) => {
      if (input.run && runSeq !== null) await fence(tx, runSeq, input.run.epoch, at);
      const rs = await tx.execute({
        sql: "INSERT INTO contexts(run_seq, task_id, label, source, path, size, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
        args: [runSeq, input.task_id, input.label, input.source ?? null, blob.ref, blob.size, blob.sha256, at],
      });
      return Number(rs.rows[0]!.seq);
    }));
    return { ref: CONTEXT_ID.format(seq), size: blob.size, sha256: blob.sha256, label: input.label };
  }

  /** Lets another task read a context ref (refs belong to their task). Only the owning task may share. */
  async shareContext(ref: string, ownerTask: string, withTask: string): Promise<{ ref: string; shared_with: string[] }> {
    const seq = seqOf(CONTEXT_ID, ref, "context");
    const rs = await this.d.db.execute({ sql: "SELECT task_id FROM contexts WHERE seq = ?", args: [seq] });
    if (!rs.rows.length) throw new NotFoundError("context", ref);
    if (String(rs.rows[0]!.task_id) !== ownerTask) {
      throw new UnauthorizedError(`Refused: context ${ref} belongs to task ${String(rs.rows[0]!.task_id)}; only that task may share it`, { ref, task_id: String(rs.rows[0]!.task_id) });
    }
    // only with a task of this root (a deleted one's id names nothing any more)
    const target = await this.d.db.execute({ sql: "SELECT 1 FROM tasks WHERE task_id = ?", args: [withTask] });
    if (!target.rows.length) throw new NotFoundError("task", withTask, "; task.list shows this root's tasks");
    await this.d.db.execute({ sql: "INSERT INTO context_shares(context_seq, task_id, shared_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", args: [seq, withTask, now(this.d)] });
    const all = await this.d.db.execute({ sql: "SELECT task_id FROM context_shares WHERE context_seq = ? ORDER BY task_id", args: [seq] });
    return { ref, shared_with: all.rows.map((r) => String(r.task_id)) };
  }

  /**
   * Exact bytes [offset, offset + length), and the coverage of what this reader has read of the
   * ref: per run when the read is for a run, else per task. A ref belongs to its task; another
   * task reads it only through a share.
   */
  async readContext(ref: string, offset: number, length: number | undefined, maxBytes: number, reader: { task_id: string; run_id?: string }): Promise<ContextRead> {
    const seq = seqOf(CONTEXT_ID, ref, "context");
    const rs = await this.d.db.execute({ sql: "SELECT * FROM contexts WHERE seq = ?", args: [seq] });
    if (!rs.rows.length) throw new NotFoundError("context", ref);
    const row = rs.rows[0]!;
    if (String(row.task_id) !== reader.task_id) {
      const shared = await this.d.db.execute({ sql: "SELECT 1 FROM context_shares WHERE context_seq = ? AND task_id = ?", args: [seq, reader.task_id] });
      if (!shared.rows.length) {
        throw new UnauthorizedError(
          `Refused: context ${ref} belongs to task ${String(row.task_id)}, not to ${reader.task_id}; that task can share it (context.share)`,
          { ref, owner_task: String(row.task_id), task_id: reader.task_id },
        );
      }
    }
    const runSeq = reader.run_id ? (await runTask(this.d, reader.run_id)).seq : null;
    if (reader.run_id && runSeq !== null) {
      const runTaskId = (await runTask(this.d, reader.run_id)).task_id;
      if (runTaskId !== reader.task_id) throw new ConflictError(`Run ${reader.run_id} belongs to task ${runTaskId}, not ${reader.task_id}`, { reason: "other_task" });
    }
    const size = Number(row.size);
    const want = length ?? Math.min(size - offset, maxBytes);
    if (want > maxBytes) throw new LimitExceededError("length", maxBytes, want, "bytes");
    const bytes = await this.d.blobs.get(String(row.path), String(row.sha256), `context ${ref}`);
    const start = Math.min(offset, size);
    const end = Math.min(size, start + Math.max(0, want));
    const slice = bytes.subarray(start, end);
    let text: string | null;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(slice);
    } catch {
      text = null;
    }
    // coverage is the reader's own: this run's reads (or, outside runs, this task's)
    const who = runSeq === null ? { sql: "run_seq IS NULL AND reader_task = ?", arg: reader.task_id as string | number } : { sql: "run_seq = ?", arg: runSeq };
    await this.d.db.execute({
      sql: "INSERT INTO context_reads(context_seq, start, end, run_seq, reader_task, at) VALUES (?, ?, ?, ?, ?, ?)",
      args: [seq, start, end, runSeq, reader.task_id, now(this.d)],
    });
    const reads = await this.d.db.execute({ sql: `SELECT start, end FROM context_reads WHERE context_seq = ? AND ${who.sql}`, args: [seq, who.arg] });
    const ranges = reads.rows.map((r) => [Number(r.start), Number(r.end)] as Range);
    return { ref, offset: start, length: end - start, text, data_base64: Buffer.from(slice).toString("base64"), coverage: coverage(size, ranges) };
  }
}
