/**
 * Strings come back exactly as they were given, or are refused at the door: a NUL character, an
 * unpaired surrogate, a request id or integer beyond 2^53 - through the compiled binary over stdio.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { Server, TARGETS } from "../support/server.ts";

describe("what cannot round-trip is refused, never altered", () => {
  let root = "";
  let s: Server;
  before(() => {
    root = tempDir();
    s = new Server(TARGETS[0]!, ["serve", "--root", root]);
  });
  after(async () => {
    await s.close();
    removeDir(root);
  });

  test("a NUL character in memory.save, memory.search or task.start is invalid_params naming the field, and nothing is stored", async () => {
    for (const [method, params, field] of [
      ["memory.save", { type: "note", title: "t", content: "before\u0000after", keywords: [] }, "content"],
      ["memory.save", { type: "note", title: "t", content: "c", keywords: ["k\u0000"] }, "keywords.0"],
      ["memory.search", { query: "before\u0000after" }, "query"],
      ["task.start", { description: "goal\u0000x" }, "description"],
    ] as const) {
      const e = await s.error(method, params);
      assert.equal(e.data.kind, "invalid_params", method);
      assert.equal(e.data.field, field);
      assert.match(e.message, /NUL character/);
    }
    assert.equal((await s.result("memory.search", { query: "before" })).hits.length, 0, "nothing was saved");
    assert.equal((await s.result("task.status", {})).task, null, "no task was started");
  });

  test("an unpaired surrogate is refused (UTF-8 cannot store it); a well-formed astral character round-trips exactly", async () => {
    const e = await s.error("memory.save", { type: "note", title: "lone \ud800 here", content: "c", keywords: [] });
    assert.equal(e.data.field, "title");
    assert.match(e.message, /unpaired UTF-16 surrogate/);
    const text = "emoji 🧭 and 漢字 and \u00e9\u0301 and tab\tnewline\n end";
    const saved = await s.result("memory.save", { type: "note", title: "exact", content: text, keywords: ["exact"] });
    const got = (await s.result("memory.get", { id: saved.id })).record;
    assert.equal(got.content, text);
    assert.equal(got.size, new TextEncoder().encode(text).length);
  });

  test("a request id beyond 2^53 is an invalid request answered with id null (its digits are already lost); a string id is echoed exactly", async () => {
    await s.write('{"jsonrpc":"2.0","id":9007199254740993,"method":"task.status","params":{}}\n');
    await s.write('{"jsonrpc":"2.0","id":"9007199254740993","method":"system.describe","params":{}}\n');
    const big = await s.answer(null);
    assert.equal((big.error as { data: { kind: string } }).data.kind, "invalid_request");
    assert.match((big.error as { message: string }).message, /2\^53/);
    const str = await s.answer("9007199254740993");
    assert.ok(str.result, "a string id works");
  });

  test("an integer parameter beyond 2^53 is refused, not rounded", async () => {
    await s.result("task.start", { description: "budgets with huge numbers" });
    const e = await s.error("run.start", { owner: "exec", budget: { tokens: 2 ** 60 } });
    assert.equal(e.data.kind, "invalid_params");
    assert.equal(e.data.field, "budget.tokens");
    assert.match(e.message, /2\^53/);
  });
});
