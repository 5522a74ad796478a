/** Where install puts a lasting copy of longrun, how it writes it, and which program the hooks run (src/hooks/os_sandbox.ts, src/hooks/install.ts), in process. */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { hookSelf } from "../../src/hooks/install.ts";
import { placeExe, stableExePath } from "../../src/hooks/os_sandbox.ts";
import { VERSION } from "../../src/version.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

describe("the lasting place of the program the hooks run", () => {
  let dir = "";
  beforeEach(() => (dir = tempDir()));
  afterEach(() => removeDir(dir));

  test("the lasting place is $XDG_DATA_HOME/longrun/bin/<version>/longrun, else ~/.local/share/longrun/bin/…", () => {
    assert.equal(stableExePath({ XDG_DATA_HOME: "/d" }), `/d/longrun/bin/${VERSION}/longrun`);
    assert.equal(stableExePath({ HOME: "/home/me" }), `/home/me/.local/share/longrun/bin/${VERSION}/longrun`);
    assert.equal(stableExePath({ HOME: "/home/me", XDG_DATA_HOME: "relative" }), `/home/me/.local/share/longrun/bin/${VERSION}/longrun`, "a relative XDG_DATA_HOME is ignored, as the spec says");
  });

  test("a compiled longrun in a venv, a temporary or a build directory is run from its lasting copy; one in a lasting place, or the sources, as they are", () => {
    const env = { XDG_DATA_HOME: "/d" };
    const copy = [`/d/longrun/bin/${VERSION}/longrun`];
    assert.deepEqual(hookSelf(["/home/me/.venv/lib/python3.12/site-packages/longrun/bin/longrun"], env), copy);
    assert.deepEqual(hookSelf(["/home/me/src/longrun/dist/longrun"], env), copy);
    assert.deepEqual(hookSelf(["/tmp/x/longrun"], env), copy);
    assert.deepEqual(hookSelf(["/usr/local/bin/longrun"], env), ["/usr/local/bin/longrun"]);
    assert.deepEqual(hookSelf(["/usr/bin/bun", "/home/me/src/longrun/src/main.ts"], env), ["/usr/bin/bun", "/home/me/src/longrun/src/main.ts"]);
  });

  test("placeExe writes the copy whole with mode 0755, keeps one that holds the same bytes, and replaces one that does not", () => {
    const src = join(dir, "src");
    writeFileSync(src, "#!/bin/sh\necho one\n");
    const dest = join(dir, "data", "longrun", "bin", "longrun-x");
    assert.equal(placeExe(src, dest), true);
    assert.equal(statSync(dest).mode & 0o777, 0o755);
    assert.equal(readFileSync(dest, "utf8"), "#!/bin/sh\necho one\n");
    assert.equal(placeExe(src, dest), false, "the same bytes: kept");
    writeFileSync(src, "#!/bin/sh\necho two\n");
    assert.equal(placeExe(src, dest), true);
    assert.equal(readFileSync(dest, "utf8"), "#!/bin/sh\necho two\n");
    assert.deepEqual(readdirSync(join(dir, "data", "longrun", "bin")), ["longrun-x"], "no temporary file left beside it");
  });
});
