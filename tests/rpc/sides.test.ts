/** Who may decide what: the host/agent split beyond the host-only methods. */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { RpcFixture } from "../ledger/rpc.ts";

describe("verification is the host's decision", () => {
  let f: RpcFixture;
  beforeEach(async () => {
    f = new RpcFixture();
    await f.ok("task.start", { description: "ship the parser" });
    await f.ok("task.transition", { to: "waiting_verification", reason: "done, please review" });
  });
  afterEach(() => f.close());

  for (const [method, params] of [
    ["task.transition", { to: "completed", reason: "I accept my own work" }],
    ["task.transition", { to: "in_progress", reason: "back to work, then complete myself" }],
    ["task.transition", { to: "failed", reason: "x" }],
    ["task.finish", { summary: "done" }],
  ] as [string, Record<string, unknown>][]) {
    test(`an agent cannot leave waiting_verification: ${method} ${JSON.stringify(params)}`, async () => {
      const e = await f.fail(method, params);
      assert.equal(e.data.kind, "unauthorized");
      assert.equal((await f.ok("task.status")).task.status, "waiting_verification");
    });
  }

  test("the host accepts, or sends the task back", async () => {
    assert.equal((await f.ok("task.transition", { to: "in_progress", reason: "needs one more test" }, "host")).task.status, "in_progress");
    await f.ok("task.transition", { to: "waiting_verification", reason: "again" });
    assert.equal((await f.ok("task.finish", { summary: "accepted" }, "host")).task.status, "completed");
  });
});

describe("actions and scope patterns are plain text", () => {
  let f: RpcFixture;
  beforeEach(async () => {
    f = new RpcFixture();
    await f.ok("task.start", { description: "t" });
  });
  afterEach(() => f.close());

  for (const [method, params] of [
    ["writes.require", { action: "Write a.txt\u0000.longrun/state.json" }],
    ["writes.require", { action: "Write a.txt\nBash rm -rf /" }],
    ["writes.require", { action: "Write \u001b[2Ka.txt" }],
    ["writes.enable", { reason: "r", scope: ["src/**\u0000"] }],
    ["writes.request", { reason: "r", scope: ["src/\n**"] }],
  ] as [string, Record<string, unknown>][]) {
    test(`control characters are invalid params: ${method} ${JSON.stringify(params)}`, async () => {
      const e = await f.fail(method, params, "host");
      assert.equal(e.code, -32602);
      assert.equal((await f.ok("task.status")).task.version, 1, "nothing changed");
    });
  }
});
