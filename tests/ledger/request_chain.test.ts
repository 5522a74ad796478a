/**
 * The request chain (local, and on sqld under LONGRUN_TEST_STORE=sqld): the host records with each
 * model request the sha256 digests of what it sent, its question and each constraint as sent;
 * run.get shows for each request whether the original question and every constraint went into it,
 * and which requests drifted.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, test } from "node:test";
import { RpcFixture } from "./rpc.ts";

const sha = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");
const QUESTION = "Compare the two theme funds with my holdings.";
const CONSTRAINTS = ["Do not use my personal holdings", "Compare on 2026-06-30 only"];

describe("the request chain", () => {
  let fx: RpcFixture;
  beforeEach(() => (fx = new RpcFixture()));
  afterEach(() => fx.close());

  test("each model request shows whether the question and every constraint went into it; a reworded question or a dropped constraint is drift", async () => {
    await fx.ok("task.start", { description: QUESTION });
    const run = (await fx.ok("run.start", { owner: "lead", tools: ["model", "fetch"], constraints: CONSTRAINTS })).run;
    const begin = (key: string, sent?: Record<string, unknown>, kind = "model_request") =>
      fx.call("receipt.begin", { run_id: run.run_id, epoch: 1, tool: kind === "model_request" ? "model" : "fetch", kind, idempotency_key: key, args: { key }, ...(sent ? { sent } : {}) });
    const whole = sha("the whole first request");
    assert.ok((await begin("r1", { digest: whole, question: sha(QUESTION), constraints: CONSTRAINTS.map(sha) })).result);
    assert.ok((await begin("r2", { digest: sha("second"), question: sha("Compare the theme funds."), constraints: [sha(CONSTRAINTS[0]!)] })).result);
    assert.ok((await begin("r3")).result, "a request with nothing recorded");
    assert.ok((await begin("f1", undefined, "tool_call")).result, "a tool call is not part of the chain");
    const chain = (await fx.ok("run.get", { run_id: run.run_id })).request_chain;
    assert.deepEqual([chain.question_sha256, chain.constraints_sha256], [sha(QUESTION), CONSTRAINTS.map(sha)]);
    assert.deepEqual(
      chain.requests.map((r: { digest: string | null; question: string; constraints_missing: { index: number }[] | null; drifted: boolean }) => [r.digest, r.question, r.constraints_missing?.map((c) => c.index) ?? null, r.drifted]),
      [[whole, "carried", [], false], [sha("second"), "differs", [1], true], [null, "not_recorded", null, false]],
    );
    assert.equal(chain.requests[1].constraints_missing[0].text, CONSTRAINTS[1]);
    assert.deepEqual([chain.drifted, chain.not_recorded], [1, 1]);
    // the receipt keeps what was recorded
    const listed = (await fx.ok("receipt.list", { run_id: run.run_id })).receipts;
    assert.equal(listed[0].sent.digest, whole);
  });

  test("sent goes with a model request only, and only as sha256 digests; nothing is recorded by a refusal", async () => {
    await fx.ok("task.start", { description: QUESTION });
    const run = (await fx.ok("run.start", { owner: "lead", tools: ["model", "fetch"] })).run;
    const onTool = await fx.fail("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "fetch", idempotency_key: "k", args: {}, sent: { digest: sha("x") } });
    assert.deepEqual([onTool.data.kind, onTool.data.field], ["invalid_params", "sent"]);
    const notHex = await fx.fail("receipt.begin", { run_id: run.run_id, epoch: 1, tool: "model", kind: "model_request", idempotency_key: "k", args: {}, sent: { digest: "the prompt itself" } });
    assert.equal(notHex.data.kind, "invalid_params");
    assert.match(notHex.message, /sha256/);
    assert.deepEqual((await fx.ok("receipt.list", { run_id: run.run_id })).receipts, []);
  });
});
