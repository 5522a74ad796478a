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
import { NPM_DIR, npmPackageName } from "../../scripts/npm_package.ts";
import { hostTarget } from "../../scripts/targets.ts";
import { VERSION } from "../../src/version.ts";
import { type RunResult, removeDir, run, tempDir } from "../support/helpers.ts";
import { Server } from "../support/server.ts";
import { LocalServer, stdioSmoke, VERSION_LINE, which, withOnlyEnv } from "./helpers.ts";

const NPM = which("npm");
const NPX = which("npx");
const NODE = which("node");
const host = (() => {
  try {
    return hostTarget();
  } catch {
    return null;
  }
})();
const tarballs = existsSync(NPM_DIR) ? readdirSync(NPM_DIR).filter((f) => f.endsWith(".tgz")).sort() : [];
const skip = !NPM || !NPX || !NODE
  ? "npm, npx or node is not on PATH"
  : tarballs.length === 0
    ? "no npm packages here: `npm run release` writes them into dist/release/npm/ (.ci/run builds the release before the tests)"
    : !host
      ? `this machine (${process.platform}-${process.arch}) is not a release target`
      : !tarballs.includes(`${npmPackageName(host).slice(1).replace("/", "-")}-${VERSION}.tgz`)
        ? `the release in dist/release/npm/ has no package for this machine (${npmPackageName(host)})`
        : false;
if (skip) console.warn(`tests/release/npm: skipping: ${skip}`);

interface Manifest {
  name: string;
  version: string;
  [k: string]: unknown;
}

/** The registry: a packument per package of the release, each version's dist pointing at its tarball here. */
function publish(server: LocalServer): Map<string, string> {
  const fileOf = new Map<string, string>();
  for (const file of tarballs) {
    const path = join(NPM_DIR, file);
    const manifest = JSON.parse(execFileSync("tar", ["-xzOf", path, "package/package.json"], { encoding: "utf8", maxBuffer: 1 << 20 })) as Manifest;
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
});
