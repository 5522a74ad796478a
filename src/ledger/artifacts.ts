/**
 * Staged artifacts (seed 003, section 3): versions per task and name (`draft`, `increment`,
 * `full`; a full version names what it supersedes, and old versions stay readable), with separate
 * preview / saved / exported / opened marks and per-attachment status (one broken attachment hides
 * nothing else). Bodies and attachments are blobs (store/blobs.ts); a refused write removes them.
 */
import { ConflictError, NotFoundError } from "../core/errors.ts";
import type { Blob } from "../store/blobs.ts";
import { fence, json, type LedgerDeps, now, orRemove, type Row, RUN_ID, str } from "./common.ts";
import { closeGapsIn, gapsOfVersion, listGaps, openGapsIn, type VersionGaps } from "./gaps.ts";
import { runTask } from "./run_record.ts";

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
  /** The task's gaps open when this version was saved, and those it closed (src/ledger/gaps.ts). */
  gaps: VersionGaps;
}

/** A new version of an artifact, saved by a run (fenced by its epoch) or outside runs. */
export interface PutArtifactInput {
  task_id: string;
  name: string;
  kind: ArtifactKind;
  content: string;
  supersedes?: number[];
  run?: { run_id: string; epoch: number };
  note?: string;
  attachments?: AttachmentInput[];
  /** What this version does not yet cover: gaps opened with it (or found open by the same text). */
  gaps?: string[];
  /** Gap ids this version covers: closed with it as their evidence. */
  closes?: string[];
  /** Who saves it, as gaps record it (`agent:stdio`…). */
  by?: string;
}

/** The artifacts of the ledger's tasks. */
export class Artifacts {
  constructor(private readonly d: LedgerDeps) {}

  async put(input: PutArtifactInput): Promise<ArtifactVersion> {
    const runSeq = input.run ? (await runTask(this.d, input.run.run_id)).seq : null;
    const body = await this.d.blobs.put("a", new TextEncoder().encode(input.content), this.d.crash);
    const files: (AttachmentInput & { blob: Blob | null })[] = [];
    for (const a of input.attachments ?? []) {
      files.push({ ...a, blob: a.error === undefined && a.content !== undefined ? await this.d.blobs.put("a", new TextEncoder().encode(a.content), this.d.crash) : null });
    }
    const at = now(this.d);
    const written = [body.ref, ...files.flatMap((f) => (f.blob ? [f.blob.ref] : []))];
    const version = await orRemove(this.d, written, () => this.d.db.write(async (tx) => {
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
      const gapBy = { run_seq: runSeq, by: input.by ?? "agent", at };
      if (input.closes?.length) await closeGapsIn(tx, input.task_id, input.closes, { ...gapBy, artifact: { name: input.name, version }, note: input.note ?? "" });
      if (input.gaps?.length) await openGapsIn(tx, input.task_id, input.gaps, gapBy);
      this.d.crash?.("artifact.before_commit");
      return version;
    }));
    this.d.crash?.("artifact.after_commit");
    return this.version(input.task_id, input.name, version);
  }

  /** One version, without its content; an unknown one is `not_found`. */
  async version(taskId: string, name: string, version: number): Promise<ArtifactVersion> {
    const rs = await this.d.db.execute({ sql: "SELECT * FROM artifacts WHERE task_id = ? AND name = ? AND version = ?", args: [taskId, name, version] });
    if (!rs.rows.length) throw new NotFoundError("artifact version", `${name}@${version}`, "; artifact.list shows the versions");
    return (await this.#withDetails(taskId, rs.rows))[0]!;
  }

  async #withDetails(taskId: string, rows: Row[]): Promise<ArtifactVersion[]> {
    const all = await this.d.db.execute({ sql: "SELECT name, version, kind, supersedes FROM artifacts WHERE task_id = ?", args: [taskId] });
    const gaps = await listGaps(this.d.db, taskId);
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
        gaps: gapsOfVersion(gaps, name, version, String(r.created_at)),
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
    const meta = await this.version(taskId, name, v);
    const content = new TextDecoder().decode(await this.d.blobs.get(meta.ref, meta.sha256, `artifact ${name}@${v}`));
    return { ...meta, content };
  }

  async attachment(taskId: string, name: string, version: number, attachment: string): Promise<string> {
    const meta = await this.version(taskId, name, version);
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
    await this.version(taskId, name, version);
    await this.d.db.execute({
      sql: "INSERT INTO artifact_marks(task_id, name, version, mark, ok, detail, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      args: [taskId, name, version, mark, ok ? 1 : 0, detail, now(this.d)],
    });
    return this.version(taskId, name, version);
  }
}
