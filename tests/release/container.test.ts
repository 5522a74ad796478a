/**
 * What a container image needs for the executable, tested without an image (none can be built
 * or pulled here): a root file system holding only the executable and the shared libraries `ldd`
 * names (a chroot), /proc mounted (as every container runtime does; Bun aborts without it), run
 * as an unprivileged user (nobody) with /tmp read-only and noexec.
 *
 * It learns and checks: libSQL's native module also needs libgcc_s.so.1, which `ldd` of the
 * executable does not name (the module is loaded later) - without it, start-up says so; with the
 * module's libraries too (what distroless/cc and debian-slim have) it serves, loading the module
 * from memory when neither HOME nor /tmp can hold it, or from HOME's cache when it can;
 * `longrun http` stops cleanly on SIGTERM (exit 0), `longrun health` (the image's HEALTHCHECK)
 * answers from inside, and a restart keeps the tokens.
 *
 * Needs root (chroot, mount) and ldd; elsewhere skipped, saying why.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { listTree, REPO, run, tempDir, until } from "../support/helpers.ts";
import { BINARY } from "../support/server.ts";
import { CAN_MOUNT, mountTmpfs, stdioSmoke, unmountAll, VERSION_LINE, which } from "./helpers.ts";

const NOBODY = 65534;
const CHROOT = which("chroot");
const LDD = which("ldd");
const hostLibsql = process.arch === "arm64" ? "linux-arm64-gnu" : "linux-x64-gnu";
const NATIVE = join(REPO, "node_modules", "@libsql", hostLibsql, "index.node");

const skip =
  process.platform !== "linux"
    ? "Linux only"
    : !CAN_MOUNT
      ? "needs root, chroot and mount; CI runs as root"
      : !CHROOT || !LDD
        ? "needs chroot and ldd"
        : !existsSync(BINARY)
          ? `${BINARY} is missing: build it with ./compile.sh`
          : !existsSync(NATIVE)
            ? `${NATIVE} is missing (npm ci on this platform)`
            : false;
if (skip) console.warn(`tests/release/container: skipping: ${skip}`);

/** The absolute paths of the shared libraries (and loader) `ldd` names for `file`. */
function lddLibraries(file: string): string[] {
  const out = spawnSync(LDD!, [file], { encoding: "utf8" });
  assert.equal(out.status, 0, out.stderr);
  return [...out.stdout.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((m) => m[1]!);
}

/** A root file system with the executable at /longrun and `libraries` at their paths. */
function rootfs(dir: string, libraries: string[]): void {
  chmodSync(dir, 0o755);
  copyFileSync(BINARY, join(dir, "longrun"));
  chmodSync(join(dir, "longrun"), 0o755);
  for (const lib of new Set(libraries)) {
    mkdirSync(join(dir, dirname(lib)), { recursive: true, mode: 0o755 });
    writeFileSync(join(dir, lib), readFileSync(lib), { mode: 0o755 });
  }
  // the project root, the user's; /tmp read-only and noexec; /proc as a container runtime mounts it
  mkdirSync(join(dir, "data"), { mode: 0o755 });
  chownSync(join(dir, "data"), NOBODY, NOBODY);
  mountTmpfs(join(dir, "tmp"), "ro,noexec,nosuid,nodev");
  mkdirSync(join(dir, "proc"));
  spawnSync("mount", ["-t", "proc", "proc", join(dir, "proc")], { stdio: "ignore" });
}

/** argv that runs /longrun inside `dir` as nobody. */
const inside = (dir: string) => [CHROOT!, `--userspec=${NOBODY}:${NOBODY}`, dir, "/longrun"];
/** The environment inside: nothing of this machine's. */
const env = (over: Record<string, string> = {}) => ({ HOME: "", TMPDIR: "/tmp", XDG_CACHE_HOME: "", LONGRUN_NATIVE_DIR: "", PATH: "/", ...over });

describe("in an empty root file system, as nobody, /tmp read-only and noexec", { skip }, () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir("longrun-rootfs-");
  });
  afterEach(() => unmountAll(dir));

  test("with only ldd's libraries: --version runs; serving says which library libSQL's module lacks", async () => {
    rootfs(dir, lddLibraries(BINARY));
    const v = await run([...inside(dir), "--version"], { env: env() });
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout.trim(), VERSION_LINE);
    const s = await run([...inside(dir), "serve", "--root", "/data"], { env: env(), input: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.status" }) + "\n" });
    assert.equal(s.code, 1, s.stdout + s.stderr);
    assert.match(s.stderr, /cannot load libSQL's native module: it needs the shared library libgcc_s\.so\.1, which this system does not have/);
    assert.doesNotMatch(s.stderr, /\n\s+at /, "a message, not a stack trace");
  });

  test("with the native module's libraries too: serves with no HOME, loading the module from memory; writes only the root", async () => {
    rootfs(dir, [...lddLibraries(BINARY), ...lddLibraries(NATIVE)]);
    const { memfds } = await stdioSmoke(inside(dir), "/data", env());
    assert.equal(memfds.length, 1);
    assert.ok(existsSync(join(dir, "data", "memory.db")));
    assert.deepEqual(listTree(join(dir, "tmp")), []);
  });

  test("with a writable HOME: the module is cached there once and loaded from the file", async () => {
    rootfs(dir, [...lddLibraries(BINARY), ...lddLibraries(NATIVE)]);
    mkdirSync(join(dir, "home", "app"), { recursive: true, mode: 0o755 });
    chownSync(join(dir, "home", "app"), NOBODY, NOBODY);
    const { memfds } = await stdioSmoke(inside(dir), "/data", env({ HOME: "/home/app" }));
    assert.equal(memfds.length, 0);
    const cached = listTree(join(dir, "home", "app")).filter((f) => f.endsWith("/libsql.node"));
    assert.equal(cached.length, 1, String(listTree(join(dir, "home", "app"))));
  });

  test("longrun http (the image's command) stops cleanly on SIGTERM (exit 0), `longrun health` (the image's HEALTHCHECK) answers inside, and a restart keeps the tokens", async () => {
    rootfs(dir, [...lddLibraries(BINARY), ...lddLibraries(NATIVE)]);
    const tokenFile = join(dir, "data", ".longrun", "http.json");
    const startOnce = async () => {
      const child = spawn(inside(dir)[0]!, [...inside(dir).slice(1), "http", "--root", "/data", "--host", "127.0.0.1", "--port", "0"], { env: env(), stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
      const line = await until(() => stdout.split("\n").find((l) => l.startsWith("{")), `the http server's start line (stderr: ${stderr})`, 30_000);
      return { child, exited, url: (JSON.parse(line) as { url: string }).url, stderr: () => stderr };
    };
    const stopOnce = async (s: Awaited<ReturnType<typeof startOnce>>) => {
      process.kill(s.child.pid!, "SIGTERM");
      return Promise.race([s.exited, new Promise<string>((r) => setTimeout(() => r("still running 10 s after SIGTERM"), 10_000))]);
    };
    const first = await startOnce();
    try {
      const health = await run([...inside(dir), "health", "--root", "/data"], { env: env() });
      assert.equal(health.code, 0, health.stdout + health.stderr);
      assert.equal(health.stdout, `ok: ${first.url}/health answered 200\n`);
      assert.equal(await stopOnce(first), 0, first.stderr());
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill("SIGKILL");
      await first.exited;
    }
    const kept = JSON.parse(readFileSync(tokenFile, "utf8")) as { agent_token: string; pid?: number };
    assert.equal(kept.pid, undefined, "the token file stays, without the pid");
    const down = await run([...inside(dir), "health", "--root", "/data", "--timeout", "2"], { env: env() });
    assert.equal(down.code, 1, down.stdout + down.stderr);
    const second = await startOnce();
    try {
      const r = await fetch(`${second.url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${kept.agent_token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.status", params: {} }) });
      assert.equal(r.status, 200, "the token from before the restart");
      await r.body?.cancel();
      assert.equal(await stopOnce(second), 0, second.stderr());
    } finally {
      if (second.child.exitCode === null && second.child.signalCode === null) second.child.kill("SIGKILL");
      await second.exited;
    }
  });
});
