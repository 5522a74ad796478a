/**
 * What a long run delivers and what it was asked along the way (seed 003, sections 3, 4, 7), as
 * the root exposes it, `root.deliverables`: one face over three parts, one concept a file.
 * - adjustments.ts: the user's words verbatim, then `handed` (which request carried them) and
 *   `satisfied` (which artifact version addresses them), three facts with three timestamps;
 * - artifacts.ts: staged versions per task and name (`draft`, `increment`, `full`), with marks and
 *   per-attachment status;
 * - context.ts: large results by reference, read back by exact byte range with coverage; a ref
 *   belongs to its task, and another task reads it only through an explicit share;
 * - gaps.ts: what a task's drafts do not yet cover, as items with ids, open → closed.
 */
import type { LedgerDeps } from "./common.ts";
import { type Adjustment, Adjustments } from "./adjustments.ts";
import { type ArtifactVersion, Artifacts, type Mark, type PutArtifactInput } from "./artifacts.ts";
import { type ContextRead, Contexts, type PutContextInput } from "./context.ts";
import { closeGapsIn, type Gap, GAP_ID, listGaps } from "./gaps.ts";
import { NotFoundError } from "../core/errors.ts";

/** Adjustments, artifacts and context: each method is its part's (see the files named above). */
export class Deliverables {
  readonly #adjustments: Adjustments;
  readonly #artifacts: Artifacts;
  readonly #contexts: Contexts;
  readonly #d: LedgerDeps;

  constructor(d: LedgerDeps) {
    this.#d = d;
    this.#artifacts = new Artifacts(d);
    this.#adjustments = new Adjustments(d, this.#artifacts);
    this.#contexts = new Contexts(d);
  }

  // adjustments (adjustments.ts)
  receive(taskId: string, runId: string | null, text: string): Promise<Adjustment> {
    return this.#adjustments.receive(taskId, runId, text);
  }
  handoff(id: string, runId: string, epoch: number, requestId: string): Promise<Adjustment> {
    return this.#adjustments.handoff(id, runId, epoch, requestId);
  }
  satisfy(id: string, artifact: string, version: number): Promise<Adjustment> {
    return this.#adjustments.satisfy(id, artifact, version);
  }
  adjustments(taskId: string): Promise<Adjustment[]> {
    return this.#adjustments.adjustments(taskId);
  }

  // artifacts (artifacts.ts)
  put(input: PutArtifactInput): Promise<ArtifactVersion> {
    return this.#artifacts.put(input);
  }
  get(taskId: string, name: string, version?: number): Promise<ArtifactVersion & { content: string }> {
    return this.#artifacts.get(taskId, name, version);
  }
  attachment(taskId: string, name: string, version: number, attachment: string): Promise<string> {
    return this.#artifacts.attachment(taskId, name, version, attachment);
  }
  list(taskId: string, name?: string): Promise<ArtifactVersion[]> {
    return this.#artifacts.list(taskId, name);
  }
  mark(taskId: string, name: string, version: number, mark: Mark, ok: boolean, detail: string): Promise<ArtifactVersion> {
    return this.#artifacts.mark(taskId, name, version, mark, ok, detail);
  }

  // externalised context (context.ts)
  putContext(input: PutContextInput): ReturnType<Contexts["putContext"]> {
    return this.#contexts.putContext(input);
  }
  shareContext(ref: string, ownerTask: string, withTask: string): Promise<{ ref: string; shared_with: string[] }> {
    return this.#contexts.shareContext(ref, ownerTask, withTask);
  }
  readContext(ref: string, offset: number, length: number | undefined, maxBytes: number, reader: { task_id: string; run_id?: string }): Promise<ContextRead> {
    return this.#contexts.readContext(ref, offset, length, maxBytes, reader);
  }

  // gaps (gaps.ts)
  gaps(taskId: string, status?: "open" | "closed"): Promise<Gap[]> {
    return listGaps(this.#d.db, taskId, status);
  }
  /** The host closes a gap without an artifact (the user decides it does not matter), with why. */
  closeGap(gapId: string, note: string, by: string): Promise<Gap> {
    return this.#d.db.write(async (tx) => {
      const seq = GAP_ID.parse(gapId);
      const row = seq === null ? undefined : (await tx.execute({ sql: "SELECT task_id FROM gaps WHERE seq = ?", args: [seq] })).rows[0];
      if (!row) throw new NotFoundError("gap", gapId, "; gap.list shows a task's gaps");
      const [gap] = await closeGapsIn(tx, String(row.task_id), [gapId], { run_seq: null, by, at: this.#d.clock.now().toISOString(), artifact: null, note });
      return gap!;
    });
  }
}
