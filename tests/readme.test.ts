/** The README tells the truth about the protocol: every method, its side, and the limits. */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { ERROR_CODES } from "../src/core/errors.ts";
import { LIMITS } from "../src/core/limits.ts";
import { allMethods } from "../src/rpc/methods/index.ts";
import { REPO } from "./support/helpers.ts";

const readme = readFileSync(join(REPO, "README.md"), "utf8");
const rows = readme.split("\n").filter((l) => l.startsWith("| `"));

describe("README", () => {
  test("points at nothing outside the repository and uses no internal shorthand", () => {
    assert.doesNotMatch(readme, /\.\.\/(shared|seeds)|\]\(\.\.\//, "a downloader does not have ../");
    assert.doesNotMatch(readme, /\b(I[1-4]|A[1-4])\b|\bseed\b/, "I1-I4, A1-A4 and 'seed' mean nothing to a user");
  });

  test("the files it tells a user about exist", () => {
    for (const f of ["LICENSE", "CONTRIBUTING.md", "clients/python/example.py", "clients/python/longrun_client.py"]) {
      assert.ok(existsSync(join(REPO, f)), `${f} is named in the README but missing`);
    }
  });

  test("starts with the two commands", () => {
    const block = readme.split("```")[1]!;
    assert.match(block, /npm run demo/);
    assert.match(block, /npm test/);
    assert.match(readFileSync(join(REPO, ".ci", "run"), "utf8"), /npm test/);
  });

  for (const m of allMethods()) {
    test(`the protocol table lists ${m.name} on the ${m.side} side`, () => {
      const row = rows.find((r) => r.split("|")[1]!.includes(`\`${m.name}\``));
      assert.ok(row, `${m.name} is missing from the README's protocol table`);
      const side = row.split("|")[2]!.trim();
      assert.ok(side.startsWith(m.side), `${m.name}: README says ${side}, code says ${m.side}`);
    });
  }

  test("the error table lists every kind with its code", () => {
    for (const [kind, code] of Object.entries(ERROR_CODES)) {
      assert.ok(readme.includes(`| ${code} | \`${kind}\``), `${code} ${kind}`);
    }
  });

  test("the limits table states the numbers the code enforces", () => {
    const fmt = (n: number) => n.toLocaleString("en-US");
    for (const key of Object.keys(LIMITS) as (keyof typeof LIMITS)[]) {
      assert.ok(readme.includes(fmt(LIMITS[key])), `${key} = ${fmt(LIMITS[key])} is not in the README`);
    }
  });
});
