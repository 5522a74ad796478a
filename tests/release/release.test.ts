/**
 * The release (`npm run release`, scripts/release.ts): archives and SHA256SUMS that agree, each
 * holding an executable of the right kind for its target; the linux-arm64 executable run under
 * qemu-user (--version and the stdio smoke); the musl executables as far as this machine allows.
 *
 * Skipped, saying why, when the release was not built here (.ci/run builds it before the tests)
 * or a tool is missing (qemu-aarch64 and /usr/aarch64-linux-gnu come from apt's qemu-user,
 * libc6-arm64-cross and libgcc-s1-arm64-cross; .ci/run installs them).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { Manifest } from "../../scripts/release.ts";
import { VERSION } from "../../src/version.ts";
import { REPO, removeDir, run, tempDir } from "../support/helpers.ts";
import { BUILD_DIR, cleanEnv, elfInterpreter, elfMachine, machO, peHeader, RELEASE_DIR, stdioSmoke, VERSION_LINE, which } from "./helpers.ts";

const SUMS = join(RELEASE_DIR, "SHA256SUMS");
const built = existsSync(SUMS);
const releaseSkip = built ? false : "no release here: build it with `npm run release` (.ci/run does before the tests)";

const manifest = (): Manifest => JSON.parse(readFileSync(join(RELEASE_DIR, "manifest.json"), "utf8"));
const hasBuild = (target: string, exe = "longrun") => existsSync(join(BUILD_DIR, target, exe));
const buildOf = (target: string, exe = "longrun") => join(BUILD_DIR, target, exe);

const macSkip = hasBuild("darwin-x64") && hasBuild("darwin-arm64") ? false : "no macOS builds here";
const windowsSkip = hasBuild("windows-x64", "longrun.exe") ? false : "no Windows build here";

/** musl: Debian's `musl` package has the loader but no musl libstdc++/libgcc (Alpine's come with apk add libstdc++ libgcc). */
const MUSL_LOADER = "/lib/ld-musl-x86_64.so.1";
const muslRunSkip = ((): string | false => {
  if (!hasBuild("linux-x64-musl")) return "no linux-x64-musl build";
  if (process.arch !== "x64" || !existsSync(MUSL_LOADER)) return `no musl loader here (${MUSL_LOADER}; apt-get install musl)`;
  const probe = spawnSync(MUSL_LOADER, [buildOf("linux-x64-musl"), "--version"], { encoding: "utf8" });
  const missing = /Error loading shared library ([^\s:]+)/.exec(probe.stderr ?? "");
  return missing ? `musl's loader is here but no ${missing[1]} built for musl (Debian has none; Alpine: apk add libstdc++ libgcc): linked, not run` : false;
})();

const QEMU = which("qemu-aarch64");
const ARM64_SYSROOT = "/usr/aarch64-linux-gnu";
const qemuSkip = !QEMU
  ? "qemu-aarch64 is missing (apt-get install qemu-user; .ci/run does)"
  : !existsSync(join(ARM64_SYSROOT, "lib", "ld-linux-aarch64.so.1"))
    ? `${ARM64_SYSROOT} is missing (apt-get install libc6-arm64-cross libgcc-s1-arm64-cross; .ci/run does)`
    : !existsSync(join(ARM64_SYSROOT, "lib", "libgcc_s.so.1"))
      ? "libgcc_s.so.1 for arm64 is missing (apt-get install libgcc-s1-arm64-cross; libSQL's native module needs it)"
      : !hasBuild("linux-arm64")
        ? "no linux-arm64 build: `npm run release` (or `-- --targets linux-arm64`) makes dist/build/linux-arm64/longrun"
        : false;

// (bun test and deno test do not print a skip's reason: say it once here)
for (const reason of [releaseSkip, qemuSkip, muslRunSkip]) if (reason) console.warn(`tests/release: skipping: ${reason}`);

describe("the release", { skip: releaseSkip }, () => {
  test("SHA256SUMS lists one archive per target of the manifest, each with its digest; the version is package.json's", () => {
    const m = manifest();
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string };
    assert.equal(m.version, pkg.version);
    assert.equal(m.version, VERSION);
    const lines = readFileSync(SUMS, "utf8").trim().split("\n");
    assert.equal(lines.length, m.targets.length + m.files.length, "one line per archive and per other file");
    for (const f of m.files) assert.ok(lines.includes(`${f.sha256}  ${f.name}`), `${f.name} in SHA256SUMS`);
    for (const t of m.targets) {
      assert.equal(t.archive, `longrun-${VERSION}-${t.target}.${t.target.startsWith("windows") ? "zip" : "tar.gz"}`);
      const digest = createHash("sha256").update(readFileSync(join(RELEASE_DIR, t.archive))).digest("hex");
      assert.equal(digest, t.sha256, t.archive);
      assert.ok(lines.includes(`${digest}  ${t.archive}`), `${t.archive} in SHA256SUMS`);
    }
  });

  test("install.sh is in the release, as the repository has it, listed in SHA256SUMS and the manifest", () => {
    const shipped = readFileSync(join(RELEASE_DIR, "install.sh"));
    assert.deepEqual(shipped, readFileSync(join(REPO, "install.sh")), "dist/release/install.sh is not the repository's: rebuild the release");
    const digest = createHash("sha256").update(shipped).digest("hex");
    assert.ok(readFileSync(SUMS, "utf8").split("\n").includes(`${digest}  install.sh`));
    assert.deepEqual(manifest().files.find((f) => f.name === "install.sh"), { name: "install.sh", sha256: digest, bytes: shipped.length });
  });

  test("the manifest names the signature exactly when there is one", () => {
    assert.equal(manifest().signature, existsSync(join(RELEASE_DIR, "SHA256SUMS.minisig")) ? "SHA256SUMS.minisig" : null);
  });

  test("each Linux archive unpacks to longrun-<version>-<target>/ with the executable for its machine and libc, LICENSE and README.md", async () => {
    for (const t of manifest().targets.filter((x) => x.target.startsWith("linux"))) {
      const dir = tempDir("longrun-unpack-");
      try {
        const x = await run(["tar", "-xzf", join(RELEASE_DIR, t.archive), "-C", dir]);
        assert.equal(x.code, 0, x.stderr);
        const top = join(dir, `longrun-${VERSION}-${t.target}`);
        for (const f of ["longrun", "LICENSE", "README.md", "docs/index.md", "docs/protocol.md"]) assert.ok(existsSync(join(top, f)), `${t.archive}: ${f}`);
        const exe = readFileSync(join(top, "longrun"));
        assert.equal(exe.length, t.executable_bytes);
        const arm = t.target.includes("arm64");
        assert.equal(elfMachine(exe), arm ? 0xb7 : 0x3e, t.target);
        const interp = elfInterpreter(exe);
        assert.equal(interp, t.target.endsWith("-musl") ? `/lib/ld-musl-${arm ? "aarch64" : "x86_64"}.so.1` : arm ? "/lib/ld-linux-aarch64.so.1" : "/lib64/ld-linux-x86-64.so.2");
      } finally {
        removeDir(dir);
      }
    }
  });

  test("macOS executables are Mach-O for their CPU and code-signed (arm64 Macs run nothing unsigned)", { skip: macSkip }, () => {
    for (const target of ["darwin-x64", "darwin-arm64"]) {
      const { cpu, commands } = machO(readFileSync(buildOf(target)));
      assert.equal(cpu, target === "darwin-arm64" ? 0x0100000c : 0x01000007, target);
      assert.ok(commands.includes(0x1d), `${target}: LC_CODE_SIGNATURE`);
    }
  });

  test("the Windows executable is a PE32+ console program for x64", { skip: windowsSkip }, () => {
    const { machine, subsystem } = peHeader(readFileSync(buildOf("windows-x64", "longrun.exe")));
    assert.equal(machine, 0x8664);
    assert.equal(subsystem, 3);
  });

  test("this machine's build runs: --version names its target and the release's commit", async (t) => {
    const host = process.platform === "linux" && process.arch === "x64" ? "linux-x64" : process.platform === "linux" && process.arch === "arm64" ? "linux-arm64" : null;
    if (!host || !hasBuild(host)) return t.skip("no build for this machine in the release");
    const v = await run([buildOf(host), "--version"]);
    const m = VERSION_LINE.exec(v.stdout.trim());
    assert.ok(m, v.stdout + v.stderr);
    assert.deepEqual([m[1], m[2], m[3]], [VERSION, host, manifest().commit]);
  });

  test("linux-x64-musl: the executable asks for musl's loader", { skip: hasBuild("linux-x64-musl") ? false : "no linux-x64-musl build" }, () => {
    assert.equal(elfInterpreter(readFileSync(buildOf("linux-x64-musl"))), "/lib/ld-musl-x86_64.so.1");
  });

  test("linux-x64-musl runs under musl's loader", { skip: muslRunSkip }, async () => {
    const v = await run([MUSL_LOADER, buildOf("linux-x64-musl"), "--version"]);
    assert.match(v.stdout.trim(), VERSION_LINE, v.stderr);
  });
});

describe("linux-arm64 under qemu-user", { skip: qemuSkip }, () => {
  const argv = [QEMU!, "-L", ARM64_SYSROOT, buildOf("linux-arm64")];

  test("--version names linux-arm64", async () => {
    const v = await run([...argv, "--version"], { timeoutMs: 60_000 });
    assert.equal(v.code, 0, v.stderr);
    const m = VERSION_LINE.exec(v.stdout.trim());
    assert.ok(m, v.stdout);
    assert.deepEqual([m[1], m[2]], [VERSION, "linux-arm64"]);
  });

  test("stdio smoke: task.start, memory.save, memory.search round trip", async () => {
    const scratch = tempDir("longrun-arm64-");
    try {
      const home = join(scratch, "home");
      const tmp = join(scratch, "tmp");
      const root = join(scratch, "root");
      for (const d of [home, tmp, root]) mkdirSync(d);
      await stdioSmoke(argv, root, cleanEnv({ HOME: home, TMPDIR: tmp }), 45_000);
    } finally {
      removeDir(scratch);
    }
  });
});
