/**
 * install.sh against a release served over HTTP on 127.0.0.1 (a node:http server in this
 * process): it detects the machine, installs the verified executable into PREFIX/bin, and refuses
 * a tampered archive, a release without this machine's archive and a SHA256SUMS that does not
 * match its pin, installing nothing and leaving an earlier install as it was. Run with POSIX sh
 * (dash on Debian).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, test } from "node:test";
import { VERSION } from "../../src/version.ts";
import { listTree, REPO, removeDir, run, tempDir } from "../support/helpers.ts";
import { RELEASE_DIR, VERSION_LINE, which } from "./helpers.ts";

const INSTALL = join(REPO, "install.sh");
const SH = which("dash") ?? "/bin/sh";
const downloaderSkip = which("curl") || which("wget") ? false : "needs curl or wget";
const host = process.platform === "linux" ? `linux-${process.arch}` : process.platform === "darwin" ? `darwin-${process.arch}` : null;
const hostArchive = host ? `longrun-${VERSION}-${host}.tar.gz` : null;
const releaseSkip = !hostArchive
  ? "not a platform install.sh installs"
  : existsSync(join(RELEASE_DIR, hostArchive)) && existsSync(join(RELEASE_DIR, "SHA256SUMS"))
    ? false
    : `no ${hostArchive} in dist/release: build it with \`npm run release\` (.ci/run does)`;

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

/** Serves `files` (URL name -> path on disk) and records the names asked for. */
class ReleaseServer {
  files = new Map<string, string>();
  asked: string[] = [];
  #server: HttpServer | undefined;
  url = "";

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const name = decodeURIComponent((req.url ?? "/").replace(/^\/+/, "").split("?")[0]!);
      this.asked.push(name);
      const path = this.files.get(name);
      if (!path) {
        res.writeHead(404).end("not found");
        return;
      }
      res.writeHead(200, { "content-length": String(statSync(path).size) });
      createReadStream(path).pipe(res);
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.#server?.closeAllConnections?.();
      this.#server?.close(() => resolve()) ?? resolve();
    });
  }
}

describe("install.sh", { skip: downloaderSkip }, () => {
  const server = new ReleaseServer();
  let scratch: string;
  let prefix: string;
  let tmp: string;
  before(() => server.start());
  after(() => server.stop());
  beforeEach(() => {
    scratch = tempDir("longrun-install-");
    prefix = join(scratch, "prefix");
    tmp = join(scratch, "tmp");
    mkdirSync(tmp);
    server.files.clear();
    server.asked.length = 0;
  });
  afterEach(() => removeDir(scratch));

  const install = (env: Record<string, string> = {}, args: string[] = []) =>
    run([SH, INSTALL, ...args], { env: { LONGRUN_RELEASE_URL: server.url, PREFIX: prefix, TMPDIR: tmp, LONGRUN_TARGET: "", LONGRUN_SHA256SUMS_SHA256: "", ...env }, timeoutMs: 120_000 });

  /** A release directory with one (fake) archive for `target` and a SHA256SUMS naming `sumOf`'s digest. */
  function fakeRelease(target: string, contents: string, sumOf?: Uint8Array): { archive: string; sums: string } {
    const name = `longrun-9.9.9-${target}`;
    const dir = join(scratch, "fake");
    mkdirSync(join(dir, name), { recursive: true });
    writeFileSync(join(dir, name, "longrun"), contents, { mode: 0o755 });
    const archive = join(scratch, `${name}.tar.gz`);
    execFileSync("tar", ["-czf", archive, "-C", dir, name]);
    const sums = join(scratch, "SHA256SUMS");
    writeFileSync(sums, `${sha256(sumOf ?? readFileSync(archive))}  ${name}.tar.gz\n`);
    server.files.set("SHA256SUMS", sums);
    server.files.set(`${name}.tar.gz`, archive);
    return { archive, sums };
  }

  test("--print-target names this machine", async () => {
    const r = await install({}, ["--print-target"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.trim(), /^(linux|darwin)-(x64|arm64)(-musl)?$/);
    if (host === "linux-x64" && existsSync("/lib64/ld-linux-x86-64.so.2")) assert.equal(r.stdout.trim(), "linux-x64");
  });

  test("installs this machine's archive from the release into PREFIX/bin, checked, and leaves no temporary file", { skip: releaseSkip }, async () => {
    server.files.set("SHA256SUMS", join(RELEASE_DIR, "SHA256SUMS"));
    server.files.set(hostArchive!, join(RELEASE_DIR, hostArchive!));
    const r = await install();
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(server.asked, ["SHA256SUMS", hostArchive]);
    const exe = join(prefix, "bin", "longrun");
    assert.equal(statSync(exe).mode & 0o777, 0o755);
    const v = await run([exe, "--version"]);
    const m = VERSION_LINE.exec(v.stdout.trim());
    assert.ok(m, v.stdout + v.stderr);
    assert.deepEqual([m[1], m[2]], [VERSION, host]);
    assert.match(r.stderr, new RegExp(`installed longrun ${VERSION.replace(/\./g, "\\.")} .* to ${exe}`));
    assert.deepEqual(listTree(tmp), [], "the download's temporary directory is removed");
    assert.deepEqual(listTree(join(prefix, "bin")), ["longrun"]);
  });

  test("a tampered archive is refused: nothing installed, an earlier install kept", async () => {
    // SHA256SUMS names the genuine archive's digest; the server hands out another one under its name
    fakeRelease(host ?? "linux-x64", "#!/bin/sh\necho tampered\n", new TextEncoder().encode("the genuine archive"));
    mkdirSync(join(prefix, "bin"), { recursive: true });
    writeFileSync(join(prefix, "bin", "longrun"), "earlier install\n");
    const r = await install({ LONGRUN_TARGET: host ?? "linux-x64" });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /checksum mismatch for longrun-9\.9\.9-[a-z0-9-]+\.tar\.gz: SHA256SUMS says [0-9a-f]{64}, the download is [0-9a-f]{64}; refusing to install/);
    assert.equal(readFileSync(join(prefix, "bin", "longrun"), "utf8"), "earlier install\n");
    assert.deepEqual(listTree(join(prefix, "bin")), ["longrun"]);
    assert.deepEqual(listTree(tmp), []);
  });

  test("a release without this machine's archive: a clear error, nothing downloaded but SHA256SUMS", async () => {
    fakeRelease("darwin-arm64", "x");
    const r = await install({ LONGRUN_TARGET: "linux-arm64-musl" });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /lists no single archive for linux-arm64-musl/);
    assert.deepEqual(server.asked, ["SHA256SUMS"]);
    assert.equal(existsSync(prefix), false);
  });

  test("SHA256SUMS pinned by LONGRUN_SHA256SUMS_SHA256: a different one is refused", async () => {
    fakeRelease("linux-x64", "x");
    const r = await install({ LONGRUN_TARGET: "linux-x64", LONGRUN_SHA256SUMS_SHA256: "0".repeat(64) });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /SHA256SUMS has SHA-256 [0-9a-f]{64}, not LONGRUN_SHA256SUMS_SHA256's 0{64}: refusing to install/);
    assert.equal(existsSync(prefix), false);
  });

  test("an archive that passes the check but does not run here is not installed", async () => {
    fakeRelease("linux-x64", "#!/bin/sh\necho 'cannot execute: wrong architecture' >&2\nexit 126\n");
    const r = await install({ LONGRUN_TARGET: "linux-x64" });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /the downloaded longrun does not run on this machine: cannot execute: wrong architecture/);
    assert.equal(existsSync(join(prefix, "bin", "longrun")), false);
  });

  test("without LONGRUN_RELEASE_URL it says what to set; an unknown target is named", async () => {
    const a = await install({ LONGRUN_RELEASE_URL: "" });
    assert.equal(a.code, 1);
    assert.match(a.stderr, /set LONGRUN_RELEASE_URL to the release directory/);
    const b = await install({ LONGRUN_TARGET: "solaris-sparc" });
    assert.equal(b.code, 1);
    assert.match(b.stderr, /unknown target solaris-sparc/);
  });
});
