/** The docs' generated tables are what the code renders now (scripts/gen_docs.ts), and the check can tell when one is not. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { blockOf, errorRows, renderDocs, replaceBlock, staleTables, TABLES } from "../scripts/gen_docs.ts";
import { REPO } from "./support/helpers.ts";

const read = (f: string) => readFileSync(join(REPO, f), "utf8");

describe("docs: generated tables", () => {
  for (const t of TABLES) {
    test(`${t.file} holds the ${t.name} table as the code renders it (else run: bun scripts/gen_docs.ts)`, () => {
      const block = blockOf(read(t.file), t.name);
      assert.ok(block !== null, `${t.file} has no <!-- generated:${t.name} --> markers`);
      assert.equal(block, t.render(), `${t.file}: the ${t.name} table is out of date; run node_modules/.bin/bun scripts/gen_docs.ts`);
    });
  }

  test("no table is stale", () => {
    assert.deepEqual(staleTables(), []);
  });

  test("the check fails on a changed row, a missing table and missing markers", () => {
    const t = TABLES.find((x) => x.name === "errors")!;
    const real = read(t.file);
    const block = blockOf(real, "errors")!;
    const changed = real.replace(block, block.replace("-32001", "-32099"));
    assert.notEqual(changed, real);
    assert.deepEqual(staleTables((f) => (f === t.file ? changed : read(f))).map((s) => s.name), ["errors"]);
    const emptied = replaceBlock(real, "errors", "");
    assert.deepEqual(staleTables((f) => (f === t.file ? emptied : read(f))).map((s) => s.name), ["errors"]);
    const unmarked = real.replace("<!-- generated:errors -->", "");
    assert.deepEqual(staleTables((f) => (f === t.file ? unmarked : read(f))).map((s) => s.name), ["errors"]);
    assert.throws(() => replaceBlock(unmarked, "errors", "x"), /markers/);
  });

  test("rendering again changes nothing (the generator is stable)", () => {
    for (const [file, text] of renderDocs()) assert.equal(text, read(file), file);
  });

  test("every error kind says when it is raised", () => {
    for (const e of errorRows()) assert.ok(e.when.length > 0, `${e.kind} has no "when" in scripts/gen_docs.ts`);
  });
});
