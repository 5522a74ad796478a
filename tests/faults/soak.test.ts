/**
 * A short random-kill soak through the compiled binary (the long one is bench/soak_kills.ts; both
 * run tests/faults/soak_lib.ts): two `longrun serve` servers and hook processes on one root, a
 * server SIGKILLed (or killed at a crash point of the crash-test build) 15 times, A1-A4 checked
 * after every kill, no temp file left after a restart.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { BINARY, CRASH_BINARY, requireBinary } from "../support/server.ts";
import { formatReport, soak } from "./soak_lib.ts";

test("15 random kills during a mixed workload on one root: A1-A4 hold after each, no temp files left", async () => {
  requireBinary();
  const root = tempDir("longrun-soak-");
  try {
    const seed = 20261130;
    const report = await soak({
      root,
      binary: BINARY,
      crashBinary: existsSync(CRASH_BINARY) ? CRASH_BINARY : null,
      kills: 15,
      seed,
      servers: 2,
      hooks: 1,
      maxDelayMs: 300,
    });
    const text = formatReport(report, seed);
    assert.deepEqual(report.violations, [], text);
    assert.deepEqual(report.unexpectedErrors, [], text);
    assert.equal(report.kills >= 15, true, text);
    assert.equal(report.tempFilesLeft, 0, text);
    assert.ok(report.acknowledged.memory! > 0 && report.acknowledged.checkpoint! > 0 && report.acknowledged.receipt_begin! > 0, text);
    assert.ok(report.hooks.runs > 0, text);
  } finally {
    removeDir(root);
  }
});
