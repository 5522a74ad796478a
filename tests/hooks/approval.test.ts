import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseApproval } from "../../src/core/approval.ts";

describe("the approval line in a prompt", () => {
  test("a line starting with the marker approves, the rest is the reason", () => {
    assert.deepEqual(parseApproval("please do it\n/approve refactor the parser"), { reason: "refactor the parser", scope: null, ttl_seconds: null, max_uses: null });
  });
  test("options come first: scope, ttl, uses", () => {
    assert.deepEqual(parseApproval("/approve scope=src/**,tests/** ttl=10m uses=3 fix it"), {
      reason: "fix it",
      scope: ["src/**", "tests/**"],
      ttl_seconds: 600,
      max_uses: 3,
    });
  });
  test("a bare marker approves with a default reason", () => {
    assert.equal(parseApproval("/approve")?.reason, "approved by the user in the prompt");
  });
  test("the marker in the middle of a line, or a longer word, is not an approval", () => {
    assert.equal(parseApproval("I will /approve later"), null);
    assert.equal(parseApproval("/approved already"), null);
    assert.equal(parseApproval("no approval here"), null);
  });
  test("a malformed option makes the line not an approval", () => {
    assert.equal(parseApproval("/approve ttl=soon x"), null);
    assert.equal(parseApproval("/approve ttl=0 x"), null, "a zero time to live is not 'no expiry'");
    assert.equal(parseApproval("/approve uses=0 x"), null);
  });
  test("the marker is configurable", () => {
    assert.equal(parseApproval("/approve x", "/ok"), null);
    assert.equal(parseApproval("/ok x", "/ok")?.reason, "x");
  });
  test("a line with control characters is not an approval", () => {
    assert.equal(parseApproval("/approve scope=src/**\u0007 x"), null);
    assert.equal(parseApproval("/approve \u001b[2K x"), null);
  });
});
