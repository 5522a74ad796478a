/**
 * Idempotency keys: a write method called with `idempotency_key` keeps its first answer in the
 * root's memory.db (table `idempotency`, schema version 9) for `IDEMPOTENCY_WINDOW_MS`, so a host
 * that lost an answer (a timeout, a killed connection) can send the same call again and get that
 * answer instead of a second effect, also after a restart. The same key with another method or
 * other params is refused (`idempotency_conflict`). Only answers are kept: a call that failed
 * kept nothing and runs again. Within one server, calls of a root's lane run one at a time, so a
 * retry that arrives while the first call still runs waits for it and gets its answer.
 *
 * Each kept answer also keeps the ids it is about (`names`: the task, runs, receipts, charges,
 * contexts, adjustments, approvals its params and answer name, and the task current when it ran),
 * so a task.delete drops the answers about what it deletes: a replay never gives back deleted text.
 */
import { createHash } from "node:crypto";
import { IdempotencyConflictError } from "../core/errors.ts";
import type { Database } from "../db/database.ts";

/** How long a key's answer is kept: 24 hours. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

/** JSON with the keys of every object sorted, so equal params hash alike whatever their order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().filter((k) => (value as Record<string, unknown>)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** An id in params or an answer: a task's, or a run's, receipt's, charge's, context's, adjustment's, approval's or gap's. */
const ID_NAMED = /"(T_[0-9A-Za-z_]{1,80}|(?:R|RC|CH|C|ADJ|A|G)_\d{1,15})"/g;

/** The ids (ID_NAMED) that JSON text names, each once. */
export function idsNamed(json: string): string[] {
  return [...new Set([...json.matchAll(ID_NAMED)].map((m) => m[1]!))];
}

/**
 * Runs `call` once per key: the first answer of `method` with `params` under `key`, kept; the same
 * key again with the same method and params gives that answer without calling; with others, refused.
 * `about`: more ids the answer is about (the task current when it ran), kept with its own.
 */
export async function once(db: Database, key: string, method: string, params: Record<string, unknown>, call: () => Promise<unknown>, now = Date.now(), about: () => readonly string[] = () => []): Promise<unknown> {
  const { root: _root, ...rest } = params;
  const hash = createHash("sha256").update(`${method}\n${canonical(rest)}`).digest("hex");
  const seen = await db.values({ sql: "SELECT method, params_sha256, answer FROM idempotency WHERE key = ? AND at_ms >= ?", args: [key, now - IDEMPOTENCY_WINDOW_MS] });
  if (seen[0]) {
    const [firstMethod, firstHash, answer] = seen[0] as [string, string, string];
    if (firstMethod !== method || firstHash !== hash) throw new IdempotencyConflictError(key, method, String(firstMethod));
    return JSON.parse(String(answer));
  }
  const answer = await call();
  const text = JSON.stringify(answer ?? null);
  const names = JSON.stringify([...new Set([...idsNamed(JSON.stringify(rest)), ...idsNamed(text), ...about()])]);
  await db.batch([
    { sql: "DELETE FROM idempotency WHERE at_ms < ?", args: [now - IDEMPOTENCY_WINDOW_MS] },
    {
      sql: `INSERT INTO idempotency(key, method, params_sha256, answer, at_ms, names) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(key) DO UPDATE SET method = excluded.method, params_sha256 = excluded.params_sha256, answer = excluded.answer, at_ms = excluded.at_ms, names = excluded.names
            WHERE idempotency.at_ms < ?`,
      args: [key, method, hash, text, now, names, now - IDEMPOTENCY_WINDOW_MS],
    },
  ]);
  return answer;
}
