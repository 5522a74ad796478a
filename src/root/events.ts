/**
 * A root's event log (issue 28): one ordered, durable list of what happened to its tasks and runs,
 * so a host waits for "a request needs approval", "budget exhausted", "owner stale", "run parked
 * / woken", "checkpoint saved" instead of polling every view. The rows are written by triggers in
 * the same transaction as the change they record (migration 14 in src/db/schema.ts), so an event
 * exists exactly when its change does, on a local root and on a libSQL server alike.
 *
 * | kind | when |
 * |---|---|
 * | `task.created` | a task row is new (task.start, task.fork, a recovery that found no row) |
 * | `task.status` | a task's status changed (`from`, `to`, `reason`) |
 * | `task.checkpoint` | a newer checkpoint was saved (`checkpoint_id`, `memory_id`, `kind`) |
 * | `lease.granted` / `lease.revoked` / `lease.requested` | the lease log's newest entry (a request: the agent asks for writes) |
 * | `task.deleted` | the host deleted the task (`by`, `reason`); its earlier events went with it (src/root/task_delete.ts) |
 * | `run.<kind>` | a run event: `run.requested`, `run.granted`, `run.claimed`, `run.parked`, `run.woken`, `run.stale_owner`, `run.deadline`, `run.budget_exhausted`, `run.finished`, … |
 *
 * `read` pages by id (`after`); with `wait_ms` it waits (polling the table, `POLL_MS` apart) until
 * an event after `after` exists or the time is up, and answers an empty page then.
 */
import { RUN_ID } from "../core/ids.ts";
import { LimitExceededError } from "../core/errors.ts";
import { LIMITS } from "../core/limits.ts";
import type { Database } from "../db/database.ts";

export interface RootEvent {
  /** Increasing within the root; `after` for the next read, `Last-Event-ID` on HTTP's stream. */
  id: number;
  kind: string;
  task_id: string | null;
  run_id: string | null;
  epoch: number | null;
  detail: Record<string, unknown>;
  at: string;
}

export interface EventQuery {
  /** Only events with a larger id (0: from the start). */
  after?: number;
  limit?: number;
  /** Only these kinds; a name ending in `.` is a prefix (`run.` is every run event). */
  kinds?: readonly string[];
  task_id?: string;
  run_id?: string;
  /** Wait up to this long (ms) for an event when there is none yet. */
  wait_ms?: number;
}

/** The `root_meta` key of the newest event id pruning removed. */
export const PRUNED_THROUGH = "events:pruned_through";

/** How often a waiting read looks at the table again. */
export const POLL_MS = 100;

export class EventLog {
  readonly #db: Database;
  /** Set by the root's close: a waiting read answers at once. */
  #closed = false;
  /** Reads waiting for an event now, by the caller's side. */
  readonly #waiting = new Map<string, number>();

  constructor(db: Database) {
    this.#db = db;
  }

  close(): void {
    this.#closed = true;
  }

  /**
   * Keeps the newest `keep` events (default `LIMITS.events_kept`) and removes the older ones: the
   * log is bounded whatever the agent does (each `writes.request` is an event). Returns how many
   * went. A reader whose `after` falls before what is kept reads on from the oldest kept.
   */
  async prune(keep: number = LIMITS.events_kept): Promise<number> {
    return this.#db.write(async (tx) => {
      const through = Number((await tx.execute({ sql: "SELECT COALESCE(MAX(seq), 0) - ? AS b FROM events", args: [keep] })).rows[0]!.b);
      const rs = await tx.execute({ sql: "DELETE FROM events WHERE seq <= ?", args: [through] });
      if (!rs.rowsAffected) return 0;
      // where the log was cut: a webhook behind it says what it never sent (src/root/webhooks.ts)
      await tx.execute({
        sql: "INSERT INTO root_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
        args: [PRUNED_THROUGH, String(through)],
      });
      return rs.rowsAffected;
    });
  }

  /** The events after `after` (oldest first), up to `limit`; `last_id`: the newest id of the log. */
  async read(q: EventQuery = {}, side = "agent"): Promise<{ events: RootEvent[]; last_id: number }> {
    const deadline = Date.now() + Math.min(q.wait_ms ?? 0, LIMITS.events_wait_ms);
    const first = await this.#page(q);
    if (first.events.length || this.#closed || Date.now() >= deadline) return first;
    // reads that wait are bounded per side: the agent's cannot use up the host's
    const waiting = this.#waiting.get(side) ?? 0;
    if (waiting >= LIMITS.events_waiting) {
      throw new LimitExceededError("waiting events.read calls", LIMITS.events_waiting, waiting + 1, "items", "read without wait_ms, or wait for one of the reads already waiting to answer");
    }
    this.#waiting.set(side, waiting + 1);
    try {
      for (;;) {
        await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(1, deadline - Date.now()))));
        const page = await this.#page(q);
        if (page.events.length || this.#closed || Date.now() >= deadline) return page;
      }
    } finally {
      this.#waiting.set(side, (this.#waiting.get(side) ?? 1) - 1);
    }
  }

  async #page(q: EventQuery): Promise<{ events: RootEvent[]; last_id: number }> {
    const where = ["seq > ?"];
    const args: (string | number)[] = [q.after ?? 0];
    if (q.task_id !== undefined) {
      where.push("task_id = ?");
      args.push(q.task_id);
    }
    if (q.run_id !== undefined) {
      where.push("run_seq = ?");
      args.push(RUN_ID.parse(q.run_id) ?? -1);
    }
    if (q.kinds?.length) {
      const one: string[] = [];
      for (const k of q.kinds) {
        if (k.endsWith(".")) {
          // a prefix as an index range: "run." is every kind from "run." up to (not) "run/"
          one.push("(kind >= ? AND kind < ?)");
          args.push(k, k.slice(0, -1) + String.fromCharCode(k.charCodeAt(k.length - 1) + 1));
        } else {
          one.push("kind = ?");
          args.push(k);
        }
      }
      where.push(`(${one.join(" OR ")})`);
    }
    const limit = Math.min(q.limit ?? 100, LIMITS.events_page);
    const rows = (await this.#db.execute({ sql: `SELECT * FROM events WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ?`, args: [...args, limit] })).rows;
    const last = (await this.#db.execute("SELECT COALESCE(MAX(seq), 0) AS n FROM events")).rows[0];
    return { events: rows.map(toEvent), last_id: Number(last?.n ?? 0) };
  }
}

/** An `events` row as the log shows it. */
export function toEvent(r: Record<string, unknown>): RootEvent {
  return {
    id: Number(r.seq),
    kind: String(r.kind),
    task_id: r.task_id === null ? null : String(r.task_id),
    run_id: r.run_seq === null ? null : RUN_ID.format(Number(r.run_seq)),
    epoch: r.epoch === null ? null : Number(r.epoch),
    detail: parseDetail(r.detail),
    at: String(r.at),
  };
}

/** Whether `kind` is one of `kinds` (a name ending in `.` is a prefix); every kind when `kinds` is null. */
export function kindMatches(kind: string, kinds: readonly string[] | null): boolean {
  return kinds === null || kinds.some((k) => (k.endsWith(".") ? kind.startsWith(k) : kind === k));
}

function parseDetail(v: unknown): Record<string, unknown> {
  try {
    const d = JSON.parse(String(v));
    return d && typeof d === "object" && !Array.isArray(d) ? d : { value: d };
  } catch {
    return {};
  }
}
