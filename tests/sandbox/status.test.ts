/** sandboxStatus(): what `longrun doctor` and `hook install` ask before relying on the boundary. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { findBwrap, sandboxStatus } from "../../src/sandbox/status.ts";
import { removeDir, tempDir } from "../support/helpers.ts";
import { skipped } from "../support/skips.ts";

const skip = skipped("tests/sandbox/status", findBwrap(process.env.PATH) === null ? "bubblewrap not installed" : false);

describe("sandboxStatus", () => {
  test("without bwrap on PATH: not available, code not_installed, a reason", () => {
    const s = sandboxStatus({ PATH: "/nonexistent" });
    assert.deepEqual({ available: s.available, code: s.code, path: s.path, mechanism: s.mechanism }, { available: false, code: "not_installed", path: null, mechanism: "bubblewrap" });
    assert.match(s.reason!, /bubblewrap/);
  });
  test("with a working bwrap: available, code ok, its path, no reason", { skip }, () => {
    const s = sandboxStatus();
    assert.equal(s.available, true, s.reason ?? "");
    assert.equal(s.code, "ok");
    assert.equal(s.reason, null);
    assert.equal(s.path, findBwrap(process.env.PATH));
  });
  test("findBwrap passes over relative PATH entries and excluded directories", () => {
    const first = findBwrap(process.env.PATH);
    if (first === null) return;
    const dir = first.slice(0, first.lastIndexOf("/"));
    assert.equal(findBwrap(`.:${dir}`), first);
    assert.equal(findBwrap(dir, [dir]), null);
    const links = tempDir("longrun-bwrap-link-");
    try {
      symlinkSync(dir, join(links, "bin"));
      assert.equal(findBwrap(join(links, "bin"), [dir]), null, "a link into an excluded directory is excluded");
    } finally {
      removeDir(links);
    }
  });
});
