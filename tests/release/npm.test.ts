/**
 * The npm channel (scripts/npm_package.ts): the release's own tarballs in dist/release/npm/,
 * served by a minimal npm registry in this process on 127.0.0.1 (a packument per package, the
 * tarballs), installed by the real npm client: `npm i -g --prefix` fetches the package longrun and
 * only this machine's platform package; the installed `longrun` says its version, runs the demo,
 * serves stdio, passes on a signal and the exit code; `npx longrun` from an empty directory with a
 * fresh cache runs too; installed with --omit=optional (into a project), the command says in one
 * line which package is missing.
 *
 * Skipped, saying why, when the release was not built (`npm run release` writes the tarballs),
 * when it has no package for this machine, or when npm is not on PATH.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { gunzipSync } from "node:zlib";
import { NPM_DIR, npmPackageName } from "../../scripts/npm_package.ts";
import { TARGETS } from "../../scripts/targets.ts";
import { VERSION } from "../../src/version.ts";
import { type RunResult, removeDir, run, tempDir } from "../support/helpers.ts";
import { skipped } from "../support/skips.ts";
import { Server } from "../support/server.ts";
import { HOST_TARGET, LocalServer, stdioSmoke, VERSION_LINE, which, withOnlyEnv } from "./helpers.ts";

const NPM = which("npm");
const NPX = which("npx");
const NODE = which("node");
const host = HOST_TARGET;
const tarballs = existsSync(NPM_DIR) ? readdirSync(NPM_DIR).filter((f) => f.endsWith(".tgz")).sort() : [];
const skip = skipped(
  "tests/release/npm.test.ts",
  !NPM || !NPX || !NODE
    ? "npm, npx or node is not on PATH"
    : tarballs.length === 0
      ? "no npm packages here: `npm run release` writes them into dist/release/npm/ (.ci/run builds the release before the tests)"
      : !host
        ? `this machine (${process.platform}-${process.arch}) is not a release target`
        : !tarballs.includes(`${npmPackageName(host).slice(1).replace("/", "-")}-${VERSION}.tgz`)
          ? `the release in dist/release/npm/ has no package for this machine (${npmPackageName(host)})`
          : false,
);

interface Manifest {
  name: string;
  version: string;
  [k: string]: unknown;
}

/** What a tarball holds: its package.json and the size and first bytes of each file under bin/. */
interface Packed {
  manifest: Manifest;
  bin: Map<string, { bytes: number; head: Buffer }>;
}

/** Reads an npm pack tarball in one pass (ustar; a pax or other header is skipped over like a file). */
function readPacked(tgz: string): Packed {
  const b = gunzipSync(readFileSync(tgz));
  const field = (p: number, off: number, len: number) => b.toString("utf8", p + off, p + off + len).replace(/\0[^]*$/, "");
  let manifest: Manifest | undefined;
  const bin = new Map<string, { bytes: number; head: Buffer }>();
  for (let p = 0; p + 512 <= b.length && b[p] !== 0; ) {
    const name = (field(p, 345, 155) ? `${field(p, 345, 155)}/` : "") + field(p, 0, 100);
    const size = parseInt(field(p, 124, 12).trim() || "0", 8);
    const type = field(p, 156, 1);
    const data = b.subarray(p + 512, p + 512 + size);
    if (type === "0" || type === "") {
      if (name === "package/package.json") manifest = JSON.parse(data.toString("utf8")) as Manifest;
      else if (name.startsWith("package/bin/")) bin.set(name.slice("package/bin/".length), { bytes: size, head: Buffer.from(data.subarray(0, 4)) });
    }
    p += 512 + Math.ceil(size / 512) * 512;
  }
  if (!manifest) throw new Error(`${tgz} holds no package/package.json`);
  return { manifest, bin };
}

/** Each tarball of the release, read once. */
const packed = new Map<string, Packed>();
const packedOf = (file: string) => packed.get(file) ?? packed.set(file, readPacked(join(NPM_DIR, file))).get(file)!;

/** The registry: a packument per package of the release, each version's dist pointing at its tarball here. */
function publish(server: LocalServer): Map<string, string> {
  const fileOf = new Map<string, string>();
  for (const file of tarballs) {
    const path = join(NPM_DIR, file);
    const { manifest } = packedOf(file);
    const data = readFileSync(path);
    const url = `/-/tarballs/${file}`;
    server.routes.set(url, { file: path });
    const packument = {
      name: manifest.name,
      "dist-tags": { latest: manifest.version },
      versions: {
        [manifest.version]: {
          ...manifest,
          _id: `${manifest.name}@${manifest.version}`,
          dist: {
            tarball: server.url + url,
            shasum: createHash("sha1").update(data).digest("hex"),
            integrity: `sha512-${createHash("sha512").update(data).digest("base64")}`,
          },
        },
      },
    };
    server.routes.set(`/${manifest.name}`, { body: JSON.stringify(packument), type: "application/json" });
    fileOf.set(manifest.name, url);
  }
  return fileOf;
}

describe("npm: the release's packages from a registry on 127.0.0.1", { skip }, () => {
  const server = new LocalServer();
  let scratch: string;
  let tarballOf: Map<string, string>;
  let env: Record<string, string>;
  let globalBin: string;
  let asked: number;
  let installed: RunResult;
  let fetched: string[];
  const npm = (args: string[], cwd: string) => run(withOnlyEnv(env, [NPM!, ...args]), { cwd, timeoutMs: 600_000 });
  before(async () => {
    await server.start();
    tarballOf = publish(server);
    scratch = tempDir("longrun-npm-");
    for (const d of ["home", "tmp", "empty", "npm-global"]) mkdirSync(join(scratch, d));
    // nothing of the caller's npm: no npm_config_*, no ~/.npmrc, the registry here
    env = {
      PATH: [...new Set([dirname(NODE!), dirname(NPM!), "/usr/bin", "/bin"])].join(":"),
      HOME: join(scratch, "home"),
      TMPDIR: join(scratch, "tmp"),
      npm_config_registry: server.url,
      npm_config_userconfig: join(scratch, "home", ".npmrc"),
      npm_config_globalconfig: join(scratch, "home", "npmrc-global"),
      npm_config_prefix: join(scratch, "npm-global"),
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false",
    };
    globalBin = join(scratch, "prefix", "bin", "longrun");
    asked = server.asked.length;
    installed = await npm(["i", "-g", "--prefix", join(scratch, "prefix"), "--cache", join(scratch, "cache"), "longrun", "--registry", server.url], join(scratch, "empty"));
    fetched = server.asked.slice(asked).filter((p) => p.startsWith("/-/tarballs/")).sort();
  });
  after(async () => {
    await server.stop();
    if (scratch) removeDir(scratch);
  });

  test("npm i -g --prefix installs longrun and only this machine's executable package from the registry", async () => {
    assert.equal(installed.code, 0, installed.stdout + installed.stderr);
    assert.deepEqual(fetched, [tarballOf.get("longrun"), tarballOf.get(npmPackageName(host!))].sort(), `tarballs fetched: ${fetched.join(", ")}`);
    assert.ok(existsSync(globalBin), `${globalBin} after npm i -g`);
  });

  test("the installed longrun --version names the release's version and this machine's target", async () => {
    const v = await run(withOnlyEnv(env, [globalBin, "--version"]), { cwd: join(scratch, "empty") });
    assert.equal(v.code, 0, v.stderr);
    const m = VERSION_LINE.exec(v.stdout.trim());
    assert.ok(m, v.stdout + v.stderr);
    assert.deepEqual([m[1], m[2]], [VERSION, host!.name]);
  });

  test("the installed longrun runs the demo: last line OK", async () => {
    const d = await run(withOnlyEnv(env, [globalBin, "demo"]), { cwd: join(scratch, "empty"), timeoutMs: 120_000 });
    assert.equal(d.code, 0, d.stdout + d.stderr);
    assert.match(d.stdout.trim().split("\n").at(-1)!, /^OK\b/);
  });

  test("the launcher passes stdio through (a serve round trip) and the executable's exit status out", async () => {
    const root = join(scratch, "root");
    mkdirSync(root);
    await stdioSmoke(withOnlyEnv(env, [globalBin]), root, {}, 30_000);
    const bad = await run(withOnlyEnv(env, [globalBin, "no-such-command"]), { cwd: root });
    assert.equal(bad.code, 2, bad.stderr);
  });

  test("a SIGTERM sent to the launcher reaches the executable, which stops serving and exits 0", async () => {
    const root = join(scratch, "root-signal");
    mkdirSync(root);
    const s = new Server({ name: "npm launcher", argv: withOnlyEnv(env, [globalBin]) }, ["serve", "--root", root]);
    try {
      const started = await s.result("task.start", { description: "signal through the launcher" });
      assert.equal(started.task.access_mode, "read_only");
      // process.kill, not child.kill: Deno's ChildProcess reports a child it signalled as killed by that signal, whatever it exited with
      process.kill(s.child.pid!, "SIGTERM");
      const { code, signal } = await s.exited;
      assert.deepEqual({ code, signal }, { code: 0, signal: null }, s.stderr);
    } finally {
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
    }
  });

  test("when the executable dies of a signal, the launcher dies of the same signal", { skip: existsSync("/proc/self/task") ? false : "needs /proc to find the launcher's child" }, async () => {
    const root = join(scratch, "root-killed");
    mkdirSync(root);
    const s = new Server({ name: "npm launcher", argv: withOnlyEnv(env, [globalBin]) }, ["serve", "--root", root]);
    try {
      await s.result("task.start", { description: "the executable is killed" });
      const pid = s.child.pid!;
      const [child] = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).map(Number);
      assert.ok(child && readFileSync(`/proc/${child}/cmdline`, "utf8").split("\0")[1] === "serve", `the launcher's child is the executable serving (pid ${child})`);
      process.kill(child, "SIGKILL");
      const { code, signal } = await s.exited;
      assert.deepEqual({ code, signal }, { code: null, signal: "SIGKILL" }, s.stderr);
    } finally {
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
    }
  });

  test("npx longrun --version runs from an empty directory with a fresh npm cache", async () => {
    const dir = join(scratch, "npx-here");
    mkdirSync(dir);
    const before = server.asked.length;
    const r = await run(withOnlyEnv(env, [NPX!, "--yes", "--registry", server.url, "--cache", join(scratch, "npx-cache"), "longrun", "--version"]), { cwd: dir, timeoutMs: 600_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout.trim().split("\n").at(-1)!, VERSION_LINE);
    assert.ok(server.asked.slice(before).includes(tarballOf.get(npmPackageName(host!))!), "npx fetched the executable's package itself (a fresh cache)");
    assert.deepEqual(readdirSync(dir), [], "npx leaves the directory as it was");
  });

  test("installed with --omit=optional, longrun says in one line which platform package is missing, and exits 1", async () => {
    // into a project: npm 11 installs a global package's optional dependencies even with --omit=optional
    const project = join(scratch, "project-no-optional");
    mkdirSync(project);
    const r = await npm(["i", "--cache", join(scratch, "cache"), "--omit=optional", "longrun", "--registry", server.url], project);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(!existsSync(join(project, "node_modules", ...npmPackageName(host!).split("/"))), "no platform package");
    const v = await run(withOnlyEnv(env, [join(project, "node_modules", ".bin", "longrun"), "--version"]), { cwd: project });
    assert.equal(v.code, 1, v.stdout + v.stderr);
    assert.equal(v.stdout, "");
    const lines = v.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, v.stderr);
    assert.ok(lines[0]!.includes(npmPackageName(host!)), `names the package: ${lines[0]}`);
    assert.ok(lines[0]!.includes(`${process.platform}-${process.arch}`), `names the platform: ${lines[0]}`);
  });

  test("each platform package names its os, cpu and libc and carries that platform's executable; longrun pins exactly them at its version", () => {
    const built = JSON.parse(readFileSync(join(NPM_DIR, "..", "manifest.json"), "utf8")) as { targets: { target: string; executable_bytes: number }[] };
    const names: string[] = [];
    let main: Manifest | undefined;
    for (const file of tarballs) {
      const { manifest: m, bin } = packedOf(file);
      assert.equal(m.version, VERSION, file);
      if (m.name === "longrun") {
        main = m;
        continue;
      }
      const t = TARGETS.find((x) => npmPackageName(x) === m.name);
      assert.ok(t, `${m.name} is the package of a release target`);
      names.push(m.name);
      assert.deepEqual([m.os, m.cpu, m.libc], [[t.platform], [t.arch], t.libc ? [t.libc] : undefined], m.name);
      assert.deepEqual([...bin.keys()], [t.exe], `${m.name}: one executable`);
      const exe = bin.get(t.exe)!;
      assert.equal(exe.bytes, built.targets.find((x) => x.target === t.name)?.executable_bytes, `${m.name}: the archive's executable`);
      const magic = ({ linux: "7f454c46", darwin: "cffaedfe", win32: "4d5a" } as Record<string, string>)[t.platform]!;
      assert.equal(exe.head.subarray(0, magic.length / 2).toString("hex"), magic, `${m.name}: an ELF, Mach-O or PE executable for ${t.platform}`);
    }
    assert.ok(main, "the package longrun");
    assert.deepEqual(main.optionalDependencies, Object.fromEntries(names.sort().map((n) => [n, VERSION])));
    assert.deepEqual(main.bin, { longrun: "bin/longrun.js" });
    assert.equal(main.dependencies, undefined, "nothing but the platform packages");
  });

  test("npm pack of longrun's package again gives the same bytes (the tarballs are reproducible)", async () => {
    const dir = join(scratch, "repack");
    mkdirSync(join(dir, "out"), { recursive: true });
    execFileSync("tar", ["-xzf", join(NPM_DIR, `longrun-${VERSION}.tgz`), "-C", dir]);
    const r = await npm(["pack", join(dir, "package"), "--pack-destination", join(dir, "out"), "--ignore-scripts", "--silent"], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readFileSync(join(dir, "out", `longrun-${VERSION}.tgz`)), readFileSync(join(NPM_DIR, `longrun-${VERSION}.tgz`)));
  });
});
