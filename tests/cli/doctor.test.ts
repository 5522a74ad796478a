/** `longrun doctor` through the binary: a real root, the real PATH (or one without bubblewrap), real settings written by install. */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { onPath, osSandboxFacts, osSandboxMissing } from "../../src/hooks/install.ts";
import { removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";

const missingHere = osSandboxMissing(osSandboxFacts());
const NEEDS_SANDBOX = { skip: missingHere.length > 0 && process.env.CI !== "true" ? `Claude Code's sandbox cannot run here (${missingHere.join("; ")}): apt-get install bubblewrap socat` : false };
const install = (root: string) => [BINARY, "hook", "install", "claude", "--root", root, ...(missingHere.length ? ["--without-os-sandbox"] : [])];

describe("longrun doctor", () => {
  let root = "";
  let bin = "";
  beforeEach(() => {
    root = tempDir();
    bin = tempDir("longrun-test-bin-");
    const socat = onPath("socat");
    if (socat) symlinkSync(socat, join(bin, "socat"));
  });
  afterEach(() => {
    removeDir(root);
    removeDir(bin);
  });

  test("hooks installed and bubblewrap working: exit 0, every protection OS-enforced", NEEDS_SANDBOX, async () => {
    requireBinary();
    assert.equal((await run(install(root))).code, 0);
    const r = await run([BINARY, "doctor", "--root", root]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^ok\s+bubblewrap: .* works$/m);
    assert.match(r.stdout, /^ok\s+hooks: all 5 installed/m);
    assert.match(r.stdout, /^ok\s+sandbox settings: enabled, failIfUnavailable, allowUnsandboxedCommands false$/m);
    assert.match(r.stdout, /^ok\s+longrun's state.*\.longrun.*: OS-enforced \(sandbox\)$/m);
    assert.doesNotMatch(r.stdout, /^FAIL/m);
    assert.match(r.stdout, /every protection is OS-enforced\n$/);
  });

  test("PATH without bubblewrap: exit 1, and the protected paths are best effort", async () => {
    requireBinary();
    assert.equal((await run(install(root))).code, 0);
    const r = await run([BINARY, "doctor", "--root", root], { env: { PATH: bin } });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    if (process.platform !== "linux") return;
    assert.match(r.stdout, /^FAIL\s+bubblewrap: bwrap is not on PATH \(apt-get install bubblewrap socat\)$/m);
    assert.match(r.stdout, /^FAIL\s+longrun's state.*: best effort \(hook parser\)$/m);
    assert.match(r.stdout, /^ok\s+hooks: all 5 installed/m);
  });

  test("no hooks installed: says so (exit 1) and creates nothing", async () => {
    requireBinary();
    const r = await run([BINARY, "doctor", "--root", root]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^FAIL\s+hooks: not installed in .*settings\.local\.json \(run longrun hook install claude --root /m);
    assert.match(r.stdout, /not protected \(no longrun hooks installed\)/);
    assert.deepEqual(readdirSync(root), [], "doctor only looks");
  });

  test("--json prints one object for scripts", async () => {
    requireBinary();
    assert.equal((await run(install(root))).code, 0);
    const r = await run([BINARY, "doctor", "--root", root, "--json"], { env: { PATH: bin } });
    assert.equal(r.code, 1);
    assert.equal(r.stdout.trim().split("\n").length, 1);
    const o = JSON.parse(r.stdout);
    assert.equal(o.ok, false);
    assert.equal(o.root, root);
    assert.ok(o.checks.some((c: { id: string; ok: boolean }) => c.id === "hooks" && c.ok));
    const state = o.paths.find((p: { path: string }) => p.path === join(root, ".longrun"));
    assert.equal(state.enforcement, process.platform === "linux" ? "hook" : "os");
    assert.equal(state.read, true);
  });

  test("usage errors exit 2: an unknown flag, a root that is not one", async () => {
    requireBinary();
    assert.equal((await run([BINARY, "doctor", "--bogus"])).code, 2);
    assert.equal((await run([BINARY, "doctor", "--root", "relative/dir"])).code, 2);
    mkdirSync(join(root, ".longrun"));
    const r = await run([BINARY, "doctor", "--root", join(root, ".longrun")]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Invalid root/);
  });
});
