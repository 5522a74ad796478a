/**
 * Where the executable puts libSQL's native module (src/runtime/bun/native.ts): written once to
 * the user's cache and reused, never into $TMPDIR while a cache works; with a read-only or noexec
 * /tmp it still runs; with HOME and TMPDIR both unusable it loads from memory (Linux memfd) with
 * one copy per process; LONGRUN_NATIVE_DIR is used alone and a place that fails is named.
 *
 * The mount cases need root (CI runs as root); elsewhere they are skipped, saying why.
 */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { listTree, run, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";
import { bindReadOnly, CAN_MOUNT, cleanEnv, mountTmpfs, stdioSmoke, unmountAll, VERSION_LINE } from "./helpers.ts";
import { VERSION } from "../../src/version.ts";

const mountSkip = CAN_MOUNT ? false : "needs root and mount (read-only and noexec tmpfs mounts); CI runs as root";
const linuxSkip = process.platform === "linux" ? false : "Linux only";

/** The one `<version>-<hash>` directory under a cache base, and the module in it. */
function cachedModule(base: string): { dir: string; file: string } {
  const dirs = readdirSync(base).filter((d) => d.startsWith(`${VERSION}-`));
  assert.equal(dirs.length, 1, `one cache directory under ${base}: ${readdirSync(base)}`);
  const dir = join(base, dirs[0]!);
  assert.deepEqual(readdirSync(dir), ["libsql.node"], "only the module, no temporary file left");
  return { dir, file: join(dir, "libsql.node") };
}

describe("the executable's native module", () => {
  let scratch: string;
  let home: string;
  let tmp: string;
  let root: string;
  beforeEach(() => {
    requireBinary();
    scratch = tempDir("longrun-native-");
    home = join(scratch, "home");
    tmp = join(scratch, "tmp");
    root = join(scratch, "root");
    for (const d of [home, tmp, root]) mkdirSync(d);
  });
  afterEach(() => unmountAll(scratch));

  test("--version names the version, the target and the commit", async () => {
    const v = await run([BINARY, "--version"]);
    assert.equal(v.code, 0);
    const m = VERSION_LINE.exec(v.stdout.trim());
    assert.ok(m, v.stdout);
    assert.equal(m[1], VERSION);
    assert.match(m[2]!, /^(linux|darwin|windows)-(x64|arm64)(-musl)?$/);
  });

  test("written once to ~/.cache/longrun/<version>-<hash>/, reused by the next start; nothing in TMPDIR", async () => {
    const env = cleanEnv({ HOME: home, TMPDIR: tmp });
    await stdioSmoke([BINARY], root, env);
    const { file } = cachedModule(join(home, ".cache", "longrun"));
    const first = statSync(file);
    assert.equal(first.mode & 0o077, 0, "private to the user");
    await stdioSmoke([BINARY], root, env);
    const again = statSync(file);
    assert.deepEqual([again.ino, again.mtimeMs], [first.ino, first.mtimeMs], "reused, not written again");
    assert.deepEqual(listTree(tmp), [], "nothing left in TMPDIR");
  });

  test("XDG_CACHE_HOME is the cache when set; a damaged copy there is replaced", async () => {
    const xdg = join(scratch, "xdg");
    const env = cleanEnv({ HOME: home, TMPDIR: tmp, XDG_CACHE_HOME: xdg });
    await stdioSmoke([BINARY], root, env);
    const { file } = cachedModule(join(xdg, "longrun"));
    const size = statSync(file).size;
    truncateSync(file, 1000);
    await stdioSmoke([BINARY], root, env);
    assert.equal(statSync(file).size, size);
    assert.deepEqual(listTree(home), [], "HOME untouched");
    assert.deepEqual(listTree(tmp), []);
  });

  test("several first starts at once: all run, one file, no temporary file left", async () => {
    const env = cleanEnv({ HOME: home, TMPDIR: tmp });
    const roots = [0, 1, 2, 3].map((i) => join(scratch, `root${i}`));
    for (const r of roots) mkdirSync(r);
    await Promise.all(roots.map((r) => stdioSmoke([BINARY], r, env)));
    cachedModule(join(home, ".cache", "longrun"));
    assert.deepEqual(listTree(tmp), []);
  });

  test("LONGRUN_NATIVE_DIR must be absolute: exit 1 naming it", async () => {
    const s = await run([BINARY, "serve", "--root", root], { env: cleanEnv({ HOME: home, TMPDIR: tmp, LONGRUN_NATIVE_DIR: "relative/dir" }), input: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.status" }) + "\n" });
    assert.equal(s.code, 1, s.stdout + s.stderr);
    assert.match(s.stderr, /LONGRUN_NATIVE_DIR=relative\/dir: not an absolute path/);
    assert.doesNotMatch(s.stderr, /\n\s+at /, "a message, not a stack trace");
  });

  describe("with mounts", { skip: mountSkip }, () => {
    test("TMPDIR on a read-only file system: runs, and writes nothing there", async () => {
      mountTmpfs(tmp, "ro");
      await stdioSmoke([BINARY], root, cleanEnv({ HOME: home, TMPDIR: tmp }));
      cachedModule(join(home, ".cache", "longrun"));
      assert.deepEqual(listTree(tmp), []);
    });

    test("TMPDIR noexec: runs from the cache", async () => {
      mountTmpfs(tmp, "noexec");
      await stdioSmoke([BINARY], root, cleanEnv({ HOME: home, TMPDIR: tmp }));
      cachedModule(join(home, ".cache", "longrun"));
      assert.deepEqual(listTree(tmp), []);
    });

    test("HOME read-only and TMPDIR noexec: loaded from memory (memfd), one copy for all threads, nothing written", { skip: linuxSkip }, async () => {
      mountTmpfs(home, "ro");
      mountTmpfs(tmp, "noexec");
      const { memfds } = await stdioSmoke([BINARY], root, cleanEnv({ HOME: home, TMPDIR: tmp }));
      assert.equal(memfds.length, 1, `one memory file for the main thread and the Workers: ${memfds}`);
      assert.deepEqual(listTree(tmp), [], "what was written to the noexec TMPDIR and failed to load is removed");
      assert.deepEqual(listTree(home), []);
    });

    test("LONGRUN_NATIVE_DIR on a noexec mount: exit 1, naming it and why, nothing left there", async () => {
      const native = join(scratch, "native");
      mountTmpfs(native, "noexec");
      const s = await run([BINARY, "serve", "--root", root], {
        env: cleanEnv({ HOME: home, TMPDIR: tmp, LONGRUN_NATIVE_DIR: native }),
        input: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.status" }) + "\n",
      });
      assert.equal(s.code, 1, s.stdout + s.stderr);
      assert.match(s.stderr, /cannot load libSQL's native module from LONGRUN_NATIVE_DIR/);
      assert.match(s.stderr, /noexec/);
      assert.match(s.stderr, /Set LONGRUN_NATIVE_DIR to/);
      assert.equal(s.stdout, "");
      assert.deepEqual(listTree(native), []);
      assert.deepEqual(listTree(home), [], "LONGRUN_NATIVE_DIR is used alone: no fallback");
    });

    test("LONGRUN_NATIVE_DIR filled beforehand and then read-only (an image's layer): used without writing", async () => {
      const native = join(scratch, "native");
      mkdirSync(native);
      await stdioSmoke([BINARY], root, cleanEnv({ HOME: home, TMPDIR: tmp, LONGRUN_NATIVE_DIR: native }));
      const { file } = cachedModule(native);
      const before = statSync(file);
      bindReadOnly(native);
      mountTmpfs(tmp, "ro,noexec");
      writeFileSync(join(home, "marker"), "");
      await stdioSmoke([BINARY], root, cleanEnv({ HOME: home, TMPDIR: tmp, LONGRUN_NATIVE_DIR: native }));
      assert.equal(statSync(file).mtimeMs, before.mtimeMs);
      assert.deepEqual(listTree(home), ["marker"]);
    });
  });
});
