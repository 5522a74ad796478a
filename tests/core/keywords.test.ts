import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { extractKeywords, normalizeKeywords } from "../../src/core/keywords.ts";

describe("keyword extraction for the search before a task", () => {
  test("English words, minus stop words and short words", () => {
    assert.deepEqual(extractKeywords("Fix the timeout in the payment adapter"), ["Fix", "timeout", "payment", "adapter"]);
  });
  test("Chinese text becomes overlapping two-character pieces", () => {
    assert.deepEqual(extractKeywords("接口适配"), ["接口", "口适", "适配"]);
  });
  test("a Korean word with a particle still yields its stem as a piece", () => {
    assert.ok(extractKeywords("서버를 재시작").includes("서버"));
  });
  test("ids with digits survive", () => {
    assert.ok(extractKeywords("see S_0001 and T_2026").includes("S_0001"));
  });
  test("duplicates are dropped case-insensitively and the count is capped", () => {
    assert.deepEqual(extractKeywords("Adapter adapter ADAPTER"), ["Adapter"]);
    assert.equal(extractKeywords("alpha beta gamma delta epsilon zeta theta iota kappa lambda omicron sigma upsilon omega rho tau chi psi").length, 16);
  });
  test("normalizeKeywords trims and returns null when nothing is left", () => {
    assert.deepEqual(normalizeKeywords([" a ", "A", "b"]), ["a", "b"]);
    assert.equal(normalizeKeywords(["  "]), null);
    assert.equal(normalizeKeywords(undefined), null);
  });
  test("common English function words from the whole stop list are dropped", () => {
    assert.deepEqual(extractKeywords("the boy would come here again, should they need payment retries"), ["payment", "retries"]);
  });
  test("a CJK run separates the Latin words around it", () => {
    assert.deepEqual(extractKeywords("timeout接口adapter"), ["接口", "timeout", "adapter"]);
  });
  test("a CJK run of one or two characters is kept whole", () => {
    assert.deepEqual(extractKeywords("修 bug"), ["修", "bug"]);
    assert.deepEqual(extractKeywords("接口"), ["接口"]);
  });
  test("a word with a digit is kept however short", () => {
    assert.deepEqual(extractKeywords("step 2 of v3"), ["step", "2", "v3"]);
  });
});
