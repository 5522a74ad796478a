/**
 * What a long run delivers and what it was asked along the way (seed 003, sections 3, 4, 7):
 * - adjustments: the user's words verbatim, then `handed` (which request carried them) and
 *   `satisfied` (which artifact version addresses them), three facts with three timestamps;
 * - staged artifacts: versions per task and name (`draft`, `increment`, `full`; a full version
 *   names what it supersedes, and old versions stay readable), with separate preview / saved /
 *   exported / opened marks and per-attachment status (one broken attachment hides nothing else);
 * - externalised context: large results under raw_data/ by reference, read back by exact byte
 *   range with coverage (per run), so a partial read never passes for a whole one; a ref belongs to
 *   its task, and another task reads it only through an explicit share.
 */
import { coverage, type Coverage, type Range } from "../core/run_rules/coverage.ts";
import { ConflictError, LimitExceededError, NotFoundError, UnauthorizedError } from "../core/errors.ts";
import type { Blob } from "../store/blobs.ts";
import { ADJUSTMENT_ID, CONTEXT_ID, fence, json, type LedgerDeps, RECEIPT_ID, type Row, RUN_ID, seqOf, str } from "./common.ts";
import { type Authorization, authorizationOf } from "./runs.ts";

export interface AdjustmentEvent {
  kind: "received" | "handed" | "satisfied";
  run_id: string | null;
  request_id: string | null;
  artifact: string | null;
  version: number | null;
  at: string;
}

export interface Adjustment {
  adjustment_id: string;
  task_id: string;
  run_id: string | null;
  text: string;
  received_at: string;
  /** The latest handoff and satisfaction; `history` keeps every one, in order. */
  handed: { request_id: string; run_id: string; at: string } | null;
  satisfied: { artifact: string; version: number; at: string } | null;
  history: AdjustmentEvent[];
}

function toAdjustment(r: Row): Adjustment {
  return {
    adjustment_id: ADJUSTMENT_ID.format(Number(r.seq)),
    task_id: String(r.task_id),
    run_id: r.run_seq === null ? null : RUN_ID.format(Number(r.run_seq)),
    text: String(r.text),
    received_at: String(r.received_at),
    handed: r.handed_at === null ? null : { request_id: String(r.handed_request_id), run_id: RUN_ID.format(Number(r.handed_run_seq)), at: String(r.handed_at) },
    satisfied: r.satisfied_at === null ? null : { artifact: String(r.satisfied_artifact), version: Number(r.satisfied_version), at: String(r.satisfied_at) },
    history: [],
  };
}

export type ArtifactKind = "draft" | "increment" | "full";
export type Mark = "preview" | "saved" | "exported" | "opened";

export interface AttachmentInput {
  name: string;
  content?: string;
  error?: string;
}

export interface ArtifactVersion {
  task_id: string;
  name: string;
  version: number;
  kind: ArtifactKind;
  supersedes: number[];
  superseded_by: number | null;
  run_id: string | null;
  ref: string;
  size: number;
  sha256: string;
  note: string;
  created_at: string;
  marks: { mark: Mark; ok: boolean; detail: string; at: string }[];
  attachments: { name: string; status: "ok" | "failed"; ref: string | null; size: number | null; sha256: string | null; error: string | null }[];
}

export class Deliverables {
  constructor(private readonly d: LedgerDeps) {}

  #now(): string {
    return this.d.clock.now().toISOString();
  }

  async #runTask(runId: string): Promise<{ seq: number; task_id: string; authorization: Authorization }> {
    const seq = seqOf(RUN_ID, runId, "run");
    const rs = await this.d.db.execute({ sql: "SELECT task_id, authorization FROM runs WHERE seq = ?", args: [seq] });
    if (!rs.rows.length) throw new NotFoundError("run", runId);
    return { seq, task_id: String(rs.rows[0]!.task_id), authorization: authorizationOf(rs.rows[0]!.authorization) };
  }

  // --- adjustments ---------------------------------------------------------------------------

  /** Host side: the user's words, stored exactly as given. */
  async receive(taskId: string, runId: string | null, text: string): Promise<Adjustment> {
    const runSeq = runId ? (await this.#runTask(runId)).seq : null;
    const at = this.#now();
    const seq = await this.d.db.write(async (tx) => {
      // the newest receipt and artifact version at this moment: only later ones can have answered it
      const rs = await tx.execute({
        sql: `INSERT INTO adjustments(task_id, run_seq, text, received_at, receipts_before, artifacts_before)
              VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) FROM receipts), (SELECT COALESCE(MAX(rowid), 0) FROM artifacts)) RETURNING seq`,
        args: [taskId, runSeq, text, at],
      });
      const seq = Number(rs.rows[0]!.seq);
      await tx.execute({ sql: "INSERT INTO adjustment_events(adjustment_seq, kind, run_seq, at) VALUES (?, 'received', ?, ?)", args: [seq, runSeq, at] });
      return seq;
    });
    return this.#adjustment(ADJUSTMENT_ID.format(seq));
  }

  async #adjustment(id: string): Promise<Adjustment> {
    const seq = seqOf(ADJUSTMENT_ID, id, "adjustment");
    const rs = await this.d.db.execute({ sql: "SELECT * FROM adjustments WHERE seq = ?", args: [seq] });
    if (!rs.rows.length) throw new NotFoundError("adjustment", id);
    return (await this.#withHistory([toAdjustment(rs.rows[0]!)]))[0]!;
  }

  async #withHistory(adjs: Adjustment[]): Promise<Adjustment[]> {
    for (const a of adjs) {
      const ev = await this.d.db.execute({ sql: "SELECT * FROM adjustment_events WHERE adjustment_seq = ? ORDER BY seq", args: [seqOf(ADJUSTMENT_ID, a.adjustment_id, "adjustment")] });
      a.history = ev.rows.map((e) => ({
        kind: String(e.kind) as AdjustmentEvent["kind"],
        run_id: e.run_seq === null ? null : RUN_ID.format(Number(e.run_seq)),
        request_id: str(e.request_id),
        artifact: str(e.artifact),
        version: e.version === null ? null : Number(e.version),
        at: String(e.at),
      }));
    }
    return adjs;
  }

  /**
   * A request really carried the adjustment: which one, in which run (fenced by the run's epoch).
   * The request must be recorded: a receipt of that run (record each model request with
   * receipt.begin), so a handoff is evidence, not a free string. Every handoff is appended.
   */
  async handoff(id: string, runId: string, epoch: number, requestId: string): Promise<Adjustment> {
    const adj = await this.#adjustment(id);
    const run = await this.#runTask(runId);
    if (run.task_id !== adj.task_id) {
      throw new ConflictError(`Adjustment ${id} belongs to task ${adj.task_id}, not to run ${runId}'s task ${run.task_id}`, { reason: "other_task" });
    }
    const receiptSeq = RECEIPT_ID.parse(requestId);
    const at = this.#now();
    await this.d.db.write(async (tx) => {
      await fence(tx, run.seq, epoch, at);
      const rc = receiptSeq === null ? null : (await tx.execute({ sql: "SELECT begun_at FROM receipts WHERE seq = ? AND run_seq = ?", args: [receiptSeq, run.seq] })).rows[0];
      if (!rc) {
        throw new NotFoundError("request", requestId, ` among run ${runId}'s receipts; record the model request with receipt.begin first and hand the adjustment to that receipt (RC_…)`);
      }
      const before = (await tx.execute({ sql: "SELECT receipts_before FROM adjustments WHERE seq = ?", args: [seqOf(ADJUSTMENT_ID, id, "adjustment")] })).rows[0]?.receipts_before;
      if (before !== null && before !== undefined && receiptSeq! <= Number(before)) {
        throw new ConflictError(`Refused: request ${requestId} began before adjustment ${id} was received (${adj.received_at}); it cannot have carried it: hand it to a later request`, {
          reason: "request_before_adjustment",
          request_id: requestId,
        });
      }
      await tx.execute({
        sql: "UPDATE adjustments SET handed_request_id = ?, handed_run_seq = ?, handed_at = ? WHERE seq = ?",
        args: [requestId, run.seq, at, seqOf(ADJUSTMENT_ID, id, "adjustment")],
      });
      await tx.execute({
        sql: "INSERT INTO adjustment_events(adjustment_seq, kind, run_seq, request_id, at) VALUES (?, 'handed', ?, ?, ?)",
        args: [seqOf(ADJUSTMENT_ID, id, "adjustment"), run.seq, requestId, at],
      });
    });
    return this.#adjustment(id);
  }

  /**
   * An artifact version addresses the adjustment. It must exist, the adjustment must have been
   * handed first, and the version must have been made after the adjustment was received (a report
   * written before cannot address it). Every satisfaction is appended.
   */
  async satisfy(id: string, artifact: string, version: number): Promise<Adjustment> {
    const adj = await this.#adjustment(id);
    if (!adj.handed) {
      throw new ConflictError(`Adjustment ${id} was never handed to a request (adjust.handoff), so nothing can have addressed it yet`, { reason: "not_handed" });
    }
    const v = await this.#version(adj.task_id, artifact, version);
    const order = await this.d.db.execute({
      sql: "SELECT a.artifacts_before AS before, (SELECT rowid FROM artifacts WHERE task_id = ? AND name = ? AND version = ?) AS at FROM adjustments a WHERE a.seq = ?",
      args: [adj.task_id, artifact, version, seqOf(ADJUSTMENT_ID, id, "adjustment")],
    });
    const o = order.rows[0]!;
    const madeBefore = o.before === null ? v.created_at <= adj.received_at : Number(o.at) <= Number(o.before);
    if (madeBefore) {
      throw new ConflictError(
        `Refused: ${artifact}@${version} (created ${v.created_at}) was saved before adjustment ${id} was received (${adj.received_at}), so it cannot address it; ` +
          `save a new version that addresses it, then satisfy with that one`,
        { reason: "version_before_adjustment", artifact, version, created_at: v.created_at, received_at: adj.received_at },
      );
    }
    const at = this.#now();
    await this.d.db.write(async (tx) => {
      await tx.execute({
        sql: "UPDATE adjustments SET satisfied_artifact = ?, satisfied_version = ?, satisfied_at = ? WHERE seq = ?",
        args: [artifact, version, at, seqOf(ADJUSTMENT_ID, id, "adjustment")],
      });
      await tx.execute({
        sql: "INSERT INTO adjustment_events(adjustment_seq, kind, artifact, version, at) VALUES (?, 'satisfied', ?, ?, ?)",
        args: [seqOf(ADJUSTMENT_ID, id, "adjustment"), artifact, version, at],
      });
    });
    return this.#adjustment(id);
  }

  async adjustments(taskId: string): Promise<Adjustment[]> {
    const rs = await this.d.db.execute({ sql: "SELECT * FROM adjustments WHERE task_id = ? ORDER BY seq", args: [taskId] });
    return this.#withHistory(rs.rows.map(toAdjustment));
  }

  // --- artifacts -----------------------------------------------------------------------------

  async put(input: {
    task_id: string;
    name: string;
    kind: ArtifactKind;
    content: string;
    supersedes?: number[];
    run?: { run_id: string; epoch: number };
    note?: string;
    attachments?: AttachmentInput[];
  }): Promise<ArtifactVersion> {
    const runSeq = input.run ? (await this.#runTask(input.run.run_id)).seq : null;
    const body = await this.d.blobs.put("a", new TextEncoder().encode(input.content), this.d.crash);
    const files: (AttachmentInput & { blob: Blob | null })[] = [];
    for (const a of input.attachments ?? []) {
      files.push({ ...a, blob: a.error === undefined && a.content !== undefined ? await this.d.blobs.put("a", new TextEncoder().encode(a.content), this.d.crash) : null });
    }
    const at = this.#now();
    const written = [body.ref, ...files.flatMap((f) => (f.blob ? [f.blob.ref] : []))];
    const version = await this.#orRemove(written, () => this.d.db.write(async (tx) => {
      if (input.run && runSeq !== null) await fence(tx, runSeq, input.run.epoch, at);
      const cur = await tx.execute({ sql: "SELECT COALESCE(MAX(version), 0) AS v FROM artifacts WHERE task_id = ? AND name = ?", args: [input.task_id, input.name] });
      const version = Number(cur.rows[0]!.v) + 1;
      const earlier = Array.from({ length: version - 1 }, (_, i) => i + 1);
      const supersedes = input.kind === "full" ? (input.supersedes ?? earlier) : (input.supersedes ?? []);
      const bad = supersedes.filter((v) => !earlier.includes(v));
      if (bad.length) {
        throw new NotFoundError("artifact version", `${input.name}@${bad.join(",")}`, `; ${input.name} has versions 1-${version - 1}`);
      }
      await tx.execute({
        sql: `INSERT INTO artifacts(task_id, name, version, kind, supersedes, run_seq, ref, size, sha256, note, created_at)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        args: [input.task_id, input.name, version, input.kind, JSON.stringify(supersedes), runSeq, body.ref, body.size, body.sha256, input.note ?? "", at],
      });
      for (const f of files) {
        await tx.execute({
          sql: `INSERT INTO artifact_attachments(task_id, name, version, attachment, status, ref, size, sha256, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          args: [input.task_id, input.name, version, f.name, f.blob ? "ok" : "failed", f.blob?.ref ?? null, f.blob?.size ?? null, f.blob?.sha256 ?? null, f.blob ? null : (f.error ?? "no content")],
        });
      }
      this.d.crash?.("artifact.before_commit");
      return version;
    }));
    this.d.crash?.("artifact.after_commit");
    return this.#version(input.task_id, input.name, version);
  }

  /** Runs `write`; if it is refused (stale epoch, unknown version…), the blobs written for it go too. */
  async #orRemove<T>(refs: string[], write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (e) {
      for (const ref of refs) await this.d.blobs.remove(ref);
      throw e;
    }
  }

  async #version(taskId: string, name: string, version: number): Promise<ArtifactVersion> {
    const rs = await this.d.db.execute({ sql: "SELECT * FROM artifacts WHERE task_id = ? AND name = ? AND version = ?", args: [taskId, name, version] });
    if (!rs.rows.length) throw new NotFoundError("artifact version", `${name}@${version}`, "; artifact.list shows the versions");
    return (await this.#withDetails(taskId, rs.rows))[0]!;
  }

  async #withDetails(taskId: string, rows: Row[]): Promise<ArtifactVersion[]> {
    const all = await this.d.db.execute({ sql: "SELECT name, version, kind, supersedes FROM artifacts WHERE task_id = ?", args: [taskId] });
    const out: ArtifactVersion[] = [];
    for (const r of rows) {
      const name = String(r.name);
      const version = Number(r.version);
      const supersededBy = all.rows
        .filter((x) => String(x.name) === name && json<number[]>(x.supersedes, []).includes(version))
        .map((x) => Number(x.version));
      const marks = await this.d.db.execute({ sql: "SELECT * FROM artifact_marks WHERE task_id = ? AND name = ? AND version = ? ORDER BY seq", args: [taskId, name, version] });
      const atts = await this.d.db.execute({ sql: "SELECT * FROM artifact_attachments WHERE task_id = ? AND name = ? AND version = ? ORDER BY attachment", args: [taskId, name, version] });
      out.push({
        task_id: taskId,
        name,
        version,
        kind: String(r.kind) as ArtifactKind,
        supersedes: json<number[]>(r.supersedes, []),
        superseded_by: supersededBy.length ? Math.min(...supersededBy) : null,
        run_id: r.run_seq === null ? null : RUN_ID.format(Number(r.run_seq)),
        ref: String(r.ref),
        size: Number(r.size),
        sha256: String(r.sha256),
        note: String(r.note),
        created_at: String(r.created_at),
        marks: marks.rows.map((m) => ({ mark: String(m.mark) as Mark, ok: Number(m.ok) === 1, detail: String(m.detail), at: String(m.at) })),
        attachments: atts.rows.map((a) => ({
          name: String(a.attachment),
          status: String(a.status) as "ok" | "failed",
          ref: str(a.ref),
          size: a.size === null ? null : Number(a.size),
          sha256: str(a.sha256),
          error: str(a.error),
        })),
      });
    }
    return out;
  }

  /** One version with its content (the newest when no version is given). Old versions stay readable. */
  async get(taskId: string, name: string, version?: number): Promise<ArtifactVersion & { content: string }> {
    let v = version;
    if (v === undefined) {
      const rs = await this.d.db.execute({ sql: "SELECT MAX(version) AS v FROM artifacts WHERE task_id = ? AND name = ?", args: [taskId, name] });
      if (rs.rows[0]?.v === null || rs.rows[0]?.v === undefined) throw new NotFoundError("artifact", name, "; artifact.put creates it");
      v = Number(rs.rows[0]!.v);
    }
    const meta = await this.#version(taskId, name, v);
    const content = new TextDecoder().decode(await this.d.blobs.get(meta.ref, meta.sha256, `artifact ${name}@${v}`));
    return { ...meta, content };
  }

  async attachment(taskId: string, name: string, version: number, attachment: string): Promise<string> {
    const meta = await this.#version(taskId, name, version);
    const a = meta.attachments.find((x) => x.name === attachment);
    if (!a) throw new NotFoundError("attachment", `${name}@${version}/${attachment}`);
    if (a.status === "failed" || !a.ref || !a.sha256) {
      throw new ConflictError(`Attachment ${attachment} of ${name}@${version} failed (${a.error}); the rest of the artifact is unaffected`, { reason: "attachment_failed" });
    }
    return new TextDecoder().decode(await this.d.blobs.get(a.ref, a.sha256, `attachment ${attachment}`));
  }

  async list(taskId: string, name?: string): Promise<ArtifactVersion[]> {
    const rs = await this.d.db.execute({
      sql: `SELECT * FROM artifacts WHERE task_id = ? ${name ? "AND name = ?" : ""} ORDER BY name, version`,
      args: name ? [taskId, name] : [taskId],
    });
    return this.#withDetails(taskId, rs.rows);
  }

  async mark(taskId: string, name: string, version: number, mark: Mark, ok: boolean, detail: string): Promise<ArtifactVersion> {
    await this.#version(taskId, name, version);
    await this.d.db.execute({
      sql: "INSERT INTO artifact_marks(task_id, name, version, mark, ok, detail, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      args: [taskId, name, version, mark, ok ? 1 : 0, detail, this.#now()],
    });
    return this.#version(taskId, name, version);
  }

  // --- externalised context ------------------------------------------------------------------

  async putContext(input: { task_id: string; label: string; content: string; source?: string; run?: { run_id: string; epoch: number } }) {
    let runSeq: number | null = null;
    if (input.run) {
      const run = await this.#runTask(input.run.run_id);
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
    const at = this.#now();
    const seq = await this.#orRemove([blob.ref], () => this.d.db.write(async (tx) => {
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
    await this.d.db.execute({ sql: "INSERT INTO context_shares(context_seq, task_id, shared_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", args: [seq, withTask, this.#now()] });
    const all = await this.d.db.execute({ sql: "SELECT task_id FROM context_shares WHERE context_seq = ? ORDER BY task_id", args: [seq] });
    return { ref, shared_with: all.rows.map((r) => String(r.task_id)) };
  }

  /**
   * Exact bytes [offset, offset + length), and the coverage of what this reader has read of the
   * ref: per run when the read is for a run, else per task. A ref belongs to its task; another
   * task reads it only through a share.
   */
  async readContext(ref: string, offset: number, length: number | undefined, maxBytes: number, reader: { task_id: string; run_id?: string }): Promise<{
    ref: string;
    offset: number;
    length: number;
    text: string | null;
    data_base64: string;
    coverage: Coverage;
  }> {
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
    const runSeq = reader.run_id ? (await this.#runTask(reader.run_id)).seq : null;
    if (reader.run_id && runSeq !== null) {
      const runTask = (await this.#runTask(reader.run_id)).task_id;
      if (runTask !== reader.task_id) throw new ConflictError(`Run ${reader.run_id} belongs to task ${runTask}, not ${reader.task_id}`, { reason: "other_task" });
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
      args: [seq, start, end, runSeq, reader.task_id, this.#now()],
    });
    const reads = await this.d.db.execute({ sql: `SELECT start, end FROM context_reads WHERE context_seq = ? AND ${who.sql}`, args: [seq, who.arg] });
    const ranges = reads.rows.map((r) => [Number(r.start), Number(r.end)] as Range);
    return { ref, offset: start, length: end - start, text, data_base64: Buffer.from(slice).toString("base64"), coverage: coverage(size, ranges) };
  }
}
