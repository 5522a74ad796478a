/** What the sandbox looks through to find more to mask, on real directories, and where it stops. */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { scanAround } from "../../src/sandbox/scan.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

const made: string[] = [];
after(() => made.forEach(removeDir));

function tree(paths: string[]): string {
  const dir = tempDir("longrun-scan-");
  made.push(dir);
  for (const p of paths) {
    if (p.endsWith("/")) mkdirSync(join(dir, p), { recursive: true });
    else {
      mkdirSync(join(dir, p, ".."), { recursive: true });
      writeFileSync(join(dir, p), "");
    }
  }
  return dir;
}

describe("scanAround", () => {
  test("finds roots below the root (to depth 4), beside it and above it, and nested git directories; not in node_modules", () => {
    const top = tree(["up/.longrun/", "up/proj/.longrun/", "up/proj/a/b/.longrun/", "up/proj/a/b/c/d/e/.longrun/", "up/proj/node_modules/x/.longrun/", "up/proj/vendor/lib/.git/", "up/other/.longrun/", "up/plain/"]);
    const root = join(top, "up", "proj");
    const r = scanAround(root, "/nonexistent-home");
    assert.ok(r.ok);
    assert.deepEqual(new Set(r.roots), new Set([join(top, "up"), join(root, "a", "b"), join(top, "up", "other")]));
    assert.deepEqual(r.gitDirs, [join(root, "vendor", "lib", ".git")]);
  });

  test("finds the submodules' and worktrees' git directories inside .git", () => {
    const root = tree([".git/HEAD", ".git/modules/libs/foo/HEAD", ".git/modules/libs/foo/modules/bar/HEAD", ".git/worktrees/wt/HEAD", ".git/objects/ab/cd"]);
    const r = scanAround(root, "/nonexistent-home");
    assert.ok(r.ok);
    assert.deepEqual(new Set(r.gitDirs), new Set([".git/modules/libs/foo", ".git/modules/libs/foo/modules/bar", ".git/worktrees/wt"].map((p) => join(root, p))));
  });

  test("past its bound it says so (the command is then refused), by entries or by time", () => {
    const root = tree(Array.from({ length: 30 }, (_, i) => `d${i}/f`));
    const byEntries = scanAround(root, "/nonexistent-home", { depth: 4, entries: 10, ms: 60_000 });
    assert.equal(byEntries.ok, false);
    let t = 0;
    const byTime = scanAround(root, "/nonexistent-home", { depth: 4, entries: 1_000_000, ms: 5 }, () => (t += 10));
    assert.equal(byTime.ok, false);
  });
});
