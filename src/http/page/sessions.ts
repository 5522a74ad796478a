/**
 * Who is looking at the status page: one-time login codes and the browser sessions they open.
 *
 * A code (in a link such as `/?login=CODE`) is exchanged once for a session; the session is a
 * random id in an HttpOnly cookie plus a random key the page keeps in its origin's localStorage
 * and sends as a header. Both must match: cookies are not separated by port, so another server on
 * the same host name (an agent's preview server, say) receives the cookie when the user visits
 * it, but not the key. Only digests are stored; every side comes from the code, and a code's side
 * from the token (or the start) that made it, so a session never speaks for more than its maker.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Side } from "../../rpc/method.ts";

/**
 * How many codes may wait unused, and how many sessions may be open, per side; the oldest of that
 * side go first (so the agent's logins never end the host's session).
 */
export const PAGE_LIMITS = { codes_per_side: 16, sessions_per_side: 32, code_ttl_seconds: 600, session_idle_seconds: 24 * 3600 } as const;

export interface PageSession {
  side: Side;
  /** The key the page must send with the cookie (handed out once, at login). */
  key: string;
  /** The cookie value. */
  id: string;
}

interface CodeEntry {
  side: Side;
  /** Milliseconds since the epoch, or null: valid until used (the link printed at start). */
  expires: number | null;
}

interface SessionEntry {
  side: Side;
  key: Buffer;
  seen: number;
}

const digest = (s: string): string => createHash("sha256").update(s).digest("base64url");
const secret = (): string => randomBytes(32).toString("base64url");
/** What a code, a session id and a key look like (base64url of 32 bytes); anything else is refused unhashed. */
const SHAPE = /^[A-Za-z0-9_-]{43}$/;

export class PageSessions {
  readonly #codes = new Map<string, CodeEntry>();
  readonly #sessions = new Map<string, SessionEntry>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * A new one-time code for `side`: valid once, for `ttlSeconds` (null: until used). At most
   * PAGE_LIMITS.codes_per_side wait per side; minting one more drops the oldest.
   */
  mint(side: Side, ttlSeconds: number | null = PAGE_LIMITS.code_ttl_seconds): string {
    const waiting = [...this.#codes].filter(([, c]) => c.side === side);
    if (waiting.length >= PAGE_LIMITS.codes_per_side) this.#codes.delete(waiting[0]![0]);
    const code = secret();
    this.#codes.set(digest(code), { side, expires: ttlSeconds === null ? null : this.#now() + ttlSeconds * 1000 });
    return code;
  }

  /** Exchanges a code for a new session, or null (unknown, used or expired). The code is spent either way. */
  redeem(code: string): PageSession | null {
    if (!SHAPE.test(code)) return null;
    const key = digest(code);
    const entry = this.#codes.get(key);
    if (!entry) return null;
    this.#codes.delete(key);
    if (entry.expires !== null && this.#now() >= entry.expires) return null;
    this.#prune();
    const open = [...this.#sessions].filter(([, e]) => e.side === entry.side);
    if (open.length >= PAGE_LIMITS.sessions_per_side) this.#sessions.delete(open[0]![0]);
    const session = { side: entry.side, key: secret(), id: secret() };
    this.#sessions.set(digest(session.id), { side: session.side, key: createHash("sha256").update(session.key).digest(), seen: this.#now() });
    return session;
  }

  /** The side of a session whose cookie and key both match, or null. */
  sideOf(id: string | undefined, key: string | undefined | null): Side | null {
    if (!id || !key || !SHAPE.test(id) || !SHAPE.test(key)) return null;
    const entry = this.#sessions.get(digest(id));
    if (!entry) return null;
    if (this.#now() - entry.seen > PAGE_LIMITS.session_idle_seconds * 1000) {
      this.#sessions.delete(digest(id));
      return null;
    }
    if (!timingSafeEqual(createHash("sha256").update(key).digest(), entry.key)) return null;
    entry.seen = this.#now();
    return entry.side;
  }

  /** Whether a cookie names a live session at all (the key is checked by `sideOf`). */
  known(id: string | undefined): boolean {
    return !!id && SHAPE.test(id) && this.#sessions.has(digest(id));
  }

  /** Ends a session (log out) when its cookie and key both match (the cookie alone reaches other ports); whether it ended. */
  end(id: string | undefined, key: string | undefined | null): boolean {
    if (this.sideOf(id, key) === null) return false;
    return this.#sessions.delete(digest(id!));
  }

  /** Ends every session and waiting code of `side` (its token was rotated: what it opened ends with it); how many. */
  endSide(side: Side): number {
    let n = 0;
    for (const m of [this.#codes, this.#sessions] as Map<string, { side: Side }>[]) for (const [k, e] of m) if (e.side === side && m.delete(k)) n++;
    return n;
  }

  #prune(): void {
    const now = this.#now();
    for (const [k, c] of this.#codes) if (c.expires !== null && now >= c.expires) this.#codes.delete(k);
    for (const [k, s] of this.#sessions) if (now - s.seen > PAGE_LIMITS.session_idle_seconds * 1000) this.#sessions.delete(k);
  }
}
