/**
 * Release signatures: scripts/sign.ts signs SHA256SUMS with a minisign key made here (`minisign
 * -G -W`, no password) into SHA256SUMS.minisig, and install.sh, given the public key (--pubkey or
 * LONGRUN_MINISIGN_PUBKEY, the key itself or its file), installs only when the signature verifies:
 * a changed SHA256SUMS, another key's signature or no signature at all is refused with one line and
 * nothing installed; so is a key given on a machine without minisign (it cannot verify, so it does
 * not install). Skipped, saying why, without minisign (apt-get install minisign; .ci/run does).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { checkSigningKey, signSums } from "../../scripts/sign.ts";
import { listTree, removeDir, type RunResult, tempDir } from "../support/helpers.ts";
import { skipped } from "../support/skips.ts";
import { which } from "./helpers.ts";
import { downloaderSkip, FAKE_LONGRUN, fakeRelease, installFixture, pathWithout, type Scratch } from "./release_server.ts";

const minisignSkip = skipped("tests/release/signature.test.ts", downloaderSkip || (which("minisign") ? false : "minisign is not installed (apt-get install minisign; .ci/run does)"));

/** A passwordless minisign key pair in `dir`: the files and the public key's one line. */
function keyPair(dir: string, name: string): { secret: string; publicFile: string; publicKey: string } {
  const secret = join(dir, `${name}.key`);
  const publicFile = join(dir, `${name}.pub`);
  const g = spawnSync("minisign", ["-G", "-W", "-s", secret, "-p", publicFile], { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  assert.equal(g.status, 0, g.stderr);
  return { secret, publicFile, publicKey: readFileSync(publicFile, "utf8").trim().split("\n").pop()! };
}

function refused(r: RunResult, why: RegExp, s: Scratch): void {
  assert.equal(r.code, 1, `exit ${r.code}: ${r.stderr}`);
  const lines = r.stderr.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /^longrun install: /);
  assert.match(lines[0]!, why);
  assert.equal(existsSync(s.prefix), false, "nothing installed");
  assert.deepEqual(listTree(s.tmp), []);
}

describe("release signatures (minisign)", { skip: minisignSkip }, () => {
  const { server, s, install } = installFixture("longrun-signed-");
  let keys: string;
  let ours: ReturnType<typeof keyPair>;
  let theirs: ReturnType<typeof keyPair>;
  before(() => {
    keys = tempDir("longrun-keys-");
    ours = keyPair(keys, "ours");
    theirs = keyPair(keys, "theirs");
  });
  after(() => removeDir(keys));

  /** The fake release, its SHA256SUMS signed with `key`'s secret key and served with the signature. */
  function signedRelease(key: { secret: string }): { sums: string } {
    const { sums } = fakeRelease(server, s.dir, "linux-x64", FAKE_LONGRUN);
    signSums(sums, key.secret, "longrun 9.9.9 test SHA256SUMS");
    server.files.set("SHA256SUMS.minisig", `${sums}.minisig`);
    return { sums };
  }

  test("a signed release installs with the public key given as the key or as its file", async () => {
    signedRelease(ours);
    const byKey = await install({ LONGRUN_TARGET: "linux-x64", LONGRUN_MINISIGN_PUBKEY: ours.publicKey });
    assert.equal(byKey.code, 0, byKey.stderr);
    assert.deepEqual(server.asked.slice(0, 2), ["SHA256SUMS", "SHA256SUMS.minisig"]);
    assert.equal(readFileSync(join(s.prefix, "bin", "longrun"), "utf8"), FAKE_LONGRUN);
    removeDir(s.prefix);
    const byFile = await install({ LONGRUN_TARGET: "linux-x64" }, ["--pubkey", ours.publicFile]);
    assert.equal(byFile.code, 0, byFile.stderr);
    assert.equal(readFileSync(join(s.prefix, "bin", "longrun"), "utf8"), FAKE_LONGRUN);
  });

  test("SHA256SUMS changed after signing is refused", async () => {
    const { sums } = signedRelease(ours);
    appendFileSync(sums, `${"0".repeat(64)}  longrun-9.9.9-darwin-arm64.tar.gz\n`);
    refused(await install({ LONGRUN_TARGET: "linux-x64" }, ["--pubkey", ours.publicKey]), /SHA256SUMS's signature does not verify with the given public key.*refusing to install/, s);
  });

  test("a signature by another key is refused", async () => {
    signedRelease(theirs);
    refused(await install({ LONGRUN_TARGET: "linux-x64", LONGRUN_MINISIGN_PUBKEY: ours.publicKey }), /signature does not verify/, s);
  });

  test("an unsigned release is refused when a key is given, installed when none is", async () => {
    fakeRelease(server, s.dir, "linux-x64", FAKE_LONGRUN);
    refused(await install({ LONGRUN_TARGET: "linux-x64" }, ["--pubkey", ours.publicKey]), /cannot download .*SHA256SUMS\.minisig \(a public key was given, so the release must be signed\)/, s);
    const plain = await install({ LONGRUN_TARGET: "linux-x64" });
    assert.equal(plain.code, 0, plain.stderr);
  });

  test("a key given where minisign is missing: it says it cannot verify, and installs nothing", async () => {
    signedRelease(ours);
    const path = pathWithout(join(s.dir, "bin"), ["minisign"]);
    refused(await install({ LONGRUN_TARGET: "linux-x64", PATH: path }, ["--pubkey", ours.publicKey]), /minisign is not installed, so SHA256SUMS\.minisig cannot be verified/, s);
    assert.deepEqual(server.asked, []);
  });

  test("a --pubkey that is neither a key nor a file is refused before anything is downloaded", async () => {
    signedRelease(ours);
    refused(await install({ LONGRUN_TARGET: "linux-x64" }, ["--pubkey", "RWnot-a-key"]), /neither a minisign public key .* nor a file/, s);
    assert.deepEqual(server.asked, []);
  });

  test("signing refuses a missing key file and a file that is no key, writing no signature", () => {
    assert.throws(() => checkSigningKey(join(keys, "absent.key")), /does not exist/);
    const notKey = join(keys, "not.key");
    writeFileSync(notKey, "hello\n");
    assert.throws(() => checkSigningKey(notKey), /not a minisign secret key file/);
    const file = join(keys, "file");
    writeFileSync(file, "x\n");
    assert.throws(() => signSums(file, notKey, "t"), /not a minisign secret key file/);
    assert.equal(existsSync(`${file}.minisig`), false);
  });
});
