/**
 * Webhooks (issue 28): a running longrun process (serve, http, mcp) POSTs the root's event log
 * (src/root/events.ts) to the URLs the host names in `.longrun/settings.json` `webhooks`, so a
 * host learns "a request needs approval", "owner stale", "budget exhausted" without holding a
 * stream open.
 *
 * | what | how |
 * |---|---|
 * | order | one event at a time, in the log's order; a failed one holds back those after it (of that webhook: each webhook has its own loop) |
 * | body | `{"webhook": name, "root": the root's name, "event": {id, kind, task_id, run_id, epoch, detail, at}}` |
 * | signature | `x-longrun-signature: sha256=<hex HMAC-SHA256(key, timestamp + "." + body)>`, `x-longrun-timestamp` (Unix seconds) |
 * | success | a 2xx answer within 5 s; anything else (a redirect too) is a failure |
 * | retries | after `retry_after_ms` (default 1 s), doubled each time, at most 5 minutes apart (the lease is kept meanwhile, so no other process retries sooner) |
 * | dropped | never by delivery; only when the log itself prunes events a webhook had not reached (its newest 1,000,000 kept), and then a `webhook.skipped` event says which |
 * | failing | the first failure after a success is an event `webhook.failing` (name, event id, error, next attempt); the next success `webhook.recovered` |
 * | durable | the position is kept in the database per webhook: a restarted process goes on after the last event delivered |
 * | one sender | the process holding the webhook's lease (15 s, renewed while it works) delivers; another takes over when it lapses; only servers (serve, http, mcp) deliver, never a one-off command |
 * | at least once | a process killed between a 2xx and recording it sends that event again: receivers dedupe by `x-longrun-event-id` |
 * | starts | at the newest event when a webhook is first seen (`"from": "start"`: at the oldest the log keeps) |
 *
 * The signing key never leaves the process: not in an event, an error or a log line. A setting
 * that cannot be read delivers nothing (and says why in a `webhook.settings_invalid` event, once).
 */
import { createHmac, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Database, Tx } from "../db/database.ts";
import { readWebhooks, type WebhookSetting } from "../store/root_settings.ts";
import { kindMatches, PRUNED_THROUGH, type RootEvent, toEvent } from "./events.ts";

export const WEBHOOK_LEASE_MS = 15_000;
export const WEBHOOK_POST_TIMEOUT_MS = 5_000;
export const WEBHOOK_MAX_RETRY_MS = 300_000;
/** How many events one look at the log reads. */
const PAGE = 50;
/** What #post answers when the process stops mid-delivery. */
const STOPPED = "the process stopped";

/** The signature of a delivery: what a receiver computes with its copy of the key and compares. */
export function webhookSignature(key: string, timestamp: string, body: string): string {
  return "sha256=" + createHmac("sha256", key).update(`${timestamp}.${body}`).digest("hex");
}

export interface WebhookDeps {
  db: Database;
  settingsPath: string;
  /** The root's name, in every body: one receiver may serve several roots (event ids are per root). */
  root: string;
  now: () => Date;
  /** Aborts a delivery in flight (the root is closing): not a failure of the URL. */
  signal: AbortSignal;
  /** Resolves after `ms`, or at once when the root closes. */
  sleep: (ms: number) => Promise<void>;
}

interface HookState {
  failures: number;
  next_at: number;
  /** Where this process has read to (ahead of the stored position by events the webhook does not want). */
  cursor: number | null;
  stored: number;
}

const leaseKey = (name: string) => `webhook:${name}:lease`;
const cursorKey = (name: string) => `webhook:${name}:cursor`;

export class WebhookDelivery {
  readonly #d: WebhookDeps;
  readonly #owner = randomUUID();
  readonly #state = new Map<string, HookState>();
  /** Lease expiry (ms) per webhook this process holds. */
  readonly #held = new Map<string, number>();
  #settingsError: string | null = null;
  #hooks: WebhookSetting[] = [];

  constructor(deps: WebhookDeps) {
    this.#d = deps;
  }

  /**
   * Delivers until the root closes: reads the settings every `idleMs` and keeps one loop per
   * webhook they name (so one slow or failing URL holds up no other), each going on at once while
   * there is more to read and waiting `idleMs` when it is done; then gives up its leases.
   */
  async run(idleMs: number): Promise<void> {
    const loops = new Map<string, Promise<void>>();
    while (!this.#d.signal.aborted) {
      this.#hooks = await this.#settings();
      for (const h of this.#hooks) {
        if (loops.has(h.name)) continue;
        loops.set(h.name, this.#loop(h.name, idleMs).finally(() => loops.delete(h.name)));
      }
      await this.#d.sleep(idleMs);
    }
    await Promise.all(loops.values());
    await this.release().catch(() => {});
  }

  /** One webhook's loop, for as long as the settings name it. */
  async #loop(name: string, idleMs: number): Promise<void> {
    while (!this.#d.signal.aborted) {
      const h = this.#hooks.find((x) => x.name === name);
      if (!h) return;
      const more = await this.#deliver(h).catch(() => false);
      if (!more) await this.#d.sleep(idleMs);
    }
  }

  /** The webhooks the settings name now; none (and one `webhook.settings_invalid` event per new error) when they cannot be read. */
  async #settings(): Promise<WebhookSetting[]> {
    try {
      const hooks = readWebhooks(this.#d.settingsPath);
      this.#settingsError = null;
      return hooks;
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      if (why !== this.#settingsError) {
        this.#settingsError = why;
        await this.#d.db.write((tx) => event(tx, "webhook.settings_invalid", null, { error: why }, this.#d.now())).catch(() => {});
      }
      return [];
    }
  }

  /** Gives up the leases this process holds, so another process takes over at once. */
  async release(): Promise<void> {
    for (const name of this.#held.keys()) {
      await this.#d.db.write((tx) => tx.execute({ sql: "DELETE FROM root_meta WHERE key = ? AND json_extract(value, '$.owner') = ?", args: [leaseKey(name), this.#owner] }));
    }
    this.#held.clear();
  }

  /** One look at the log for `h`: delivers what is due; true when there is more to read at once. */
  async #deliver(h: WebhookSetting): Promise<boolean> {
    const st = this.#state.get(h.name) ?? { failures: 0, next_at: 0, cursor: null, stored: 0 };
    this.#state.set(h.name, st);
    // the lease is kept while waiting to retry too: no other process retries sooner
    if (!(await this.#lease(h.name))) {
      st.cursor = null; // another process delivers: read the stored position again when this one takes over
      return false;
    }
    if (this.#d.now().getTime() < st.next_at) return false;
    if (st.cursor === null) st.cursor = st.stored = await this.#storedCursor(h);
    await this.#pastPruned(h, st);
    const rows = (await this.#d.db.execute({ sql: "SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?", args: [st.cursor, PAGE] })).rows;
    for (const row of rows) {
      const e = toEvent(row);
      if (!kindMatches(e.kind, h.kinds)) {
        st.cursor = e.id;
        continue;
      }
      if (!(await this.#lease(h.name))) return false;
      const error = await this.#post(h, e);
      if (error === STOPPED) return false; // the process is stopping: not the URL's failure
      if (error !== null) {
        st.failures++;
        const wait = Math.min(h.retry_after_ms * 2 ** Math.min(st.failures - 1, 30), WEBHOOK_MAX_RETRY_MS);
        st.next_at = this.#d.now().getTime() + wait;
        if (st.failures === 1) {
          const detail = { webhook: h.name, event_id: e.id, error, next_attempt_at: new Date(st.next_at).toISOString() };
          await this.#d.db.write((tx) => event(tx, "webhook.failing", null, detail, this.#d.now()));
        }
        await this.#store(h.name, st);
        return false;
      }
      st.cursor = e.id;
      await this.#store(h.name, st);
      if (st.failures) {
        const detail = { webhook: h.name, event_id: e.id, failures: st.failures };
        st.failures = 0;
        st.next_at = 0;
        await this.#d.db.write((tx) => event(tx, "webhook.recovered", null, detail, this.#d.now()));
      }
    }
    // past events it does not want: stored now and then, not once per event
    if (st.cursor - st.stored >= PAGE * 4) await this.#store(h.name, st);
    return rows.length === PAGE;
  }

  /** A position the log has pruned past goes on from where it was cut, and a `webhook.skipped` event says what was never sent. */
  async #pastPruned(h: WebhookSetting, st: HookState): Promise<void> {
    const row = (await this.#d.db.execute({ sql: "SELECT value FROM root_meta WHERE key = ?", args: [PRUNED_THROUGH] })).rows[0];
    const through = row ? Number(row.value) : 0;
    if (st.cursor === null || st.cursor >= through) return;
    const detail = { webhook: h.name, after: st.cursor, through, reason: "the event log kept only its newest events" };
    await this.#d.db.write((tx) => event(tx, "webhook.skipped", null, detail, this.#d.now()));
    st.cursor = through;
    await this.#store(h.name, st);
  }

  /** POSTs one event; null when the URL answered 2xx, STOPPED when the process is stopping, else what went wrong (never the key). */
  async #post(h: WebhookSetting, e: RootEvent): Promise<string | null> {
    let key: string;
    try {
      key = "file" in h.secret ? readFileSync(h.secret.file, "utf8").trim() : (process.env[h.secret.env] ?? "").trim();
    } catch (err) {
      return `the signing key in secret_file cannot be read (${(err as { code?: string }).code ?? "error"})`;
    }
    if (!key) return "the signing key is empty (secret_file or secret_env)";
    const body = JSON.stringify({ webhook: h.name, root: this.#d.root, event: e });
    const timestamp = String(Math.floor(this.#d.now().getTime() / 1000));
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), WEBHOOK_POST_TIMEOUT_MS);
    const onClose = () => timeout.abort();
    this.#d.signal.addEventListener("abort", onClose);
    try {
      const res = await fetch(h.url, {
        method: "POST",
        body,
        redirect: "manual",
        signal: timeout.signal,
        headers: {
          "content-type": "application/json",
          "x-longrun-webhook": h.name,
          "x-longrun-event-id": String(e.id),
          "x-longrun-event-kind": e.kind,
          "x-longrun-timestamp": timestamp,
          "x-longrun-signature": webhookSignature(key, timestamp, body),
        },
      });
      await res.body?.cancel().catch(() => {});
      return res.status >= 200 && res.status < 300 ? null : `HTTP ${res.status}`;
    } catch (err) {
      if (timeout.signal.aborted) return this.#d.signal.aborted ? STOPPED : `no answer within ${WEBHOOK_POST_TIMEOUT_MS / 1000} s`;
      const code = (err as { code?: string; cause?: { code?: string } }).cause?.code ?? (err as { code?: string }).code;
      return `not delivered (${code ?? (err instanceof Error ? err.name : "error")})`;
    } finally {
      clearTimeout(timer);
      this.#d.signal.removeEventListener("abort", onClose);
    }
  }

  /** Holds the webhook's lease (taking it when free or lapsed, renewing it when half gone); false when another process holds it. */
  async #lease(name: string): Promise<boolean> {
    const now = this.#d.now().getTime();
    const until = this.#held.get(name);
    if (until !== undefined && until - now > WEBHOOK_LEASE_MS / 2) return true;
    const got = await this.#d.db.write(async (tx) => {
      const row = (await tx.execute({ sql: "SELECT value FROM root_meta WHERE key = ?", args: [leaseKey(name)] })).rows[0];
      if (row) {
        const v = JSON.parse(String(row.value)) as { owner: string; until: number };
        if (v.owner !== this.#owner && v.until > now) return false;
      }
      await tx.execute({
        sql: "INSERT INTO root_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        args: [leaseKey(name), JSON.stringify({ owner: this.#owner, until: now + WEBHOOK_LEASE_MS })],
      });
      return true;
    });
    if (got) this.#held.set(name, now + WEBHOOK_LEASE_MS);
    else this.#held.delete(name);
    return got;
  }

  /** The stored position; a webhook seen for the first time starts at the newest event. */
  async #storedCursor(h: WebhookSetting): Promise<number> {
    return this.#d.db.write(async (tx) => {
      const row = (await tx.execute({ sql: "SELECT value FROM root_meta WHERE key = ?", args: [cursorKey(h.name)] })).rows[0];
      if (row) return Number(row.value);
      const start = h.from === "start" ? 0 : Number((await tx.execute("SELECT COALESCE(MAX(seq), 0) AS n FROM events")).rows[0]!.n);
      await tx.execute({ sql: "INSERT INTO root_meta(key, value) VALUES (?, ?)", args: [cursorKey(h.name), String(start)] });
      return start;
    });
  }

  /** Stores the position (never backwards: a process that lost the lease cannot undo another's progress). */
  async #store(name: string, st: HookState): Promise<void> {
    const cursor = st.cursor ?? 0;
    await this.#d.db.write((tx) =>
      tx.execute({ sql: "UPDATE root_meta SET value = ? WHERE key = ? AND CAST(value AS INTEGER) < ?", args: [String(cursor), cursorKey(name), cursor] })
    );
    st.stored = Math.max(st.stored, cursor);
  }
}

function event(tx: Tx, kind: string, taskId: string | null, detail: Record<string, unknown>, at: Date) {
  return tx.execute({ sql: "INSERT INTO events(kind, task_id, detail, at) VALUES (?, ?, ?, ?)", args: [kind, taskId, JSON.stringify(detail), at.toISOString()] });
}
