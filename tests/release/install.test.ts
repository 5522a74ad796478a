/**
 * install.sh against a release served over HTTP on 127.0.0.1 (tests/release/release_server.ts):
 * it detects the machine, installs the verified executable into PREFIX/bin, and refuses a tampered
 * archive, a release without this machine's archive and a SHA256SUMS that does not match its pin,
 * installing nothing and leaving an earlier install as it was. Every failure — a 404, no server,
 * a checksum mismatch, an unknown target, a prefix it cannot write, a missing downloader or
 * checksum program — exits non-zero with one line `longrun install: ...` on stderr and nothing
 * else there. Run with POSIX sh (dash on Debian).
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, test } from "node:test";
import { VERSION } from "../../src/version.ts";
import { listTree, run, type RunResult } from "../support/helpers.ts";
import { skipped } from "../support/skips.ts";
import { RELEASE_DIR, VERSION_LINE } from "./helpers.ts";
import { downloaderSkip, FAKE_LONGRUN, fakeRelease, INSTALL, installFixture, pathWithout, SH } from "./release_server.ts";

const host = process.platform === "linux" ? `linux-${process.arch}` : process.platform === "darwin" ? `darwin-${process.arch}` : null;
const hostArchive = host ? `longrun-${VERSION}-${host}.tar.gz` : null;
const releaseSkip = skipped(
  "tests/release/install.test.ts: installing the real release",
  !hostArchive
    ? "not a platform install.sh installs"
    : existsSync(join(RELEASE_DIR, hostArchive)) && existsSync(join(RELEASE_DIR, "SHA256SUMS"))
      ? false
      : `no ${hostArchive} in dist/release: build it with \`npm run release\` (.ci/run does)`,
);

/** A failure as install.sh must report it: exit 1, and stderr exactly one line `longrun install: ...` matching `why`. */
function failsWith(r: RunResult, why: RegExp): void {
  assert.equal(r.code, 1, `exit ${r.code}; stderr: ${r.stderr}`);
  const lines = r.stderr.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `one line on stderr, got: ${r.stderr}`);
  assert.match(lines[0]!, /^longrun install: /);
  assert.match(lines[0]!, why);
}

/** A port on 127.0.0.1 nothing listens on (taken, then given back). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe("install.sh", { skip: skipped("tests/release/install.test.ts", downloaderSkip) }, () => {
  const { server, s, install } = installFixture("longrun-install-");

  test("--print-target names this machine", async () => {
    const r = await install({}, ["--print-target"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.trim(), /^(linux|darwin)-(x64|arm64)(-musl)?$/);
    if (host === "linux-x64" && existsSync("/lib64/ld-linux-x86-64.so.2")) assert.equal(r.stdout.trim(), "linux-x64");
  });

  test("--help prints a usage text, not the script, from a file and piped into sh -s", async () => {
    const script = readFileSync(INSTALL, "utf8");
    const fromFile = await install({}, ["--help"]);
    const piped = await run([SH, "-s", "--", "--help"], { input: script });
    for (const r of [fromFile, piped]) {
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^Installs longrun from a release/);
      for (const words of ["LONGRUN_RELEASE_URL", "--prefix", "--target", "--pubkey", "--print-target"]) assert.ok(r.stdout.includes(words), words);
      assert.doesNotMatch(r.stdout, /^#|main\(\)|\bfi\b|esac/m, "no line of the script itself");
      assert.equal(r.stderr, "");
    }
    assert.equal(piped.stdout, fromFile.stdout);
  });

  test("installs this machine's archive from the release into PREFIX/bin, checked, and leaves no temporary file", { skip: releaseSkip }, async () => {
    server.files.set("SHA256SUMS", join(RELEASE_DIR, "SHA256SUMS"));
    server.files.set(hostArchive!, join(RELEASE_DIR, hostArchive!));
    const r = await install();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "", "progress goes to stdout; stderr is for failures");
    assert.deepEqual(server.asked, ["SHA256SUMS", hostArchive]);
    const exe = join(s.prefix, "bin", "longrun");
    assert.equal(statSync(exe).mode & 0o777, 0o755);
    const v = await run([exe, "--version"]);
    const m = VERSION_LINE.exec(v.stdout.trim());
    assert.ok(m, v.stdout + v.stderr);
    assert.deepEqual([m[1], m[2]], [VERSION, host]);
    assert.match(r.stdout, new RegExp(`installed longrun ${VERSION.replace(/\./g, "\\.")} .* to ${exe}`));
    assert.deepEqual(listTree(s.tmp), [], "the download's temporary directory is removed");
    assert.deepEqual(listTree(join(s.prefix, "bin")), ["longrun"]);
  });

  test("a tampered archive is refused: nothing installed, an earlier install kept", async () => {
    // SHA256SUMS names the genuine archive's digest; the server hands out another one under its name
    fakeRelease(server, s.dir, host ?? "linux-x64", "#!/bin/sh\necho tampered\n", new TextEncoder().encode("the genuine archive"));
    mkdirSync(join(s.prefix, "bin"), { recursive: true });
    writeFileSync(join(s.prefix, "bin", "longrun"), "earlier install\n");
    const r = await install({ LONGRUN_TARGET: host ?? "linux-x64" });
    failsWith(r, /checksum mismatch for longrun-9\.9\.9-[a-z0-9-]+\.tar\.gz: SHA256SUMS says [0-9a-f]{64}, the download is [0-9a-f]{64}; refusing to install/);
    assert.equal(readFileSync(join(s.prefix, "bin", "longrun"), "utf8"), "earlier install\n");
    assert.deepEqual(listTree(join(s.prefix, "bin")), ["longrun"]);
    assert.deepEqual(listTree(s.tmp), []);
  });

  test("a release without this machine's archive: a clear error, nothing downloaded but SHA256SUMS", async () => {
    fakeRelease(server, s.dir, "darwin-arm64", "x");
    const r = await install({ LONGRUN_TARGET: "linux-arm64-musl" });
    failsWith(r, /lists no single archive for linux-arm64-musl/);
    assert.deepEqual(server.asked, ["SHA256SUMS"]);
    assert.equal(existsSync(s.prefix), false);
  });

  test("SHA256SUMS pinned by LONGRUN_SHA256SUMS_SHA256: a different one is refused", async () => {
    fakeRelease(server, s.dir, "linux-x64", "x");
    const r = await install({ LONGRUN_TARGET: "linux-x64", LONGRUN_SHA256SUMS_SHA256: "0".repeat(64) });
    failsWith(r, /SHA256SUMS has SHA-256 [0-9a-f]{64}, not LONGRUN_SHA256SUMS_SHA256's 0{64}: refusing to install/);
    assert.equal(existsSync(s.prefix), false);
  });

  test("an archive that passes the check but does not run here is not installed", async () => {
    fakeRelease(server, s.dir, "linux-x64", "#!/bin/sh\necho 'cannot execute: wrong architecture' >&2\nexit 126\n");
    const r = await install({ LONGRUN_TARGET: "linux-x64" });
    failsWith(r, /the downloaded longrun does not run on this machine: cannot execute: wrong architecture/);
    assert.equal(existsSync(join(s.prefix, "bin", "longrun")), false);
  });

  test("without LONGRUN_RELEASE_URL it says what to set; an unknown target is named; an unknown flag too", async () => {
    failsWith(await install({ LONGRUN_RELEASE_URL: "" }), /set LONGRUN_RELEASE_URL to the release directory/);
    failsWith(await install({ LONGRUN_TARGET: "solaris-sparc" }), /unknown target solaris-sparc/);
    failsWith(await install({}, ["--frobnicate"]), /unknown argument: --frobnicate \(see --help\)/);
  });

  test("a release directory that answers 404: one line naming the URL, nothing installed", async () => {
    const r = await install({ LONGRUN_TARGET: "linux-x64" });
    failsWith(r, new RegExp(`cannot download ${server.url}/SHA256SUMS: .*404`));
    assert.equal(existsSync(s.prefix), false);
    assert.deepEqual(listTree(s.tmp), []);
  });

  test("no server at the URL (no network): one line, nothing installed", async () => {
    const r = await install({ LONGRUN_TARGET: "linux-x64", LONGRUN_RELEASE_URL: `http://127.0.0.1:${await closedPort()}/longrun` });
    failsWith(r, /cannot download http:\/\/127\.0\.0\.1:\d+\/longrun\/SHA256SUMS: /);
    assert.equal(existsSync(s.prefix), false);
  });

  test("the archive answers 404 after SHA256SUMS: one line, nothing installed", async () => {
    const { archive } = fakeRelease(server, s.dir, "linux-x64", FAKE_LONGRUN);
    server.files.delete(archive.slice(archive.lastIndexOf("/") + 1));
    const r = await install({ LONGRUN_TARGET: "linux-x64" });
    failsWith(r, /cannot download .*longrun-9\.9\.9-linux-x64\.tar\.gz: .*404/);
    assert.equal(existsSync(s.prefix), false);
  });

  test("a prefix it cannot write: one line naming the directory, nothing left behind", async () => {
    fakeRelease(server, s.dir, "linux-x64", FAKE_LONGRUN);
    const file = join(s.dir, "a-file");
    writeFileSync(file, "not a directory\n");
    const r = await install({ LONGRUN_TARGET: "linux-x64", PREFIX: join(file, "prefix") });
    failsWith(r, /cannot create .*a-file\/prefix\/bin \(choose another --prefix/);
    assert.deepEqual(listTree(s.tmp), []);
  });

  test("no curl or wget, no sha256sum/shasum/openssl: one line naming what to install, nothing downloaded", async () => {
    fakeRelease(server, s.dir, "linux-x64", FAKE_LONGRUN);
    const noDownloader = pathWithout(join(s.dir, "bin-1"), ["curl", "wget"]);
    failsWith(await install({ LONGRUN_TARGET: "linux-x64", PATH: noDownloader }), /needs curl or wget to download/);
    const noChecksum = pathWithout(join(s.dir, "bin-2"), ["sha256sum", "shasum", "openssl"]);
    failsWith(await install({ LONGRUN_TARGET: "linux-x64", PATH: noChecksum }), /needs sha256sum, shasum or openssl/);
    assert.deepEqual(server.asked, []);
    assert.equal(existsSync(s.prefix), false);
  });

  test("the fake release installs with only the programs it names on PATH (what the tests above take away is all it needs)", async () => {
    fakeRelease(server, s.dir, "linux-x64", FAKE_LONGRUN);
    const r = await install({ LONGRUN_TARGET: "linux-x64", PATH: pathWithout(join(s.dir, "bin"), ["wget", "minisign"]) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(s.prefix, "bin", "longrun"), "utf8"), FAKE_LONGRUN);
  });
});
