/**
 * The one catalog of people-facing messages (src/core/messages/): every id in English, Chinese
 * and Korean with the same placeholders, its example filling every one; the English the core
 * raises is the catalog's; a refusal in another language changes the message only, never `kind`,
 * `code`, `data` or the reason code. In process.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ContentMissingError,
  ERRORS,
  IdempotencyConflictError,
  MemoryCorruptError,
  NoActiveTaskError,
  PROTOCOL_ERRORS,
  StaleEpochError,
  StateCorruptError,
  StorageError,
  TransitionError,
} from "../../src/core/errors.ts";
import { checkGate, grantLease } from "../../src/core/lease.ts";
import { AGENT_MESSAGES } from "../../src/core/messages/agent.ts";
import { fill, LANGS, MESSAGES, placeholdersOf } from "../../src/core/messages/catalog.ts";
import { ERROR_MESSAGES, KIND_MESSAGES } from "../../src/core/messages/errors.ts";
import { GATE_MESSAGES, GRANT_MESSAGES, HOOK_MESSAGES } from "../../src/core/messages/gate.ts";
import { PAGE_MESSAGES } from "../../src/core/messages/page.ts";
import { protocolText, templateText } from "../../src/core/messages/protocol.ts";
import { newTaskState, type TaskState } from "../../src/core/task.ts";
import { localized, toErrorObject } from "../../src/rpc/errors.ts";

const NOW = new Date("2026-12-01T12:00:00Z");
const HAN = /\p{Script=Han}/u;
const HANGUL = /\p{Script=Hangul}/u;

function task(fields: Partial<TaskState> = {}): TaskState {
  return newTaskState({ task_id: "T_20261201_120000_ab12", description: "d", keywords: [], status: "in_progress", turn_index: 3, ...fields }, NOW.toISOString());
}
const granted = (input: { scope?: string[]; ttl_seconds?: number; max_uses?: number } = {}, fields: Partial<TaskState> = {}) =>
  grantLease(task(fields), { reason: "ok", granted_by: "host:test", scope: input.scope ?? null, ttl_seconds: input.ttl_seconds ?? null, max_uses: input.max_uses ?? null }, NOW);

/** One refusal of the gate for each reason, made by the real check. */
function gateRefusals(): Error[] {
  const spent = granted({ max_uses: 1 });
  spent.lease = { ...spent.lease!, uses: 1 };
  const cases: [TaskState, Date][] = [
    [task(), NOW],
    [{ ...granted(), turn_index: 4 }, NOW],
    [granted({}, { status: "paused" }), NOW],
    [granted({ ttl_seconds: 60 }), new Date(NOW.getTime() + 61_000)],
    [spent, NOW],
    [granted({ scope: ["docs/**"] }), NOW],
  ];
  return cases.map(([state, at]) => {
    const d = checkGate(state, "Write src/a.ts", at);
    assert.equal(d.ok, false);
    return (d as { error: Error }).error;
  });
}

/** Errors of the core whose English is a catalog template filled from their `data`. */
const CORE_ERRORS: Error[] = [
  new NoActiveTaskError(),
  new TransitionError("completed", "completed", []),
  new StateCorruptError("/p/.longrun/state.json", "not JSON"),
  new StaleEpochError("R_0001", 1, 2),
  new StorageError("disk_full", "/p/memory.db", "SQLITE_FULL"),
  new StorageError("unreachable", "libsql://x", "ECONNREFUSED"),
  new MemoryCorruptError("/p/memory.db", "not a database"),
  new ContentMissingError("/p/raw_data/ab", "artifact report v1", "missing"),
  new ContentMissingError("/p/raw_data/cd", "context C_1", "mismatch"),
  new IdempotencyConflictError("k1", "task.checkpoint", "task.checkpoint"),
  new IdempotencyConflictError("k1", "task.checkpoint", "memory.save"),
];

describe("the message catalog", () => {
  test("every id has English, Chinese and Korean, with the same placeholders, and its example fills them all", () => {
    for (const [id, m] of Object.entries(MESSAGES)) {
      const names = placeholdersOf(m.en);
      assert.deepEqual(Object.keys(m.example).sort(), names, `${id}: the example gives exactly the placeholders`);
      for (const lang of LANGS) {
        assert.equal(typeof m[lang], "string", `${id}.${lang}`);
        assert.ok(m[lang].length > 0, `${id}.${lang} is empty`);
        assert.deepEqual(placeholdersOf(m[lang]), names, `${id}.${lang} has the placeholders of the English`);
        assert.doesNotMatch(fill(m[lang], m.example), /\{[a-z_]+\}/, `${id}.${lang}: nothing left unfilled`);
      }
      // words of their own, not the English copied (a template of only placeholders has none)
      assert.match(m.zh, HAN, `${id}.zh is Chinese`);
      assert.match(m.ko, HANGUL, `${id}.ko is Korean`);
    }
  });

  test("no id is defined twice across the catalog's tables", () => {
    const tables = [GATE_MESSAGES, GRANT_MESSAGES, HOOK_MESSAGES, ERROR_MESSAGES, KIND_MESSAGES, AGENT_MESSAGES, PAGE_MESSAGES];
    const total = tables.reduce((n, t) => n + Object.keys(t).length, 0);
    assert.equal(Object.keys(MESSAGES).length, total);
  });

  test("every error kind of the wire has a headline in every language", () => {
    for (const kind of [...Object.keys(ERRORS), ...Object.keys(PROTOCOL_ERRORS)]) {
      assert.ok(Object.hasOwn(MESSAGES, `kind.${kind}`), `kind.${kind}`);
    }
  });

  test("the gate's English refusals are the catalog's English, reason by reason", () => {
    const refusals = gateRefusals();
    assert.deepEqual(refusals.map((e) => (e as unknown as { data: { reason: string } }).data.reason), ["read_only", "stale_lease", "not_in_progress", "expired", "uses_exhausted", "out_of_scope"]);
    for (const e of refusals) {
      const o = toErrorObject(e);
      const reason = String(o.data!.reason);
      assert.equal(o.message, fill(MESSAGES[`gate.${reason}` as keyof typeof MESSAGES].en, templateParams(o.data!)), reason);
      // and a translation is built from the fields, not from the English words
      assert.match(protocolText(o, "zh"), HAN, reason);
      assert.match(protocolText(o, "ko"), HANGUL, reason);
    }
  });

  test("the core's errors say in English what the catalog's English says; in zh and ko each has its own template", () => {
    for (const e of CORE_ERRORS) {
      const o = toErrorObject(e);
      const zh = protocolText(o, "zh");
      const ko = protocolText(o, "ko");
      assert.equal(protocolText(o, "en"), o.message);
      assert.equal(templateText(o.data!, "en"), o.message, "the catalog's English is the core's");
      // a template, not the headline in front of the English
      assert.ok(!zh.includes(o.message) && !ko.includes(o.message), `${o.data!.kind}: ${zh}`);
      assert.match(zh, HAN);
      assert.match(ko, HANGUL);
    }
  });

  test("a message no template covers keeps its English after the kind's headline", () => {
    const o = { code: -32010, message: "Conflict: the state changed underneath; re-read and retry", data: { kind: "conflict", reason: "cas" } };
    assert.equal(protocolText(o, "zh"), `冲突：${o.message}`);
    assert.equal(protocolText(o, "ko"), `충돌: ${o.message}`);
    assert.equal(protocolText({ message: "x", data: { kind: "made_up" } }, "zh"), "x");
  });

  test("in every language only the message changes: code, kind, data and the reason code stay the same", () => {
    for (const e of [...gateRefusals(), ...CORE_ERRORS]) {
      const o = toErrorObject(e);
      const seen = new Set<string>();
      for (const lang of LANGS) {
        for (const approve of [null, "/approve"]) {
          const l = localized(o, { lang, approve });
          assert.equal(l.code, o.code);
          assert.deepEqual(l.data, o.data);
          seen.add(l.message);
        }
      }
      assert.ok(seen.size >= 3, `${o.data!.kind}: one message per language`);
    }
  });
});

/** The placeholders of a gate template, read from a refusal's fields as the core fills them. */
function templateParams(d: Record<string, unknown>): Record<string, string> {
  return {
    action: JSON.stringify(d.action),
    turn: String(d.turn),
    lease_turn: String(d.lease_turn),
    status: String(d.status),
    expires_at: String(d.expires_at),
    max_uses: String(d.max_uses),
    scope: JSON.stringify(d.scope),
  };
}
