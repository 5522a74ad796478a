/**
 * Gaps with identity (issue 28): what a draft does not yet cover, as items of a task with ids that
 * move open → closed across runs and artifact versions.
 *
 * | how | what |
 * |---|---|
 * | opened | `run.finish {gaps}` or `artifact.put {gaps}`: each text a gap; the same text as a gap still open is that gap again, not a second one |
 * | closed by evidence | `artifact.put {closes: [gap ids]}`: the version that covers them closes them (`closed.artifact`) |
 * | closed by the host | `gap.close {gap_id, note}` (the user decides it does not matter) |
 * | shown | `gap.list`; each artifact version with the gaps open when it was saved and those it closed |
 *
 * A closed gap stays closed; when the same text is named again it is a new gap (a regression is
 * visible as such). Each opening and closing is an event (`gap.opened`, `gap.closed`).
 */
import { ConflictError, NotFoundError } from "../core/errors.ts";
import { prefixed } from "../core/ids.ts";
import { LIMITS } from "../core/limits.ts";
import type { Database, Tx } from "../db/database.ts";
import { type Row, RUN_ID, str } from "./common.ts";

export const GAP_ID = prefixed("G");

export interface Gap {
  gap_id: string;
  task_id: string;
  text: string;
  status: "open" | "closed";
  opened: { at: string; run_id: string | null; by: string };
  closed: { at: string; run_id: string | null; by: string; artifact: { name: string; version: number } | null; note: string } | null;
}

/** What a version of an artifact shows of the task's gaps: those open when it was saved, those it closed. */
export interface VersionGaps {
  open: Gap[];
  closed_here: Gap[];
}

function toGap(r: Row): Gap {
  return {
    gap_id: GAP_ID.format(Number(r.seq)),
    task_id: String(r.task_id),
    text: String(r.text),
    status: String(r.status) as Gap["status"],
    opened: { at: String(r.opened_at), run_id: r.opened_run_seq === null ? null : RUN_ID.format(Number(r.opened_run_seq)), by: String(r.opened_by) },
    closed: r.closed_at === null
      ? null
      : {
        at: String(r.closed_at),
        run_id: r.closed_run_seq === null ? null : RUN_ID.format(Number(r.closed_run_seq)),
        by: String(r.closed_by),
        artifact: r.closed_artifact === null ? null : { name: String(r.closed_artifact), version: Number(r.closed_version) },
        note: str(r.note) ?? "",
      },
  };
}

/**
 * Opens a gap for each text in `tx` (an open gap of the task with the same text is that gap);
 * returns them in the order given. At most LIMITS.gaps_open open gaps per task.
 */
export async function openGapsIn(tx: Tx, taskId: string, texts: readonly string[], by: { run_seq: number | null; by: string; at: string }): Promise<Gap[]> {
  const out: Gap[] = [];
  for (const raw of texts) {
    const text = raw.trim();
    if (!text) continue;
    const same = await tx.execute({ sql: "SELECT * FROM gaps WHERE task_id = ? AND status = 'open' AND text = ? ORDER BY seq LIMIT 1", args: [taskId, text] });
    if (same.rows[0]) {
      out.push(toGap(same.rows[0]));
      continue;
    }
    const n = Number((await tx.execute({ sql: "SELECT COUNT(*) AS n FROM gaps WHERE task_id = ? AND status = 'open'", args: [taskId] })).rows[0]!.n);
    if (n >= LIMITS.gaps_open) {
      throw new ConflictError(`Refused: task ${taskId} has ${n} open gaps (at most ${LIMITS.gaps_open}); close some with an artifact version that covers them (artifact.put closes) before naming more`, {
        reason: "too_many_gaps",
        task_id: taskId,
        limit: LIMITS.gaps_open,
      });
    }
    const rs = await tx.execute({
      sql: "INSERT INTO gaps(task_id, text, status, opened_at, opened_run_seq, opened_by) VALUES (?, ?, 'open', ?, ?, ?) RETURNING *",
      args: [taskId, text, by.at, by.run_seq, by.by],
    });
    out.push(toGap(rs.rows[0]!));
  }
  return out;
}

/**
 * Closes the gaps `ids` of the task in `tx` (all or none): each must be an open gap of the task
 * (another task's or an unknown id is not_found; a closed one is refused, `gap_closed`).
 */
export async function closeGapsIn(
  tx: Tx,
  taskId: string,
  ids: readonly string[],
  by: { run_seq: number | null; by: string; at: string; artifact: { name: string; version: number } | null; note: string },
): Promise<Gap[]> {
  const out: Gap[] = [];
  for (const id of [...new Set(ids)]) {
    const seq = GAP_ID.parse(id);
    const row = seq === null ? undefined : (await tx.execute({ sql: "SELECT * FROM gaps WHERE seq = ? AND task_id = ?", args: [seq, taskId] })).rows[0];
    if (!row) throw new NotFoundError("gap", id, ` in task ${taskId}; gap.list shows its gaps`);
    if (String(row.status) === "closed") {
      const g = toGap(row);
      throw new ConflictError(`Refused: gap ${id} was closed already (${g.closed!.at}, by ${g.closed!.by}); a closed gap stays closed. Nothing changed`, { reason: "gap_closed", gap_id: id });
    }
    const rs = await tx.execute({
      sql: `UPDATE gaps SET status = 'closed', closed_at = ?, closed_run_seq = ?, closed_by = ?, closed_artifact = ?, closed_version = ?, note = ?
            WHERE seq = ? RETURNING *`,
      args: [by.at, by.run_seq, by.by, by.artifact?.name ?? null, by.artifact?.version ?? null, by.note, seq],
    });
    out.push(toGap(rs.rows[0]!));
  }
  return out;
}

/** A task's gaps, oldest first (`status` narrows them). */
export async function listGaps(db: Database, taskId: string, status?: "open" | "closed"): Promise<Gap[]> {
  const rs = await db.execute({
    sql: `SELECT * FROM gaps WHERE task_id = ? ${status ? "AND status = ?" : ""} ORDER BY seq`,
    args: status ? [taskId, status] : [taskId],
  });
  return rs.rows.map(toGap);
}

/** For each version (`name@version` → its time), the gaps open when it was saved and those it closed. */
export function gapsOfVersion(all: readonly Gap[], name: string, version: number, savedAt: string): VersionGaps {
  const closedHere = (g: Gap) => g.closed?.artifact?.name === name && g.closed.artifact.version === version;
  return {
    open: all.filter((g) => g.opened.at <= savedAt && !closedHere(g) && (g.closed === null || g.closed.at > savedAt)),
    closed_here: all.filter(closedHere),
  };
}
