/**
 * The JSON-RPC 2.0 specification's own examples (section 7), as a table, against the real
 * dispatcher on a real root. Methods the spec uses (subtract, sum, …) do not exist here, so they
 * answer -32601, exactly as the spec's "non-existent method" example does.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Dispatcher } from "../../src/rpc/dispatcher.ts";
import { allMethods } from "../../src/rpc/methods/index.ts";
import { RootRegistry } from "../../src/root/registry.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

type Expect = null | { id: unknown; code?: number; result?: true } | Expect[];

const CASES: [string, string, Expect][] = [
  ["call of a non-existent method", '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}', { id: "1", code: -32601 }],
  ["call with invalid JSON", '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]', { id: null, code: -32700 }],
  ["call with an invalid Request object", '{"jsonrpc": "2.0", "method": 1, "params": "bar"}', { id: null, code: -32600 }],
  [
    "batch call with invalid JSON",
    '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]',
    { id: null, code: -32700 },
  ],
  ["call with an empty Array", "[]", { id: null, code: -32600 }],
  ["call with an invalid Batch (but not empty)", "[1]", [{ id: null, code: -32600 }]],
  ["call with invalid Batch", "[1,2,3]", [{ id: null, code: -32600 }, { id: null, code: -32600 }, { id: null, code: -32600 }]],
  [
    "mixed batch: calls, a notification, an invalid request, an unknown method",
    `[
      {"jsonrpc": "2.0", "method": "task.status", "id": "1"},
      {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
      {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
      {"foo": "boo"},
      {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
      {"jsonrpc": "2.0", "method": "system.describe", "id": "9"}
    ]`,
    [{ id: "1", result: true }, { id: "2", code: -32601 }, { id: null, code: -32600 }, { id: "5", code: -32601 }, { id: "9", result: true }],
  ],
  [
    "batch of notifications only",
    '[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]',
    null,
  ],
  ["a notification is never answered, even when it fails", '{"jsonrpc": "2.0", "method": "task.transition", "params": {"to": "nope"}}', null],
  ["a string id comes back a string", '{"jsonrpc": "2.0", "method": "task.status", "id": "1"}', { id: "1", result: true }],
  ["a number id comes back a number", '{"jsonrpc": "2.0", "method": "task.status", "id": 1}', { id: 1, result: true }],
  ["a null id is a request and is answered with null", '{"jsonrpc": "2.0", "method": "task.status", "id": null}', { id: null, result: true }],
  ["an object id is an invalid request", '{"jsonrpc": "2.0", "method": "task.status", "id": {}}', { id: null, code: -32600 }],
  ["a wrong jsonrpc version is an invalid request", '{"jsonrpc": "1.0", "method": "task.status", "id": 3}', { id: 3, code: -32600 }],
  ["params by position are invalid params", '{"jsonrpc": "2.0", "method": "writes.require", "params": ["x"], "id": 4}', { id: 4, code: -32602 }],
  ["a missing required param is invalid params", '{"jsonrpc": "2.0", "method": "writes.require", "params": {}, "id": 5}', { id: 5, code: -32602 }],
  ["an unknown param is invalid params", '{"jsonrpc": "2.0", "method": "task.status", "params": {"rooot": "/x"}, "id": 6}', { id: 6, code: -32602 }],
];

describe("JSON-RPC 2.0 specification examples", () => {
  let dir = "";
  let roots: RootRegistry;
  let d: Dispatcher;
  before(() => {
    dir = tempDir();
    roots = new RootRegistry({ defaultRoot: dir });
    d = new Dispatcher({ methods: allMethods(), roots });
  });
  after(async () => {
    await roots.closeAll();
    removeDir(dir);
  });

  function check(actual: unknown, expected: Expect, where: string): void {
    if (Array.isArray(expected)) {
      assert.ok(Array.isArray(actual), `${where}: expected a batch answer`);
      assert.equal(actual.length, expected.length, `${where}: answers`);
      // answers may come in any order; match them by id and kind
      const remaining = [...actual];
      for (const e of expected) {
        const i = remaining.findIndex((a) => {
          try {
            check(a, e, where);
            return true;
          } catch {
            return false;
          }
        });
        assert.ok(i >= 0, `${where}: no answer like ${JSON.stringify(e)} in ${JSON.stringify(actual)}`);
        remaining.splice(i, 1);
      }
      return;
    }
    if (expected === null) {
      assert.equal(actual, null, `${where}: expected no answer at all`);
      return;
    }
    const a = actual as Record<string, unknown>;
    assert.equal(a.jsonrpc, "2.0");
    assert.deepEqual(a.id, expected.id, `${where}: id`);
    assert.ok(("result" in a) !== ("error" in a), `${where}: exactly one of result and error`);
    if (expected.code !== undefined) {
      const err = a.error as { code: number; message: string; data: { kind: string } };
      assert.equal(err?.code, expected.code, `${where}: ${JSON.stringify(a)}`);
      assert.equal(typeof err.message, "string");
      assert.equal(typeof err.data.kind, "string");
    } else {
      assert.ok("result" in a, `${where}: ${JSON.stringify(a)}`);
    }
  }

  for (const [name, text, expected] of CASES) {
    test(name, async () => {
      const out = await d.handleText(text, { side: "host", via: "test" });
      check(out === null ? null : JSON.parse(out), expected, name);
    });
  }

  test("invalid params carry the valibot issues in data", async () => {
    const out = JSON.parse((await d.handleText('{"jsonrpc":"2.0","id":1,"method":"task.transition","params":{"to":"done","reason":"x"}}', { side: "host", via: "test" }))!);
    assert.equal(out.error.code, -32602);
    assert.equal(out.error.data.kind, "invalid_params");
    assert.equal(out.error.data.field, "to");
    assert.ok(Array.isArray(out.error.data.issues) && out.error.data.issues.length >= 1);
  });

  test("a batch over the limit is refused whole with limit_exceeded", async () => {
    const batch = JSON.stringify(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "task.status" })));
    const out = JSON.parse((await d.handleText(batch, { side: "host", via: "test" }))!);
    assert.equal(out.error.code, -32009);
    assert.equal(out.error.data.field, "batch");
    assert.equal(out.error.data.limit, 100);
    assert.equal(out.error.data.actual, 101);
  });

  test("an agent calling a host method is refused with unauthorized and nothing changes", async () => {
    await d.handleText('{"jsonrpc":"2.0","id":1,"method":"task.start","params":{"description":"x"}}', { side: "host", via: "test" });
    const out = JSON.parse((await d.handleText('{"jsonrpc":"2.0","id":2,"method":"writes.enable","params":{"reason":"me"}}', { side: "agent", via: "test" }))!);
    assert.equal(out.error.code, -32008);
    assert.equal(out.error.data.kind, "unauthorized");
    const st = JSON.parse((await d.handleText('{"jsonrpc":"2.0","id":3,"method":"task.status"}', { side: "agent", via: "test" }))!);
    assert.equal(st.result.task.access_mode, "read_only");
  });
});
