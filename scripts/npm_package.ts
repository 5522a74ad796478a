/**
 * The npm channel of a release, the way esbuild and biome ship: one package per platform carrying
 * that platform's executable, and the package `longrun`, whose optional dependencies name them all
 * at the same version and whose `longrun` command (scripts/npm_launcher.cjs, as bin/longrun.js)
 * runs the one npm installed. npm installs an optional dependency only where its `os`, `cpu` and
 * (npm 10 and later) `libc` fields match the machine, so `npm i -g longrun` fetches one executable.
 *
 *   bun scripts/npm_package.ts [--targets linux-x64,…]      from dist/build/<target>/ (the release makes them from its archives: scripts/channels.ts)
 *
 * Writes dist/release/npm/<package>-<version>.tgz, made by `npm pack` (reproducible: npm gives
 * every entry the same mtime and normalised modes, in a fixed order). Publishing is
 * `npm publish <tarball>` for each platform package, then the package `longrun`.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERSION } from "../src/version.ts";
import { REPO, type Target, TARGETS, targetByName } from "./targets.ts";

export const NPM_DIR = join(REPO, "dist", "release", "npm");
export const NPM_SCOPE = "@longrun";
const LAUNCHER = join(REPO, "scripts", "npm_launcher.cjs");

/** The package carrying `target`'s executable: npm's names for the platform (win32, not windows), `-musl` for musl. */
export function npmPackageName(target: Target): string {
  return `${NPM_SCOPE}/${target.platform}-${target.arch}${target.libc === "musl" ? "-musl" : ""}`;
}

export interface PackedPackage {
  name: string;
  file: string;
  integrity: string;
  shasum: string;
}

const DESCRIPTION = "A runtime contract for long-running AI agents, in one executable";

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, JSON.stringify(value, null, 2) + "\n");
}

/** `npm pack` of the folder `dir` into `out`; npm's own report of the tarball. */
function pack(dir: string, out: string): PackedPackage {
  const r = spawnSync("npm", ["pack", dir, "--pack-destination", out, "--json", "--ignore-scripts", "--silent"], { cwd: out, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`npm pack ${dir} failed: ${(r.stderr || r.stdout || String(r.error)).trim()}`);
  const [made] = JSON.parse(r.stdout) as { name: string; filename: string; integrity: string; shasum: string }[];
  if (!made) throw new Error(`npm pack ${dir} reported no tarball`);
  return { name: made.name, file: made.filename.replace(/^@[^/]+\//, "").replace("/", "-"), integrity: made.integrity, shasum: made.shasum };
}

function platformPackage(target: Target, exe: string, dir: string, version: string): void {
  mkdirSync(join(dir, "bin"), { recursive: true });
  const name = npmPackageName(target);
  writeJson(join(dir, "package.json"), {
    name,
    version,
    description: `${DESCRIPTION}: the executable for ${target.name} (installed by the package longrun)`,
    license: "MIT",
    os: [target.platform],
    cpu: [target.arch],
    ...(target.libc ? { libc: [target.libc] } : {}),
    files: ["bin/"],
    preferUnplugged: true,
  });
  writeFileSync(join(dir, "README.md"), `# ${name}\n\nThe \`longrun\` executable for ${target.name}. Install the package \`longrun\`, which picks this one on ${target.name}.\n`);
  copyFileSync(join(REPO, "LICENSE"), join(dir, "LICENSE"));
  copyFileSync(exe, join(dir, "bin", target.exe));
  chmodSync(join(dir, "bin", target.exe), 0o755);
}

function mainPackage(targets: Target[], dir: string, version: string): void {
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeJson(join(dir, "package.json"), {
    name: "longrun",
    version,
    description: DESCRIPTION,
    license: "MIT",
    bin: { longrun: "bin/longrun.js" },
    files: ["bin/longrun.js"],
    optionalDependencies: Object.fromEntries(targets.map((t) => [npmPackageName(t), version])),
    engines: { node: ">=18" },
  });
  writeFileSync(
    join(dir, "README.md"),
    [
      "# longrun",
      "",
      "A runtime contract for long-running AI agents, in one executable: it stands between an agent and a project and refuses, in code, what a prompt can only ask for (a write not granted for this turn, an illegal status change, a checkpoint shown before it is saved, a tool effect run twice).",
      "",
      "```sh",
      "npm i -g longrun && longrun demo      # or: npx longrun demo",
      "```",
      "",
      `The executable comes in a package per platform (${targets.map((t) => npmPackageName(t)).join(", ")}), an optional dependency npm installs only on its platform; the \`longrun\` command runs it. Installed with \`--omit=optional\`, the command says which package is missing.`,
      "",
    ].join("\n"),
  );
  copyFileSync(join(REPO, "LICENSE"), join(dir, "LICENSE"));
  copyFileSync(LAUNCHER, join(dir, "bin", "longrun.js"));
  chmodSync(join(dir, "bin", "longrun.js"), 0o755);
}

/**
 * Packs the platform package of each `{ target, exe }` (the executable for that target) and the
 * package `longrun` into `out` (emptied first); the main package names exactly these targets.
 */
export function npmPackages(executables: { target: Target; exe: string }[], options: { out?: string; version?: string; log?: (s: string) => void } = {}): PackedPackage[] {
  const out = options.out ?? NPM_DIR;
  const version = options.version ?? VERSION;
  const log = options.log ?? (() => {});
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const stage = join(out, ".stage");
  const packed: PackedPackage[] = [];
  try {
    for (const { target, exe } of executables) {
      if (!existsSync(exe)) throw new Error(`no executable for ${target.name} at ${exe}`);
      const dir = join(stage, target.name);
      platformPackage(target, exe, dir, version);
      packed.push(pack(dir, out));
      rmSync(dir, { recursive: true, force: true }); // the executable's copy, gone before the next one is made
    }
    const dir = join(stage, "longrun");
    mainPackage(executables.map((e) => e.target), dir, version);
    packed.push(pack(dir, out));
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  for (const p of packed) log(`  npm/${p.file}: ${p.name}@${version}`);
  return packed;
}

if (import.meta.main) {
  const i = process.argv.indexOf("--targets");
  try {
    const names = i >= 0 ? (process.argv[i + 1] ?? "").split(",").filter(Boolean) : TARGETS.map((t) => t.name).filter((n) => existsSync(join(REPO, "dist", "build", n)));
    if (names.length === 0) throw new Error("no targets: pass --targets, or build some with npm run release");
    npmPackages(names.map(targetByName).map((target) => ({ target, exe: join(REPO, "dist", "build", target.name, target.exe) })), { log: (s) => console.log(s) });
  } catch (e) {
    console.error(`npm_package: ${(e as Error).message}`);
    process.exit(1);
  }
}
