/** `longrun doctor` through the binary: a real root, the real PATH (or one without bubblewrap), real settings written by install. */
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { onPath, osSandboxFacts, osSandboxMissing, stableExePath } from "../../src/hooks/install.ts";
import { VERSION } from "../../src/version.ts";
import { removeDir, run as runChild, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";

const missingHere = osSandboxMissing(osSandboxFacts());
const NEEDS_SANDBOX = { skip: missingHere.length > 0 && process.env.CI !== "true" ? `Claude Code's sandbox cannot run here (${missingHere.join("; ")}): apt-get install bubblewrap socat` : false };
/** dist/longrun lies in a build directory: install copies it into XDG_DATA_HOME, here a directory of the test's own. */
let data = "";
const run = (argv: string[], o: { env?: Record<string, string> } = {}) => runChild(argv, { ...o, env: { XDG_DATA_HOME: data, ...o.env } });
const install = (root: string) => [BINARY, "hook", "install", "claude", "--root", root, ...(missingHere.length ? ["--without-os-sandbox"] : [])];

describe("longrun doctor", () => {
  let root = "";
  let bin = "";
  beforeEach(() => {
    root = tempDir();
    bin = tempDir("longrun-test-bin-");
    data = tempDir("longrun-test-data-");
    const socat = onPath("socat");
    if (socat) symlinkSync(socat, join(bin, "socat"));
  });
  afterEach(() => {
    removeDir(root);
    removeDir(bin);
    removeDir(data);
  });

  test("hooks installed and bubblewrap working: exit 0, every protection OS-enforced", NEEDS_SANDBOX, async () => {
    requireBinary();
    assert.equal((await run(install(root))).code, 0);
    const r = await run([BINARY, "doctor", "--root", root]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^ok\s+bubblewrap: .* works$/m);
    assert.match(r.stdout, /^ok\s+hooks: all 5 installed/m);
    assert.match(r.stdout, /^ok\s+sandbox settings: enabled, failIfUnavailable, allowUnsandboxedCommands false$/m);
    const copy = stableExePath({ XDG_DATA_HOME: data });
    assert.ok(r.stdout.includes(`hook program: ${copy} (longrun ${VERSION} `), r.stdout);
    assert.match(r.stdout, /^ok\s+hook program: .*, in a lasting place$/m);
    assert.match(r.stdout, /^info\s+longrun \d+\.\d+\.\d+ \(/m);
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

  test("a hook program that does not answer --version as longrun does, or lies in a temporary directory, fails (exit 1)", async () => {
    requireBinary();
    assert.equal((await run(install(root))).code, 0);
    const file = join(root, ".claude", "settings.local.json");
    const settings = readFileSync(file, "utf8");
    const copy = stableExePath({ XDG_DATA_HOME: data });
    // a program that exits 0 but is not longrun
    const impostor = join(bin, "impostor");
    writeFileSync(impostor, "#!/bin/sh\necho hello\n");
    chmodSync(impostor, 0o755);
    writeFileSync(file, settings.split(copy).join(impostor));
    const r = await run([BINARY, "doctor", "--root", root]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^FAIL\s+hook program: .*impostor does not answer --version as longrun does/m);
    // the real longrun, but in a temporary directory (not install's lasting copy)
    const loose = join(bin, "longrun");
    writeFileSync(loose, readFileSync(copy));
    chmodSync(loose, 0o755);
    writeFileSync(file, settings.split(copy).join(loose));
    const t = await run([BINARY, "doctor", "--root", root, "--json"]);
    assert.equal(t.code, 1);
    const check = JSON.parse(t.stdout).checks.find((c: { id: string }) => c.id === "hook_program");
    assert.equal(check.ok, false);
    assert.match(check.line, /lies in a temporary directory.*run longrun hook install claude/);
  });

  test("the HTTP server's token files: one readable by others fails with the chmod to run, one at 0600 passes", async () => {
    requireBinary();
    mkdirSync(join(root, ".longrun"));
    const http = join(root, ".longrun", "http.json");
    writeFileSync(http, "{}\n");
    chmodSync(http, 0o644);
    const secret = join(bin, "host_token");
    writeFileSync(secret, "x".repeat(40));
    chmodSync(secret, 0o600);
    const r = await run([BINARY, "doctor", "--root", root], { env: { LONGRUN_HOST_TOKEN_FILE: secret, LONGRUN_AGENT_TOKEN_FILE: join(bin, "missing") } });
    assert.equal(r.code, 1);
    assert.ok(r.stdout.includes(`FAIL  http tokens: .longrun/http.json ${http} is mode 0644, readable by others: chmod 600 ${http}`), r.stdout);
    assert.ok(r.stdout.includes(`ok    http tokens: LONGRUN_HOST_TOKEN_FILE ${secret} (mode 0600)`), r.stdout);
    assert.match(r.stdout, /^FAIL\s+http tokens: LONGRUN_AGENT_TOKEN_FILE names .*missing, which does not exist/m);
    chmodSync(http, 0o600);
    const ok = await run([BINARY, "doctor", "--root", root, "--json"]);
    const tokens = JSON.parse(ok.stdout).checks.filter((c: { id: string }) => c.id === "tokens");
    assert.deepEqual(tokens.map((c: { ok: boolean }) => c.ok), [true]);
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
