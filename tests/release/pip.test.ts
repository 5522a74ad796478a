/**
 * The pip channel: the release's own wheels in dist/release/python/ (one per platform, each
 * carrying that platform's executable; scripts/channels.ts), under a PEP 503 simple index this
 * test serves on 127.0.0.1. In a fresh venv, `pip install --index-url …/simple/ longrun` fetches
 * only this machine's wheel and nothing else (no dependencies; there is no PyPI here); the
 * `longrun` command it installs says its version and runs the demo, and `import longrun` drives
 * the bundled executable.
 *
 * Skipped, saying why, when the release was not built (`npm run release`), when it has no wheel
 * for this machine, or when python3 cannot make a venv with pip (Debian: apt-get install python3-venv).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { VERSION } from "../../src/version.ts";
import { REPO, removeDir, run, type RunResult, tempDir } from "../support/helpers.ts";
import { skipped } from "../support/skips.ts";
import { HOST_TARGET, LocalServer, VERSION_LINE, which, withOnlyEnv } from "./helpers.ts";

const PYTHON_DIR = join(REPO, "dist", "release", "python");
const PYTHON = which("python3");

/** The wheel platform tag each release target is built for (what pip on that machine accepts). */
const TAG: Record<string, RegExp> = {
  "linux-x64": /^manylinux_2_\d+_x86_64$/,
  "linux-arm64": /^manylinux_2_\d+_aarch64$/,
  "linux-x64-musl": /^musllinux_1_\d+_x86_64$/,
  "linux-arm64-musl": /^musllinux_1_\d+_aarch64$/,
  "darwin-x64": /^macosx_\d+_\d+_x86_64$/,
  "darwin-arm64": /^macosx_\d+_\d+_arm64$/,
  "windows-x64": /^win_amd64$/,
};

const host = HOST_TARGET;
const wheels = existsSync(PYTHON_DIR) ? readdirSync(PYTHON_DIR).filter((f) => f.endsWith(".whl")).sort() : [];
const tagOf = (wheel: string) => wheel.replace(/\.whl$/, "").split("-").at(-1)!;
const hostWheel = host ? wheels.find((w) => TAG[host.name]!.test(tagOf(w))) : undefined;
const skip = skipped(
  "tests/release/pip.test.ts",
  !PYTHON
    ? "python3 is not on PATH"
    : spawnSync(PYTHON, ["-c", "import ensurepip, venv"]).status !== 0
      ? "python3 cannot make a venv with pip here (Debian: apt-get install python3-venv)"
      : wheels.length === 0
        ? "no wheels here: `npm run release` writes them into dist/release/python/ (.ci/run builds the release before the tests)"
        : !host
          ? `this machine (${process.platform}-${process.arch}) is not a release target`
          : !hostWheel
            ? `dist/release/python/ has no wheel for this machine (${host.name})`
            : false,
);

/** What each wheel (argv) says of itself: WHEEL's Tag, METADATA's Requires-Dist, its console scripts, its executables' names, sizes and first bytes. */
const WHEEL_FACTS = `
import json, sys, zipfile
out = {}
for path in sys.argv[1:]:
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        text = lambda suffix: next((z.read(n).decode() for n in names if n.endswith(suffix) and ".dist-info/" in n), "")
        exe = [{"name": n, "bytes": z.getinfo(n).file_size, "head": z.open(n).read(4).hex()} for n in names if n.startswith("longrun/bin/")]
        out[path] = {"tag": next((l[5:] for l in text("/WHEEL").splitlines() if l.startswith("Tag: ")), ""),
                     "requires": [l for l in text("/METADATA").split("\\n\\n")[0].splitlines() if l.startswith("Requires-Dist:")],
                     "scripts": text("/entry_points.txt"), "exe": exe}
print(json.dumps(out))
`;

/** A PEP 503 simple index of `wheels`: /simple/, /simple/longrun/ with each file's sha256, the files under /files/. */
function simpleIndex(server: LocalServer): void {
  const links = wheels.map((w) => {
    const digest = createHash("sha256").update(readFileSync(join(PYTHON_DIR, w))).digest("hex");
    server.routes.set(`/files/${w}`, { file: join(PYTHON_DIR, w) });
    return `<a href="/files/${w}#sha256=${digest}" data-requires-python="&gt;=3.9">${w}</a><br/>`;
  });
  const html = (title: string, body: string[]) => `<!DOCTYPE html>\n<html><head><meta name="pypi:repository-version" content="1.0"><title>${title}</title></head><body>\n${body.join("\n")}\n</body></html>\n`;
  server.routes.set("/simple/", { body: html("Simple index", ['<a href="/simple/longrun/">longrun</a>']), type: "text/html" });
  server.routes.set("/simple/longrun/", { body: html("Links for longrun", links), type: "text/html" });
}

describe("pip: the release's wheels from a simple index on 127.0.0.1", { skip }, () => {
  const server = new LocalServer();
  let scratch: string;
  let env: Record<string, string>;
  let venv: string;
  let installed: RunResult;
  let asked: string[];
  before(async () => {
    await server.start();
    simpleIndex(server);
    scratch = tempDir("longrun-pip-");
    for (const d of ["home", "tmp", "work"]) mkdirSync(join(scratch, d));
    // nothing of the caller's pip: no PIP_* settings, no pip.conf, no cache
    env = {
      PATH: "/usr/bin:/bin",
      HOME: join(scratch, "home"),
      TMPDIR: join(scratch, "tmp"),
      PIP_CONFIG_FILE: "/dev/null",
      PIP_DISABLE_PIP_VERSION_CHECK: "1",
      PIP_NO_INPUT: "1",
      PIP_NO_CACHE_DIR: "1",
    };
    venv = join(scratch, "v");
    const made = await run(withOnlyEnv(env, [PYTHON!, "-m", "venv", venv]), { cwd: join(scratch, "work"), timeoutMs: 300_000 });
    assert.equal(made.code, 0, made.stdout + made.stderr);
    const start = server.asked.length;
    installed = await run(withOnlyEnv(env, [join(venv, "bin", "pip"), "install", "--index-url", `${server.url}/simple/`, "longrun"]), { cwd: join(scratch, "work"), timeoutMs: 600_000 });
    asked = server.asked.slice(start);
  });
  after(async () => {
    await server.stop();
    if (scratch) removeDir(scratch);
  });

  test("pip install --index-url fetches this machine's wheel and nothing else", () => {
    assert.equal(installed.code, 0, installed.stdout + installed.stderr);
    assert.deepEqual(asked.filter((p) => p.startsWith("/files/")), [`/files/${hostWheel}`]);
    assert.deepEqual([...new Set(asked.filter((p) => !p.startsWith("/files/")))], ["/simple/longrun/"], "no other project asked for: the wheel has no dependencies");
  });

  test("the installed longrun command names the release's version and this machine's target", async () => {
    const v = await run(withOnlyEnv(env, [join(venv, "bin", "longrun"), "--version"]), { cwd: join(scratch, "work") });
    assert.equal(v.code, 0, v.stderr);
    const m = VERSION_LINE.exec(v.stdout.trim());
    assert.ok(m, v.stdout + v.stderr);
    assert.deepEqual([m[1], m[2]], [VERSION, host!.name]);
  });

  test("the installed longrun runs the demo: last line OK", async () => {
    const d = await run(withOnlyEnv(env, [join(venv, "bin", "longrun"), "demo"]), { cwd: join(scratch, "work"), timeoutMs: 120_000 });
    assert.equal(d.code, 0, d.stdout + d.stderr);
    assert.match(d.stdout.trim().split("\n").at(-1)!, /^OK\b/);
  });

  test("import longrun drives the executable the wheel carries: a task starts read-only and a write is refused", async () => {
    const root = join(scratch, "root");
    mkdirSync(root);
    const script = [
      "import json, os, sys, longrun",
      "with longrun.LongrunClient(sys.argv[1]) as lr:",
      "    started = lr.start_task('installed from the release wheel')",
      "    try:",
      "        lr.require_writable('edit a file')",
      "        refused = None",
      "    except longrun.WriteGateViolation as e:",
      "        refused = e.reason",
      "    print(json.dumps({'binary': os.path.realpath(lr.binary), 'mode': started['task']['access_mode'], 'refused': refused}))",
    ].join("\n");
    const r = await run(withOnlyEnv(env, [join(venv, "bin", "python"), "-c", script, root]), { cwd: join(scratch, "work"), timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const out = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { binary: string; mode: string; refused: string | null };
    assert.ok(out.binary.startsWith(venv + "/"), `the bundled executable: ${out.binary}`);
    assert.deepEqual({ mode: out.mode, refused: out.refused }, { mode: "read_only", refused: "read_only" });
  });

  test("each wheel is py3-none-<its executable's platform>, carries that executable and the longrun command, and requires nothing", () => {
    const built = JSON.parse(readFileSync(join(PYTHON_DIR, "..", "manifest.json"), "utf8")) as { targets: { target: string; executable_bytes: number }[] };
    const read = spawnSync(PYTHON!, ["-c", WHEEL_FACTS, ...wheels.map((w) => join(PYTHON_DIR, w))], { encoding: "utf8", maxBuffer: 1 << 24 });
    assert.equal(read.status, 0, read.stderr);
    const facts = JSON.parse(read.stdout) as Record<string, { tag: string; requires: string[]; scripts: string; exe: { name: string; bytes: number; head: string }[] }>;
    const seen: string[] = [];
    for (const w of wheels) {
      const f = facts[join(PYTHON_DIR, w)]!;
      const target = Object.keys(TAG).find((t) => TAG[t]!.test(tagOf(w)));
      assert.ok(target, `${w}: a release target's tag`);
      seen.push(target);
      assert.equal(f.tag, `py3-none-${tagOf(w)}`, `${w}: WHEEL's Tag`);
      assert.deepEqual(f.requires, [], `${w}: no Requires-Dist`);
      assert.match(f.scripts, /^longrun = longrun\.__main__:main$/m, `${w}: the longrun command`);
      const exe = target === "windows-x64" ? "longrun/bin/longrun.exe" : "longrun/bin/longrun";
      assert.deepEqual(f.exe.map((e) => e.name), [exe], `${w}: one executable`);
      assert.equal(f.exe[0]!.bytes, built.targets.find((t) => t.target === target)?.executable_bytes, `${w}: the archive's executable`);
      assert.ok(f.exe[0]!.head.startsWith(target.startsWith("linux") ? "7f454c46" : target.startsWith("darwin") ? "cffaedfe" : "4d5a"), `${w}: an executable for ${target}`);
    }
    assert.equal(new Set(seen).size, seen.length, "one wheel per platform");
  });
});
