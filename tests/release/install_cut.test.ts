/**
 * install.sh cut short and install.sh not there: the script runs nothing until its last line
 * (`main "$@"`), so a download cut anywhere past its first two lines exits non-zero and installs
 * nothing; the command the docs give (`curl -fsSL "$U/install.sh" -o install.sh && sh install.sh`)
 * fails on a 404 and on every cut, served from 127.0.0.1 by a server that can answer 404 or cut a
 * file short. The piped form (`curl … | sh`) cannot see curl fail: on a 404 sh reads nothing and
 * exits 0 — kept as a test, since it is why the docs download first.
 */
import assert from "node:assert/strict";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { VERSION } from "../../src/version.ts";
import { listTree, run, type RunResult } from "../support/helpers.ts";
import { skipped } from "../support/skips.ts";
import { RELEASE_DIR, VERSION_LINE } from "./helpers.ts";
import { CURL, FAKE_LONGRUN, fakeRelease, INSTALL, installFixture, SH } from "./release_server.ts";

const script = readFileSync(INSTALL);
const lines = script.toString("latin1").split("\n");
/** Where line 3 starts: cuts before it (inside the shebang or the trap line) may exit 0 having run nothing. */
const GUARDED_FROM = lines[0]!.length + 1 + lines[1]!.length + 1;

/** Every line boundary past the guard, a byte every 53 inside lines, and every byte of the last line: each a length to cut the script to. */
function cutPoints(): number[] {
  const points = new Set<number>();
  let at = 0;
  for (const l of lines) {
    at += l.length + 1;
    if (at > GUARDED_FROM && at < script.length) points.add(at);
  }
  for (let n = GUARDED_FROM; n < script.length; n += 53) points.add(n);
  const lastLine = script.length - 1 - lines[lines.length - 2]!.length;
  for (let n = lastLine; n < script.length - 1; n++) points.add(n);
  return [...points].sort((a, b) => a - b);
}

const curlSkip = skipped("tests/release/install_cut.test.ts", CURL ? false : "needs curl (the docs' command)");
const hostArchive = process.platform === "linux" && process.arch === "x64" ? `longrun-${VERSION}-linux-x64.tar.gz` : null;
const releaseSkip = skipped(
  "tests/release/install_cut.test.ts: the docs' command against dist/release",
  !hostArchive
    ? "the real release's install runs on linux-x64 here"
    : [hostArchive, "SHA256SUMS", "install.sh"].every((f) => existsSync(join(RELEASE_DIR, f)))
      ? false
      : `no ${hostArchive}, SHA256SUMS and install.sh in dist/release: build them with \`npm run release -- --target linux-x64\``,
);

describe("install.sh cut short or missing", { skip: curlSkip }, () => {
  const { server, s, install } = installFixture("longrun-install-cut-");

  /** What a run that must not have installed anything leaves: no prefix, an empty TMPDIR. */
  function installedNothing(r: RunResult, what: string): void {
    assert.notEqual(r.code, 0, `${what}: exit 0 (stderr: ${r.stderr})`);
    assert.equal(existsSync(s.prefix), false, `${what}: made ${s.prefix}`);
    assert.deepEqual(listTree(s.tmp), [], what);
  }

  test("cut at any of a few hundred points past its first two lines, the script exits non-zero and installs nothing", async () => {
    // a release it would install from, were it to run
    fakeRelease(server, s.dir, "linux-x64", FAKE_LONGRUN);
    const points = cutPoints();
    assert.ok(points.length > 150, `${points.length} cut points`);
    const cut = join(s.dir, "cut.sh");
    for (const n of points) {
      writeFileSync(cut, script.subarray(0, n));
      // with an argument, so that a cut right after `main` (which runs main without "$@") shows too
      const r = await install({}, ["--target", "linux-x64"], cut);
      installedNothing(r, `cut after ${n} of ${script.length} bytes`);
      assert.match(r.stderr, /longrun install: |Syntax error|syntax error/, `cut after ${n}: says so`);
    }
    assert.deepEqual(server.asked, [], "no cut got as far as downloading");
    // the whole script, for contrast, installs
    const whole = await install({}, ["--target", "linux-x64"]);
    assert.equal(whole.code, 0, whole.stderr);
  });

  /** A shell command line run by sh in the scratch directory, `$U` the server's URL. */
  const shell = (line: string) =>
    run([SH, "-c", line], {
      cwd: s.dir,
      env: { U: server.url, PREFIX: s.prefix, TMPDIR: s.tmp, LONGRUN_TARGET: "", LONGRUN_SHA256SUMS_SHA256: "", LONGRUN_MINISIGN_PUBKEY: "" },
      timeoutMs: 120_000,
    });
  /** The docs' command. */
  const documented = () => shell(`curl -fsSL "$U/install.sh" -o install.sh && LONGRUN_RELEASE_URL="$U" sh install.sh --target linux-x64`);
  const piped = () => shell(`curl -fsSL "$U/install.sh" | LONGRUN_RELEASE_URL="$U" sh -s -- --target linux-x64`);

  test("install.sh answers 404: the docs' command exits non-zero; piped into sh it exits 0 having installed nothing", async () => {
    fakeRelease(server, s.dir, "linux-x64", FAKE_LONGRUN);
    const d = await documented();
    installedNothing(d, "curl -o install.sh && sh install.sh");
    assert.match(d.stderr, /404/);
    const p = await piped();
    assert.equal(p.code, 0, "curl … | sh reports sh's status, and sh read an empty script");
    assert.equal(existsSync(s.prefix), false);
  });

  test("install.sh cut short where curl can tell (fewer bytes than announced): the docs' command stops at curl", async () => {
    fakeRelease(server, s.dir, "linux-x64", FAKE_LONGRUN);
    server.files.set("install.sh", INSTALL);
    for (const fraction of [0.1, 0.5, 0.95]) {
      server.cuts.set("install.sh", { bytes: Math.floor(script.length * fraction), announced: true });
      installedNothing(await documented(), `announced, cut at ${fraction}`);
    }
    assert.ok(!server.asked.includes("SHA256SUMS"));
  });

  test("install.sh cut short where curl cannot tell (the connection closes early): both forms run the cut script, which exits non-zero", async () => {
    fakeRelease(server, s.dir, "linux-x64", FAKE_LONGRUN);
    server.files.set("install.sh", INSTALL);
    for (const fraction of [0.1, 0.5, 0.95]) {
      server.cuts.set("install.sh", { bytes: Math.floor(script.length * fraction), announced: false });
      for (const [form, r] of [["documented", await documented()], ["piped", await piped()]] as const) {
        installedNothing(r, `${form}, cut at ${fraction}`);
        assert.match(r.stderr, /longrun install: this install\.sh is incomplete/, `${form}, cut at ${fraction}`);
      }
    }
    assert.ok(!server.asked.includes("SHA256SUMS"));
  });

  test("the docs' command against the release's own directory (dist/release) installs this machine's build", { skip: releaseSkip }, async () => {
    for (const f of ["install.sh", "SHA256SUMS", hostArchive!]) server.files.set(f, join(RELEASE_DIR, f));
    assert.deepEqual(readFileSync(join(RELEASE_DIR, "install.sh")), script, "the release carries this install.sh (rebuild it after changing install.sh)");
    const r = await documented();
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(server.asked, ["install.sh", "SHA256SUMS", hostArchive]);
    const v = await run([join(s.prefix, "bin", "longrun"), "--version"]);
    assert.match(v.stdout.trim(), VERSION_LINE);
    // and with install.sh from the release copied by hand, as someone without curl might
    copyFileSync(join(RELEASE_DIR, "install.sh"), join(s.dir, "by-hand.sh"));
    const again = await install({}, ["--target", "linux-x64"], join(s.dir, "by-hand.sh"));
    assert.equal(again.code, 0, again.stderr);
  });
});
