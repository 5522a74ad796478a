/**
 * The one error table (src/core/errors.ts `ERRORS`, `PROTOCOL_ERRORS`, `GATE_REASONS`): every view
 * derived from it agrees with it, and the wire values it gives are the ones the protocol has always
 * had. The `@ts-expect-error` lines are checked by `tsc -p .`: a table missing a kind must not compile.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ERROR_CODES,
  type ErrorKind,
  ERRORS,
  type ErrorSpec,
  errorKind,
  GATE_REASONS,
  type GateReason,
  isGateReason,
  LongrunError,
  PROTOCOL_ERRORS,
  STORAGE_KINDS,
  WIRE_ERRORS,
} from "../../src/core/errors.ts";
import { httpStatusOf, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, isServerFault, kindOfCode, METHOD_NOT_FOUND, PARSE_ERROR } from "../../src/rpc/errors.ts";

const KINDS = Object.keys(ERRORS) as ErrorKind[];
const ALL = [...Object.entries(ERRORS), ...Object.entries(PROTOCOL_ERRORS)] as [string, ErrorSpec][];

// Compile-level checks (tsc -p . covers tests/): each line below must be a type error.
const { idempotency_conflict: _dropped, ...missingOne } = ERRORS;
// @ts-expect-error a table without a kind does not satisfy Record<ErrorKind, ErrorSpec>
void (missingOne satisfies Record<ErrorKind, ErrorSpec>);
// @ts-expect-error nor does one with a kind that is not an ErrorKind
void ({ ...ERRORS, made_up: { code: -32099, http: 500, serverFault: true, storage: false, means: "x" } } satisfies Record<ErrorKind, ErrorSpec>);
const { out_of_scope: _droppedReason, ...missingReason } = GATE_REASONS;
// @ts-expect-error the gate's reasons must all be there too
void (missingReason satisfies Record<GateReason, { means: string; example: string }>);

describe("the one error table", () => {
  test("ERROR_CODES is ERRORS' codes, kind for kind and in the same order (system.describe lists them so)", () => {
    assert.deepEqual(Object.entries(ERROR_CODES), KINDS.map((k) => [k, ERRORS[k].code]));
  });

  test("the wire codes are the ones the protocol has always had", () => {
    assert.deepEqual(ERROR_CODES, {
      write_gate_violation: -32001,
      transition_error: -32002,
      checkpoint_write_error: -32003,
      state_corrupt: -32004,
      no_active_task: -32005,
      stale_epoch: -32006,
      budget_exhausted: -32007,
      unauthorized: -32008,
      limit_exceeded: -32009,
      conflict: -32010,
      not_found: -32011,
      storage_error: -32012,
      memory_corrupt: -32013,
      content_missing: -32014,
      idempotency_conflict: -32015,
    });
    assert.deepEqual([PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR], [-32700, -32600, -32601, -32602, -32603]);
  });

  test("no two kinds share a code, and kindOfCode gives each code's kind back", () => {
    const codes = ALL.map(([, e]) => e.code);
    assert.equal(new Set(codes).size, codes.length);
    for (const [kind, e] of ALL) assert.equal(kindOfCode(e.code), kind);
    assert.equal(kindOfCode(-1), "internal");
  });

  test("httpStatusOf is the table's http column; a kind it does not know is 500", () => {
    for (const [kind, e] of ALL) assert.equal(httpStatusOf(kind), e.http, kind);
    assert.deepEqual(Object.fromEntries(ALL.map(([k]) => [k, httpStatusOf(k)])), {
      parse_error: 400,
      invalid_request: 400,
      method_not_found: 404,
      invalid_params: 422,
      internal: 500,
      write_gate_violation: 403,
      transition_error: 409,
      checkpoint_write_error: 503,
      state_corrupt: 500,
      no_active_task: 409,
      stale_epoch: 409,
      budget_exhausted: 429,
      unauthorized: 401,
      limit_exceeded: 413,
      conflict: 409,
      not_found: 404,
      storage_error: 507,
      memory_corrupt: 500,
      content_missing: 410,
      idempotency_conflict: 409,
    });
    for (const odd of ["made_up", "", "constructor", "toString"]) assert.equal(httpStatusOf(odd), 500, odd);
  });

  test("the server faults (an error log line each) are the serverFault column", () => {
    const faults = ALL.filter(([k]) => isServerFault(k)).map(([k]) => k);
    assert.deepEqual(faults, ALL.filter(([, e]) => e.serverFault).map(([k]) => k));
    assert.deepEqual(new Set(faults), new Set(["internal", "storage_error", "state_corrupt", "memory_corrupt", "content_missing", "checkpoint_write_error"]));
    for (const odd of ["made_up", "ok", "constructor"]) assert.equal(isServerFault(odd), false, odd);
  });

  test("the storage kinds (a checkpoint still goes to the pending file) are the storage column", () => {
    assert.deepEqual([...STORAGE_KINDS], KINDS.filter((k) => ERRORS[k].storage));
    assert.deepEqual(new Set(STORAGE_KINDS), new Set(["conflict", "storage_error", "memory_corrupt"]));
    assert.ok(Object.values(PROTOCOL_ERRORS).every((e) => !e.storage));
  });

  test("WIRE_ERRORS holds both tables, and the two share no kind", () => {
    assert.equal(WIRE_ERRORS.size, KINDS.length + Object.keys(PROTOCOL_ERRORS).length);
    for (const [kind, e] of ALL) assert.equal(WIRE_ERRORS.get(kind), e);
  });

  test("an error of each kind carries the table's code and is recognised by errorKind", () => {
    for (const kind of KINDS) {
      const e = new LongrunError(kind, "x");
      assert.equal(e.code, ERRORS[kind].code);
      assert.equal(e.data.kind, kind);
      assert.equal(errorKind(e), kind);
    }
    assert.equal(errorKind(new Error("plain")), null);
    assert.equal(errorKind(Object.assign(new Error("x"), { kind: "made_up" })), null);
  });

  test("every row says what it means; every gate reason also gives an example", () => {
    for (const [kind, e] of ALL) assert.ok(e.means.length > 0, kind);
    for (const [reason, r] of Object.entries(GATE_REASONS)) {
      assert.ok(r.means.length > 0 && r.example.length > 0, reason);
      assert.equal(isGateReason(reason), true);
    }
    for (const odd of ["lease", "write_gate_violation", "constructor", "", undefined, 1]) assert.equal(isGateReason(odd), false, String(odd));
  });
});
