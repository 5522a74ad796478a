/**
 * What a running longrun process does on time for the runs of one open root (issue 28): it wakes
 * parked runs whose `wake_at` came, records a `deadline` event when a running run's time budget
 * (`deadline`, `wall_seconds`) runs out (from then on it begins no new effect, as the budget rules
 * say, and its owner's heartbeat answers `deadline`), and records `stale_owner` when an owner
 * missed its TTL. One timer per root, set
 * to the earliest of those instants (and at most `MAX_SLEEP_MS` ahead, so what another process
 * changed is seen too), moved earlier when this process parks, starts or claims a run; the first
 * pass runs at once, so what fell due while no process ran happens at the next start. Each act is
 * a compare-and-set on the run's row, so two processes never both wake the same run.
 */
import { type BudgetLimits, budgetStatus } from "../core/run_rules/budget.ts";
import { staleAt, timeLimitAt } from "../core/run_rules/liveness.ts";
import { addEvent, json, type LedgerDeps, type Row, str } from "./common.ts";
import { noteStale } from "./liveness.ts";
import type { Run } from "./run_record.ts";

/** The longest the timer sleeps before it looks again (parks and claims of other processes). */
export const MAX_SLEEP_MS = 30_000;

/** Who acts on time, as events record it. */
export const TIMER = "longrun:timer";

/** The next instant (ms) at which a process must act on `run`, null when none. */
export function nextInstantOf(run: Run): number | null {
  const at: number[] = [];
  if (run.status === "parked" && run.wake_at) at.push(Date.parse(run.wake_at));
  if (run.status === "running") {
    const stale = staleAt(run.owner_ttl_seconds, run.owner_beat_at);
    if (stale !== null) at.push(stale);
    const limit = timeLimitAt(run.budget_limits, run.created_at);
    if (limit !== null) at.push(limit);
  }
  const ok = at.filter((t) => !Number.isNaN(t));
  return ok.length ? Math.min(...ok) : null;
}

/** The timer of one open root's runs. */
export class RunWaker {
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** When the armed timer fires (ms). */
  #armedAt = Infinity;
  #pass: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(private readonly d: LedgerDeps) {}

  /** The first pass, at once: what fell due while no process ran. */
  start(): void {
    this.#arm(0);
  }

  /** Something due at `at` (ms) changed here: fire then, if earlier than the timer is set for. */
  rearm(at: number | null): void {
    if (at === null || this.#stopped) return;
    const now = this.d.clock.now().getTime();
    if (Math.max(at, now) < this.#armedAt) this.#arm(at - now);
  }

  /** No more passes; resolves once the one in flight is done (before the root closes its database). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#pass;
  }

  #arm(delayMs: number): void {
    if (this.#stopped) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    const delay = Math.min(Math.max(0, delayMs), MAX_SLEEP_MS);
    this.#armedAt = this.d.clock.now().getTime() + delay;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#armedAt = Infinity;
      this.#pass = this.#pass.then(() => this.#run());
    }, delay);
  }

  async #run(): Promise<void> {
    if (this.#stopped) return;
    let next: number | null = null;
    try {
      next = await this.pass();
    } catch {
      // the database is away for now (a server unreachable, a lock held): look again later
    }
    if (this.#stopped) return;
    const now = this.d.clock.now().getTime();
    const at = next === null ? now + MAX_SLEEP_MS : Math.max(next, now + 1);
    // a rearm during the pass (a park committed after its read) set an earlier timer: keep it
    if (this.#timer !== null && this.#armedAt <= at) return;
    this.#arm(at - now);
  }

  /** One pass over the open runs: acts on what is due, returns the next instant (ms) something is. */
  async pass(): Promise<number | null> {
    const rs = await this.d.db.execute("SELECT * FROM runs WHERE status IN ('running', 'parked') ORDER BY seq LIMIT 10000");
    let next: number | null = null;
    const later = (t: number | null) => {
      if (t !== null && !Number.isNaN(t) && (next === null || t < next)) next = t;
    };
    for (const r of rs.rows) {
      if (this.#stopped) break;
      try {
        await this.#due(r, later);
      } catch {
        // this run's act failed (a lock held, the server away): the others go on; it is tried again next pass
      }
    }
    return next;
  }

  /** Acts on one open run if something of it is due; tells `later` when the next thing of it is. */
  async #due(r: Row, later: (t: number | null) => void): Promise<void> {
    const nowMs = this.d.clock.now().getTime();
    const requested = str(r.grant_state) === "requested";
    const wake = str(r.wake_at);
    if (String(r.status) === "parked" && wake && !requested) {
      if (Date.parse(wake) <= nowMs) await this.#wake(r, wake);
      else later(Date.parse(wake));
    }
    if (String(r.status) === "running") {
      const limit = str(r.time_acted_at) === null ? timeLimitAt(json<BudgetLimits>(r.budget_limits, {}), String(r.created_at)) : null;
      if (limit !== null && limit <= nowMs) await this.#timeUp(r);
      else later(limit);
      const ttl = r.owner_ttl_seconds === null || r.owner_ttl_seconds === undefined ? null : Number(r.owner_ttl_seconds);
      const stale = str(r.stale_noted_beat) === str(r.beat_at) ? null : staleAt(ttl, str(r.beat_at));
      if (stale !== null && stale <= nowMs) await this.d.db.write((tx) => noteStale(tx, r, this.d.clock.now()));
      else later(stale);
    }
  }

  /** Wakes a parked run whose time came: once, whoever tries (the row must still be parked with this wake time). */
  async #wake(r: Row, wakeAt: string): Promise<void> {
    const at = this.d.clock.now().toISOString();
    await this.d.db.write(async (tx) => {
      const rs = await tx.execute({
        sql: `UPDATE runs SET status = 'running', parked_on = NULL, parked_for_user = 0, wake_at = NULL, beat_at = ?, updated_at = ?
              WHERE seq = ? AND status = 'parked' AND wake_at = ?`,
        args: [at, at, Number(r.seq), wakeAt],
      });
      if (rs.rowsAffected !== 1) return; // another process woke it, or it was woken, ended or parked anew meanwhile
      await addEvent(tx, Number(r.seq), Number(r.epoch), "woken", { reason: "wake_at", by: TIMER, wake_at: wakeAt, answer: null, waited_for: str(r.parked_on) }, at);
    });
  }

  /**
   * A running run whose time budget ran out: as the budget rules say, it begins no new effect
   * (receipt.begin is refused, budget_exhausted) while spending is still recorded; the stop is
   * recorded once, as a `deadline` event, and the owner's heartbeat answers `deadline`.
   */
  async #timeUp(r: Row): Promise<void> {
    const now = this.d.clock.now();
    const at = now.toISOString();
    const limits = json<BudgetLimits>(r.budget_limits, {});
    const by = budgetStatus(limits, [], { started_at: String(r.created_at), now }).exhausted_by.filter((d) => d === "deadline" || d === "wall_seconds");
    await this.d.db.write(async (tx) => {
      const rs = await tx.execute({
        sql: "UPDATE runs SET time_acted_at = ? WHERE seq = ? AND status = 'running' AND epoch = ? AND time_acted_at IS NULL",
        args: [at, Number(r.seq), Number(r.epoch)],
      });
      if (rs.rowsAffected !== 1) return;
      await addEvent(tx, Number(r.seq), Number(r.epoch), "deadline", { exhausted_by: by, by: TIMER, effects_allowed: false }, at);
    });
  }
}
