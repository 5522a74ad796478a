/**
 * scripts/release.ts without building anything: its command line (`--target NAME` for one
 * platform, an unknown one a one-line error and exit 2, before anything is removed), and
 * `--assemble`, which makes one release of one-target releases built on several machines (CI:
 * one per runner) — the parts' archives, install.sh, SHA256SUMS over all of them, one manifest,
 * and a signature when LONGRUN_MINISIGN_KEY names a key — refusing parts of different commits.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { assemble, type Manifest, parseArgs } from "../../scripts/release.ts";
import { TARGETS } from "../../scripts/targets.ts";
import { VERSION } from "../../src/version.ts";
import { REPO, removeDir, run, tempDir } from "../support/helpers.ts";
import { skipped } from "../support/skips.ts";
import { RELEASE_DIR, which } from "./helpers.ts";

const BUN = join(REPO, "node_modules", ".bin", "bun");
const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

describe("scripts/release.ts: the command line", () => {
  test("--target NAME is one platform, --targets a list; nothing given is every target", () => {
    assert.deepEqual(parseArgs(["--target", "linux-x64"]).targets.map((t) => t.name), ["linux-x64"]);
    assert.deepEqual(parseArgs(["--targets", "linux-x64,darwin-arm64"]).targets.map((t) => t.name), ["linux-x64", "darwin-arm64"]);
    assert.deepEqual(parseArgs([]).targets, TARGETS);
    assert.equal(parseArgs([]).out, RELEASE_DIR);
    assert.deepEqual(parseArgs(["--assemble", "/a", "/b"]).assemble, ["/a", "/b"]);
    assert.equal(parseArgs(["--target", "darwin-x64", "--part"]).part, true);
  });

  test("an unknown target, a flag without its value and an unknown flag are refused by name", () => {
    assert.throws(() => parseArgs(["--target", "linux-sparc"]), /unknown target "linux-sparc"; known: linux-x64, /);
    assert.throws(() => parseArgs(["--target"]), /--target needs a value/);
    assert.throws(() => parseArgs(["--targets", ","]), /--targets needs a comma-separated list/);
    assert.throws(() => parseArgs(["--fast"]), /unknown argument "--fast"/);
    assert.throws(() => parseArgs(["--assemble", "/a", "--target", "linux-x64"]), /--assemble builds nothing/);
  });

  test("npm run release -- --target with an unknown name: one line on stderr, exit 2, the release directory untouched", { skip: skipped("tests/release/release_script.test.ts: npm run release", existsSync(BUN) ? false : "no node_modules/.bin/bun") }, async () => {
    const before = existsSync(RELEASE_DIR);
    const r = await run(["bash", join(REPO, "scripts", "release.sh"), "--target", "linux-sparc"], { timeoutMs: 60_000 });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /^release: unknown target "linux-sparc"; known: /);
    assert.equal(existsSync(RELEASE_DIR), before);
  });
});

describe("scripts/release.ts --assemble", () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir("longrun-assemble-");
  });
  afterEach(() => removeDir(dir));

  /** A one-target release as `release --target NAME` leaves it, with a stand-in archive. */
  function part(target: string, commit = "0123456789ab", name = `part-${target}`): string {
    const t = TARGETS.find((x) => x.name === target)!;
    const p = join(dir, name);
    mkdirSync(p);
    const archive = `longrun-${VERSION}-${target}.${t.archive}`;
    // a real archive (the release's other channels take the executable out of it), of a stand-in executable
    const top = join(dir, `unpacked-${name}`, `longrun-${VERSION}-${target}`);
    mkdirSync(top, { recursive: true });
    writeFileSync(join(top, t.exe), `#!/bin/sh\necho 'longrun ${VERSION} (${target}, commit ${commit})'\n`, { mode: 0o755 });
    execFileSync("tar", ["-czf", join(p, archive), "-C", join(top, ".."), `longrun-${VERSION}-${target}`]);
    const data = readFileSync(join(p, archive));
    writeFileSync(join(p, "install.sh"), "an older install.sh\n");
    const m: Manifest = {
      name: "longrun",
      version: VERSION,
      commit,
      source_date_epoch: 1,
      targets: [{ target, bun_target: t.bun, archive, sha256: sha256(data), archive_bytes: data.length, executable_bytes: 1, build_seconds: 1 }],
      files: [],
      signature: null,
    };
    writeFileSync(join(p, "manifest.json"), JSON.stringify(m));
    return p;
  }

  test("parts from several machines become one release: their archives, this install.sh, SHA256SUMS over all, one manifest", () => {
    const out = join(dir, "release");
    const m = assemble([part("darwin-arm64"), part("linux-x64")], { releaseDir: out, log: () => {} });
    assert.deepEqual(m.targets.map((t) => t.target), ["linux-x64", "darwin-arm64"], "in the targets' order");
    assert.deepEqual(readFileSync(join(out, "install.sh")), readFileSync(join(REPO, "install.sh")));
    const sums = readFileSync(join(out, "SHA256SUMS"), "utf8").trim().split("\n");
    const listed = sums.map((l) => l.split("  ")[1]!);
    for (const f of ["install.sh", `longrun-${VERSION}-linux-x64.tar.gz`, `longrun-${VERSION}-darwin-arm64.tar.gz`]) assert.ok(listed.includes(f), `${f} in SHA256SUMS`);
    assert.deepEqual(m.files.map((f) => f.name).sort(), listed.filter((f) => !f.endsWith(".tar.gz")).sort(), "the manifest names every other file");
    const check = spawnSync("sha256sum", ["-c", "--quiet", "SHA256SUMS"], { cwd: out, encoding: "utf8" });
    if (!check.error) assert.equal(check.status, 0, check.stdout + check.stderr);
    assert.deepEqual(JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")), m);
    assert.equal(m.signature, null);
  });

  test("parts built from different commits, or twice the same target, are refused", () => {
    const out = join(dir, "release");
    assert.throws(() => assemble([part("linux-x64"), part("darwin-arm64", "fedcba987654")], { releaseDir: out, log: () => {} }), /built from one commit/);
    assert.throws(() => assemble([part("darwin-x64"), part("darwin-x64", undefined, "again")], { releaseDir: out, log: () => {} }), /two parts hold darwin-x64/);
    assert.throws(() => assemble([join(dir, "nothing-here")], { releaseDir: out, log: () => {} }), /holds no manifest\.json/);
  });

  test("with LONGRUN_MINISIGN_KEY the assembled SHA256SUMS is signed, and the signature verifies", { skip: skipped("tests/release/release_script.test.ts: signing", which("minisign") ? false : "minisign is not installed (apt-get install minisign)") }, () => {
    const key = join(dir, "release.key");
    const g = spawnSync("minisign", ["-G", "-W", "-s", key, "-p", `${key}.pub`], { stdio: "ignore" });
    assert.equal(g.status, 0);
    const out = join(dir, "release");
    const saved = process.env.LONGRUN_MINISIGN_KEY;
    process.env.LONGRUN_MINISIGN_KEY = key;
    try {
      const m = assemble([part("linux-arm64")], { releaseDir: out, log: () => {} });
      assert.equal(m.signature, "SHA256SUMS.minisig");
    } finally {
      if (saved === undefined) delete process.env.LONGRUN_MINISIGN_KEY;
      else process.env.LONGRUN_MINISIGN_KEY = saved;
    }
    const v = spawnSync("minisign", ["-Vq", "-p", `${key}.pub`, "-m", join(out, "SHA256SUMS")], { encoding: "utf8" });
    assert.equal(v.status, 0, v.stderr);
  });
});
