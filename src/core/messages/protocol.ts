/**
 * An error's message in the reader's language, rebuilt from its `kind` and `data` (never from the
 * English words): what the JSON-RPC front ends (stdio, HTTP) and the Claude Code hook send.
 * English is the error's own message; a kind or shape with no template here gets its kind's
 * headline with the English message after it, so nothing is ever lost.
 */
import { type Lang, MESSAGES, type MessageId, type Params, say } from "./catalog.ts";

/** What is read off an error to word it: the wire's error object, or a LongrunError. */
export interface ErrorLike {
  readonly message: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

const STORAGE_REASONS = new Set(["disk_full", "read_only", "io", "missing", "too_many_files", "unreachable", "refused"]);

const q = (v: unknown) => JSON.stringify(v);
const num = (v: unknown) => (typeof v === "number" ? v : String(v));
const str = (v: unknown) => (typeof v === "string" ? v : String(v));

/** The write gate's refusal for `data` (a `write_gate_violation`'s fields), or null for an unknown reason. */
export function gateText(data: Readonly<Record<string, unknown>>, lang: Lang): string | null {
  const action = q(data.action);
  switch (data.reason) {
    case "read_only":
      return say("gate.read_only", lang, { action, turn: num(data.turn) });
    case "stale_lease":
      return say("gate.stale_lease", lang, { action, lease_turn: num(data.lease_turn), turn: num(data.turn) });
    case "not_in_progress":
      return typeof data.status === "string" ? say("gate.not_in_progress", lang, { action, status: data.status }) : null;
    case "expired":
      return say("gate.expired", lang, { action, expires_at: str(data.expires_at) });
    case "uses_exhausted":
      return say("gate.uses_exhausted", lang, { action, max_uses: num(data.max_uses) });
    case "out_of_scope":
      return say("gate.out_of_scope", lang, { action, scope: q(data.scope) });
  }
  return null;
}

/** A size unit as the limit templates append it: nothing for a bare value. */
export function unitSuffix(unit: unknown): string {
  return unit === "value" || typeof unit !== "string" ? "" : ` ${unit}`;
}

function template(data: Readonly<Record<string, unknown>>, lang: Lang): [MessageId, Params] | null {
  switch (data.kind) {
    case "no_active_task":
      if (typeof data.task_id === "string" && typeof data.status === "string") return ["err.no_task_closed", { task_id: data.task_id, status: data.status }];
      return Object.keys(data).length === 1 ? ["err.no_task", {}] : null;
    case "transition_error": {
      const allowed = Array.isArray(data.allowed) ? (data.allowed as unknown[]).map(String) : [];
      if (allowed.length === 0) return ["err.transition_final", { from: str(data.from) }];
      return ["err.transition", { from: str(data.from), to: str(data.to), allowed: allowed.join(", ") }];
    }
    case "checkpoint_write_error": {
      const path = str(data.pending_path);
      const where = data.pending_kept === false ? say("err.checkpoint_lost", lang, { path }) : say("err.checkpoint_kept", lang, { path });
      const lease = say(data.lease_revoked === false ? "err.lease_not_ended" : "err.lease_ended", lang);
      return ["err.checkpoint_write", { cause: str(data.cause), where, lease }];
    }
    case "state_corrupt":
      return ["err.state_corrupt", { path: str(data.path), detail: str(data.detail) }];
    case "stale_epoch":
      return ["err.stale_epoch", { run_id: str(data.run_id), epoch: num(data.epoch), current_epoch: num(data.current_epoch) }];
    case "unauthorized":
      if (data.side_required === "host" && typeof data.method === "string" && data.side === "agent") {
        return ["err.host_method", { method: data.method, instead: data.method === "writes.enable" ? say("err.request_instead", lang) : "" }];
      }
      return null;
    case "limit_exceeded":
      return ["err.limit", { field: str(data.field), actual: num(data.actual), limit: num(data.limit), unit: unitSuffix(data.unit) }];
    case "not_found":
      return typeof data.what === "string" ? ["err.not_found", { what: data.what, id: q(data.id) }] : null;
    case "storage_error":
      if (!STORAGE_REASONS.has(str(data.reason))) return null;
      return ["err.storage", { path: str(data.path), what: say(`storage.${data.reason}` as MessageId, lang), detail: str(data.detail) }];
    case "memory_corrupt":
      return ["err.memory_corrupt", { path: str(data.path), detail: str(data.detail) }];
    case "content_missing": {
      const item = str(data.item);
      return [
        "err.content_missing",
        {
          item,
          path: str(data.path),
          state: say(data.reason === "missing" ? "content.missing" : "content.mismatch", lang),
          again: say(item.startsWith("context") ? "content.again_context" : "content.again_artifact", lang),
        },
      ];
    }
    case "idempotency_conflict": {
      const method = str(data.method);
      const first = data.first_method === method ? say("idempotency.other_params", lang, { method }) : str(data.first_method);
      return ["err.idempotency", { key: q(data.key), first }];
    }
    case "parse_error":
      return ["err.parse", {}];
    case "method_not_found":
      return typeof data.method === "string" ? ["err.method_not_found", { method: q(data.method) }] : null;
  }
  return null;
}

/** The message of a kind other than the gate's, filled from `data`; null where no template covers it. */
export function templateText(data: Readonly<Record<string, unknown>>, lang: Lang): string | null {
  const t = template(data, lang);
  return t ? say(t[0], lang, t[1]) : null;
}

/** The headline of a kind (every kind of the two error tables has one), or null. */
function headline(kind: unknown): MessageId | null {
  const id = `kind.${String(kind)}`;
  return Object.hasOwn(MESSAGES, id) ? (id as MessageId) : null;
}

/**
 * `error`'s message in `lang`: English as the error wrote it; otherwise the kind's template
 * filled from `data`, or its headline before the English message.
 * @example protocolText({ message: "Write refused: …", data: { kind: "write_gate_violation", reason: "read_only", action: "Bash", turn: 2 } }, "ko")
 */
export function protocolText(error: ErrorLike, lang: Lang): string {
  if (lang === "en") return error.message;
  const data = error.data ?? {};
  if (data.kind === "write_gate_violation") {
    // a refusal worded otherwise (a failed checkpoint ended the lease) keeps its own words
    if (gateText(data, "en") === error.message) return gateText(data, lang)!;
  } else {
    const text = templateText(data, lang);
    if (text !== null) return text;
  }
  const id = headline(data.kind);
  return id ? say(id, lang, { detail: error.message }) : error.message;
}
