/** The fast lane (tests/support/lanes.ts) keeps out every test that leaves the test process, and only those. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { REPO } from "./helpers.ts";
import { fastLane, laneViolations, MUST_BE_FAST, OUT_OF_PROCESS, OUT_OF_PROCESS_TESTS, testFiles, whyNotFast } from "./lanes.ts";

describe("the fast lane", () => {
  for (const rule of [...OUT_OF_PROCESS, ...OUT_OF_PROCESS_TESTS]) {
    test(`rule "${rule.name}" (${rule.why}) catches its examples and lets its near misses pass`, () => {
      for (const m of rule.match) assert.ok(rule.pattern.test(m), `${rule.name} should catch: ${m}`);
      for (const m of rule.not_match) assert.ok(!rule.pattern.test(m), `${rule.name} should let pass: ${m}`);
    });
  }

  test("a test is out when a module it imports starts a process, however deep", () => {
    const files: Record<string, string> = {
      [join(REPO, "tests", "x", "a.test.ts")]: `import { b } from "./b.ts";`,
      [join(REPO, "tests", "x", "b.ts")]: `import { c } from "./c.ts";`,
      [join(REPO, "tests", "x", "c.ts")]: `import { BINARY } from "../support/server.ts";`,
      [join(REPO, "tests", "support", "server.ts")]: `import { spawn } from "node:child_process";`,
    };
    const reasons = whyNotFast(join(REPO, "tests", "x", "a.test.ts"), (p) => files[p] ?? null);
    assert.deepEqual(reasons, ["tests/support/server.ts: child process"]);
    files[join(REPO, "tests", "x", "c.ts")] = `import { tempDir, until } from "../support/helpers.ts";`;
    assert.deepEqual(whyNotFast(join(REPO, "tests", "x", "a.test.ts"), (p) => files[p] ?? null), []);
  });

  test("libSQL server helpers count in test files only (shared fixtures start sqld only under LONGRUN_TEST_STORE=sqld)", () => {
    const src = `import { startSqld } from "../support/sqld.ts";`;
    assert.deepEqual(laneViolations(join(REPO, "tests", "x", "a.test.ts"), src), ["libSQL server"]);
    assert.deepEqual(laneViolations(join(REPO, "tests", "x", "setup.ts"), src), []);
  });

  test("no other file in the lane names the binary, spawns, or uses the binary's driver (a plain text search, apart from the rules)", () => {
    const lane = fastLane().filter((f) => f !== "tests/support/lanes.test.ts");
    assert.ok(lane.length > 0);
    for (const f of lane) {
      const text = readFileSync(join(REPO, f), "utf8");
      for (const word of [/["'`](?:\.\/)?dist\/longrun/, /\bspawn(?:Sync)?\(/, /\b(?:BINARY|CRASH_BINARY|requireBinary|TARGETS)\b/, /\bexecFile(?:Sync)?\(/]) {
        assert.ok(!word.test(text), `${f} is in the fast lane but matches ${word}`);
      }
    }
  });

  for (const dir of MUST_BE_FAST) {
    test(`every test in ${dir} is in the lane`, () => {
      const lane = new Set(fastLane());
      const all = testFiles(join(REPO, dir)).map((f) => f.slice(REPO.length + 1));
      assert.ok(all.length > 0, `${dir} has tests`);
      for (const f of all) assert.ok(lane.has(f), `${f} left the fast lane: ${whyNotFast(join(REPO, f)).join("; ")}`);
    });
  }

  test("tests that drive the binary, sqld, Claude Code or a browser are out", () => {
    const lane = new Set(fastLane());
    for (const f of ["tests/protocol/stdio.test.ts", "tests/server/store.test.ts", "tests/claude_code/gate.test.ts", "tests/page/browser.test.ts", "tests/hooks/claude.test.ts"]) {
      assert.ok(!lane.has(f), f);
    }
  });
});
