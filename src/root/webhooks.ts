/**
 * Webhooks (issue 28): a running longrun process (serve, http, mcp) POSTs the root's event log
 * (src/root/events.ts) to the URLs the host names in `.longrun/settings.json` `webhooks`, so a
 * host learns "a request needs approval", "owner stale", "budget exhausted" without holding a
 * stream open.
 *
 * | what | how |
 * |---|---|
 * | order | one event at a time, in the log's order; a failed one holds back those after it |
 * | body | `{"webhook": name, "event": {id, kind, task_id, run_id, epoch, detail, at}}` |
 * | signature | `x-longrun-signature: sha256=<hex HMAC-SHA256(key, timestamp + "." + body)>`, `x-longrun-timestamp` (Unix seconds) |
 * | success | a 2xx answer within 5 s; anything else (a redirect too) is a failure |
 * | retries | after `retry_after_ms` (default 1 s), doubled each time, at most 5 minutes apart; never dropped |
 * | failing | the first failure after a success is an event `webhook.failing` (name, event id, error, next attempt); the next success `webhook.recovered` |
 * | durable | the position is kept in the database per webhook: a restarted process goes on after the last event delivered |
 * | one sender | the process holding the webhook's lease (15 s, renewed while it works) delivers; another takes over when it lapses |
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
import { kindMatches, type RootEvent, toEvent } from "./events.ts";

export const WEBHOOK_LEASE_MS = 15_000;
export const WEBHOOK_POST_TIMEOUT_MS = 5_000;
export const WEBHOOK_MAX_RETRY_MS = 300_000;
/** How many events one look at the log reads. */
const PAGE = 50;

/** The signature of a delivery: what a receiver computes with its copy of the key and compares. */
export function webhookSignature(key: string, timestamp: string, body: string): string {
  return "sha256=" + createHmac("sha256", key).update(`${timestamp}.${body}`).digest("hex");
}

export interface WebhookDeps {
  db: Database;
  settingsPath: string;
  now: () => Date;
  /** Aborts a delivery in flight (the root is closing). */
  signal: AbortSignal;
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

  constructor(deps: WebhookDeps) {
    this.#d = deps;
  }

  /** One pass over the root's webhooks: delivers what is due. Returns how many events were delivered. */
  async pass(): Promise<number> {
    let hooks: WebhookSetting[];
    try {
      hooks = readWebhooks(this.#d.settingsPath);
      this.#settingsError = null;
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      if (why !== this.#settingsError) {
        this.#settingsError = why;
        await this.#d.db.write((tx) => event(tx, "webhook.settings_invalid", null, { error: why }, this.#d.now()));
      }
      return 0;
    }
    let n = 0;
    for (const h of hooks) {
      if (this.#d.signal.aborted) break;
      n += await this.#deliver(h);
    }
    return n;
  }

  /** Gives up the leases this process holds, so another process takes over at once. */
  async release(): Promise<void> {
    for (const name of this.#held.keys()) {
      await this.#d.db.write((tx) => tx.execute({ sql: "DELETE FROM root_meta WHERE key = ? AND json_extract(value, '$.owner') = ?", args: [leaseKey(name), this.#owner] }));
    }
    this.#held.clear();
  }

  async #deliver(h: WebhookSetting): Promise<number> {
    const st = this.#state.get(h.name) ?? { failures: 0, next_at: 0, cursor: null, stored: 0 };
    this.#state.set(h.name, st);
    const now = this.#d.now().getTime();
    if (now < st.next_at) return 0;
    if (!(await this.#lease(h.name))) {
      st.cursor = null; // another process delivers: read the stored position again when this one takes over
      return 0;
    }
    if (st.cursor === null) {
      st.cursor = st.stored = await this.#storedCursor(h);
    }
    const rows = (await this.#d.db.execute({ sql: "SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?", args: [st.cursor, PAGE] })).rows;
    let delivered = 0;
    for (const row of rows) {
      const e = toEvent(row);
      if (kindMatches(e.kind, h.kinds)) {
        if (!(await this.#lease(h.name))) return delivered;
        const error = await this.#post(h, e);
        if (error !== null) {
          st.failures++;
          const wait = Math.min(h.retry_after_ms * 2 ** Math.min(st.failures - 1, 30), WEBHOOK_MAX_RETRY_MS);
          st.next_at = this.#d.now().getTime() + wait;
          if (st.failures === 1) {
            const detail = { webhook: h.name, event_id: e.id, error, next_attempt_at: new Date(st.next_at).toISOString() };
            await this.#d.db.write((tx) => event(tx, "webhook.failing", null, detail, this.#d.now()));
          }
          await this.#store(h.name, st);
          return delivered;
        }
        delivered++;
        st.cursor = e.id;
        await this.#store(h.name, st);
        if (st.failures) {
          const detail = { webhook: h.name, event_id: e.id, failures: st.failures };
          st.failures = 0;
          st.next_at = 0;
          await this.#d.db.write((tx) => event(tx, "webhook.recovered", null, detail, this.#d.now()));
        }
      } else {
        st.cursor = e.id;
      }
    }
    // past events it does not want: stored now and then, not once per event
    if (st.cursor - st.stored >= PAGE * 4) await this.#store(h.name, st);
    return delivered;
  }

  /** POSTs one event; null when the URL answered 2xx, else what went wrong (never the key). */
  async #post(h: WebhookSetting, e: RootEvent): Promise<string | null> {
    let key: string;
    try {
      key = "file" in h.secret ? readFileSync(h.secret.file, "utf8").trim() : (process.env[h.secret.env] ?? "").trim();
    } catch (err) {
      return `the signing key in secret_file cannot be read (${(err as { code?: string }).code ?? "error"})`;
    }
    if (!key) return "the signing key is empty (secret_file or secret_env)";
    const body = JSON.stringify({ webhook: h.name, event: e });
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
      if (timeout.signal.aborted) return this.#d.signal.aborted ? "the process stopped" : `no answer within ${WEBHOOK_POST_TIMEOUT_MS / 1000} s`;
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
