/**
 * Every refusal the contract can give, made by the real code (the gate's decision for each
 * reason, the error classes with their own messages), as an MCP agent reads it: no JSON-RPC
 * method names, no "the host", no "lease"; the next MCP tool or the user's action named, the
 * grant path of the setup (`/approve` with the hooks, else `longrun grant`), in the project's
 * language. Pure:
 * the refusals that need an injected failure (a full disk, an expired approval) are covered here.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CheckpointWriteError, ConflictError, LimitExceededError, MemoryCorruptError, NoActiveTaskError, NotFoundError, StaleEpochError, StateCorruptError, StorageError, UnauthorizedError } from "../../src/core/errors.ts";
import { checkGate, grantLease } from "../../src/core/lease.ts";
import { newTaskState, type TaskState } from "../../src/core/task.ts";
import { mcpMessage, type Wording } from "../../src/mcp/errors.ts";
import { selectTools } from "../../src/mcp/tool_sets.ts";
import { toErrorObject } from "../../src/rpc/errors.ts";
import { RPC_METHOD_NAME } from "./helpers.ts";

const NOW = new Date("2026-12-01T12:00:00Z");
const wording = (set = "default", setup: Partial<Wording> = {}): Wording => ({ offered: new Set(selectTools(set).map((t) => t.name)), approve: "/approve", lang: "en", ...setup });

function task(fields: Partial<TaskState> = {}): TaskState {
  return newTaskState({ task_id: "T_20261201_120000_ab12", description: "d", keywords: [], status: "in_progress", turn_index: 3, ...fields }, NOW.toISOString());
}

function granted(input: { scope?: string[]; ttl_seconds?: number; max_uses?: number } = {}, fields: Partial<TaskState> = {}): TaskState {
  return grantLease(task(fields), { reason: "ok", granted_by: "host:test", scope: input.scope ?? null, ttl_seconds: input.ttl_seconds ?? null, max_uses: input.max_uses ?? null }, NOW);
}

function refusal(state: TaskState, action = "edit src/a.ts", at = NOW) {
  const d = checkGate(state, action, at);
  assert.equal(d.ok, false);
  return (d as { error: Error }).error;
}

const read = (e: unknown, set?: string, setup?: Partial<Wording>) => mcpMessage(toErrorObject(e), wording(set, setup));

/** The gate's refusal for each reason, by the real check. */
function gateRefusals(): Error[] {
  const spent = { ...granted({ max_uses: 1 }) };
  spent.lease = { ...spent.lease!, uses: 1 };
  return [
    refusal(task()),
    refusal({ ...granted(), turn_index: 4 }),
    refusal(granted({ ttl_seconds: 60 }), "edit src/a.ts", new Date(NOW.getTime() + 61_000)),
    refusal(spent),
    refusal(granted({ scope: ["docs/**"] })),
    refusal(granted({}, { status: "blocked" })),
  ];
}

function clean(text: string): void {
  assert.doesNotMatch(text, RPC_METHOD_NAME, text);
  assert.doesNotMatch(text, /\bthe host\b|\blease\b/, text);
}

describe("MCP wording of every refusal", () => {
  test("the write check, for each reason the gate gives, says to ask the user to approve", () => {
    const stale = { ...granted(), turn_index: 4 };
    const spent = { ...granted({ max_uses: 1 }) };
    spent.lease = { ...spent.lease!, uses: 1 };
    const cases: [string, Error][] = [
      ["read_only", refusal(task())],
      ["stale_lease", refusal(stale)],
      ["expired", refusal(granted({ ttl_seconds: 60 }), "edit src/a.ts", new Date(NOW.getTime() + 61_000))],
      ["uses_exhausted", refusal(spent)],
      ["out_of_scope", refusal(granted({ scope: ["docs/**"] }))],
      ["not_in_progress", refusal(granted({}, { status: "blocked" }))],
    ];
    for (const [reason, e] of cases) {
      assert.equal((e as unknown as { data: { reason: string } }).data.reason, reason);
      const text = read(e);
      clean(text);
      assert.match(text, /^Not approved: /, reason);
      assert.match(text, /ask the user to approve( again)? \(they type \/approve/i, reason);
    }
    assert.match(read(refusal(granted({ scope: ["docs/**"] }))), /outside what the user approved \(docs\/\*\*\)/);
    assert.match(read(refusal(granted({}, { status: "blocked" }))), /Call task_resume if it is paused, else ask the user to move it back/);
    assert.match(read(refusal(granted({}, { status: "blocked" })), "all"), /else call task_transition with to: "in_progress"/);
  });

  test("the other refusals name the MCP tool to call, or what to tell the user", () => {
    const cases: [Error, RegExp, string?][] = [
      [new NoActiveTaskError(), /call task_start/],
      [new NoActiveTaskError("x", { task_id: "T_1", status: "completed" }), /task T_1 is completed\. Call task_start/],
      [new CheckpointWriteError("/p/.longrun/pending_checkpoint.json", new Error("disk full")), /kept, and task_resume saves it.*storage needs attention/],
      [new CheckpointWriteError("/p/.longrun/pending_checkpoint.json", new Error("disk full"), { pendingError: "read-only" }), /could not be kept either/],
      [new StateCorruptError("/p/memory.db", "not JSON"), /call task_recover/, "all"],
      [new StateCorruptError("/p/memory.db", "not JSON"), /they can run `longrun recover`/],
      [new StaleEpochError("R_0001", 1, 2), /run_claim/, "research"],
      [new ConflictError("Writes not granted: task T_1 is paused, not in_progress; call task.resume or task.transition to in_progress first", { reason: "not_in_progress", task_id: "T_1", status: "paused" }), /call task_resume first/],
      [new ConflictError("x", { reason: "not_in_progress", task_id: "T_1", status: "blocked" }), /call task_transition with to: "in_progress"/, "all"],
      [new UnauthorizedError("Refused: task T_1 is waiting_verification, and only the host (the person verifying) decides what happens next (task.finish); ask the user to accept it or send it back", { side_required: "host" }), /only the user .*\(task_finish\)/],
      [new NotFoundError("memory", "S_0009", "; memory.search lists what exists"), /memory_search lists what exists/],
      [new NotFoundError("run", "R_0009", "; run.start creates one"), /run_start \(not offered by this server: the user can add it with --tools\)/],
      [new LimitExceededError("content", 10, 12, "characters"), /"content" is 12 characters, the most is 10 characters/],
      [new StorageError("disk_full", "/p/memory.db", "SQLITE_FULL"), /disk .* is full/],
      [new MemoryCorruptError("/p/memory.db", "not a database"), /longrun recover --accept-memory/],
      [new Error("boom"), /check task_status before retrying/],
    ];
    for (const [e, expected, set] of cases) {
      const text = read(e, set);
      clean(text);
      assert.match(text, expected, text);
    }
  });
  test("without the Claude Code hooks the write check names the person's command and the page, never /approve", () => {
    for (const e of gateRefusals()) {
      const text = read(e, undefined, { approve: null });
      clean(text);
      assert.match(text, /longrun grant ".*".*longrun open/, text);
      assert.doesNotMatch(text, /\/approve/, text);
    }
  });

  test("in Chinese and Korean the refusals are in that language, the tools and the grant path named as in English", () => {
    for (const [lang, script] of [["zh", /\p{Script=Han}/u], ["ko", /\p{Script=Hangul}/u]] as const) {
      for (const e of gateRefusals()) {
        for (const approve of ["/approve", null]) {
          const text = read(e, "all", { lang, approve });
          assert.match(text, script, text);
          assert.doesNotMatch(text, /Not approved|ask the user/, text);
          assert.match(text, approve ? /\/approve/ : /longrun grant/, text);
          assert.doesNotMatch(text, RPC_METHOD_NAME, text);
        }
      }
      const none = read(new NoActiveTaskError(), "default", { lang });
      assert.match(none, /task_start/);
      assert.match(none, script);
    }
  });
});
