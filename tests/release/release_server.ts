/**
 * A release served over HTTP on 127.0.0.1 for the install.sh tests (a node:http server in the test
 * process), able to answer 404 and to cut a file short; and the fixture those tests share: a
 * scratch prefix and TMPDIR, install.sh run with POSIX sh (dash on Debian), a fake release.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, afterEach, before, beforeEach } from "node:test";
import { REPO, removeDir, run, type RunResult, tempDir } from "../support/helpers.ts";
import { which } from "./helpers.ts";

export const INSTALL = join(REPO, "install.sh");
export const SH = which("dash") ?? "/bin/sh";
export const CURL = which("curl");
export const downloaderSkip = which("curl") || which("wget") ? false : "needs curl or wget";
export const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

/** How a file is cut short: after `bytes`, either announcing its full length (the client can tell) or sent chunked (it cannot). */
export interface Cut {
  bytes: number;
  announced: boolean;
}

/** Serves `files` (URL name -> path on disk), 404 for anything else, and records the names asked for. */
export class ReleaseServer {
  files = new Map<string, string>();
  cuts = new Map<string, Cut>();
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
      const cut = this.cuts.get(name);
      if (cut) {
        const data = readFileSync(path).subarray(0, cut.bytes);
        if (cut.announced) {
          // fewer bytes than the length announced, then the connection drops
          res.writeHead(200, { "content-length": String(statSync(path).size) });
          res.write(data, () => res.socket?.destroy());
        } else {
          // no length and no chunks: the body ends where the connection closes, so the client cannot tell
          req.socket.end(Buffer.concat([Buffer.from("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n"), data]));
        }
        return;
      }
      res.writeHead(200, { "content-length": String(statSync(path).size) });
      createReadStream(path).pipe(res);
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}`;
  }

  reset(): void {
    this.files.clear();
    this.cuts.clear();
    this.asked.length = 0;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.#server?.closeAllConnections?.();
      this.#server?.close(() => resolve()) ?? resolve();
    });
  }
}

/** One test's scratch space: where install.sh installs (PREFIX) and its TMPDIR. */
export interface Scratch {
  dir: string;
  prefix: string;
  tmp: string;
}

/**
 * Inside a describe: a server started for the suite, and for each test a fresh scratch directory
 * (`s`, the same object, its fields renewed) that is removed after it; `install` runs install.sh.
 */
export function installFixture(prefix: string): { server: ReleaseServer; s: Scratch; install: ReturnType<typeof installer> } {
  const server = new ReleaseServer();
  const s: Scratch = { dir: "", prefix: "", tmp: "" };
  before(() => server.start());
  after(() => server.stop());
  beforeEach(() => {
    s.dir = tempDir(prefix);
    s.prefix = join(s.dir, "prefix");
    s.tmp = join(s.dir, "tmp");
    mkdirSync(s.tmp);
    server.reset();
  });
  afterEach(() => removeDir(s.dir));
  return { server, s, install: installer(server, () => s) };
}

/** install.sh run with `sh` against `server`, every setting it reads given (so none leaks in from the environment). */
export function installer(server: ReleaseServer, s: () => Scratch) {
  return (env: Record<string, string> = {}, args: string[] = [], script = INSTALL): Promise<RunResult> =>
    run([SH, script, ...args], {
      env: { LONGRUN_RELEASE_URL: server.url, PREFIX: s().prefix, TMPDIR: s().tmp, LONGRUN_TARGET: "", LONGRUN_SHA256SUMS_SHA256: "", LONGRUN_MINISIGN_PUBKEY: "", ...env },
      timeoutMs: 120_000,
    });
}

/**
 * A release directory served by `server` with one fake archive for `target` (its `longrun` is the
 * shell script `contents`) and a SHA256SUMS naming `sumOf`'s digest (default: the archive's).
 */
export function fakeRelease(server: ReleaseServer, scratch: string, target: string, contents: string, sumOf?: Uint8Array): { archive: string; sums: string } {
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

/** A fake `longrun` that runs anywhere and answers --version as the real one does. */
export const FAKE_LONGRUN = "#!/bin/sh\necho 'longrun 9.9.9 (linux-x64, commit unknown)'\n";

/** The programs install.sh uses, for a PATH that holds only them. */
const TOOLS = ["uname", "getconf", "ldd", "grep", "ls", "mktemp", "rm", "awk", "cut", "tail", "head", "tr", "tar", "gzip", "chmod", "mkdir", "cp", "mv", "cat", "curl", "wget", "sha256sum", "shasum", "openssl", "minisign"];

/** A directory of links to the programs install.sh uses, leaving out `without`: a PATH on which they are missing. */
export function pathWithout(dir: string, without: string[]): string {
  mkdirSync(dir, { recursive: true });
  for (const tool of TOOLS) {
    if (without.includes(tool)) continue;
    const at = which(tool);
    if (at) symlinkSync(at, join(dir, tool));
  }
  return dir;
}
