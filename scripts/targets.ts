/**
 * The release targets: every platform both Bun (the runtime inside the executable) and libSQL
 * (its native module) ship, and where their pieces come from. Cross-compiling needs, per target,
 * Bun's runtime for that platform (`@oven/bun-*`) and libSQL's native module (`@libsql/*`). Both
 * are npm packages pinned, with their integrity, in package-lock.json (npm records every
 * platform's optional package there, installed or not); `fetchPackage` gets one with `npm pack`
 * (npm's own client, registry and cache) into dist/.cache/packages/, checks it
 * against the lock file and unpacks it. Nothing is downloaded twice.
 *
 * Not targets: windows-arm64 (Bun ships it, libSQL does not), linux-arm gnueabihf/musleabihf
 * (libSQL ships them, Bun does not), FreeBSD and Android (Bun only).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

export const REPO = resolve(import.meta.dirname, "..");
/** Survives `npm ci` (which empties node_modules); not committed (dist/ is ignored). */
export const CACHE = join(REPO, "dist", ".cache", "packages");

export interface Target {
  /** Our name for it: the archive's suffix and what `longrun --version` prints. */
  name: string;
  /** Bun.build's compile target. */
  bun: Bun.Build.CompileTarget;
  /** The npm package holding Bun's runtime for it; its executable is at `bin/<bunExe>`. */
  bunPackage: string;
  bunExe: string;
  /** The npm package holding libSQL's native module (`index.node`) for it. */
  libsqlPackage: string;
  /** The executable's file name in the archive. */
  exe: string;
  archive: "tar.gz" | "zip";
  /** process.platform / process.arch / libc of a machine that runs it natively. */
  platform: NodeJS.Platform;
  arch: string;
  libc?: "glibc" | "musl";
}

export const TARGETS: Target[] = [
  { name: "linux-x64", bun: "bun-linux-x64", bunPackage: "@oven/bun-linux-x64", bunExe: "bun", libsqlPackage: "@libsql/linux-x64-gnu", exe: "longrun", archive: "tar.gz", platform: "linux", arch: "x64", libc: "glibc" },
  { name: "linux-arm64", bun: "bun-linux-arm64", bunPackage: "@oven/bun-linux-aarch64", bunExe: "bun", libsqlPackage: "@libsql/linux-arm64-gnu", exe: "longrun", archive: "tar.gz", platform: "linux", arch: "arm64", libc: "glibc" },
  { name: "linux-x64-musl", bun: "bun-linux-x64-musl", bunPackage: "@oven/bun-linux-x64-musl", bunExe: "bun", libsqlPackage: "@libsql/linux-x64-musl", exe: "longrun", archive: "tar.gz", platform: "linux", arch: "x64", libc: "musl" },
  { name: "linux-arm64-musl", bun: "bun-linux-arm64-musl", bunPackage: "@oven/bun-linux-aarch64-musl", bunExe: "bun", libsqlPackage: "@libsql/linux-arm64-musl", exe: "longrun", archive: "tar.gz", platform: "linux", arch: "arm64", libc: "musl" },
  { name: "darwin-x64", bun: "bun-darwin-x64", bunPackage: "@oven/bun-darwin-x64", bunExe: "bun", libsqlPackage: "@libsql/darwin-x64", exe: "longrun", archive: "tar.gz", platform: "darwin", arch: "x64" },
  { name: "darwin-arm64", bun: "bun-darwin-arm64", bunPackage: "@oven/bun-darwin-aarch64", bunExe: "bun", libsqlPackage: "@libsql/darwin-arm64", exe: "longrun", archive: "tar.gz", platform: "darwin", arch: "arm64" },
  { name: "windows-x64", bun: "bun-windows-x64", bunPackage: "@oven/bun-windows-x64", bunExe: "bun.exe", libsqlPackage: "@libsql/win32-x64-msvc", exe: "longrun.exe", archive: "zip", platform: "win32", arch: "x64" },
];

export function targetByName(name: string): Target {
  const t = TARGETS.find((x) => x.name === name);
  if (!t) throw new Error(`unknown target ${JSON.stringify(name)}; known: ${TARGETS.map((x) => x.name).join(", ")}`);
  return t;
}

/** The C library this (Linux) machine runs on. */
function hostLibc(): "glibc" | "musl" {
  const report = (process as unknown as { report?: { getReport(): { header?: { glibcVersionRuntime?: string } } } }).report?.getReport();
  if (report?.header?.glibcVersionRuntime) return "glibc";
  return existsSync(`/lib/ld-musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`) ? "musl" : "glibc";
}

/** The target this machine runs natively. */
export function hostTarget(): Target {
  const libc = process.platform === "linux" ? hostLibc() : undefined;
  const t = TARGETS.find((x) => x.platform === process.platform && x.arch === process.arch && x.libc === libc);
  if (!t) throw new Error(`this machine (${process.platform}-${process.arch}${libc ? `-${libc}` : ""}) is not a release target`);
  return t;
}

/** A package's version and integrity as package-lock.json pins them. */
export function lockedPackage(name: string): { version: string; integrity: string } {
  const lock = JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string; integrity?: string }> };
  const entry = lock.packages[`node_modules/${name}`];
  if (!entry?.version || !entry.integrity) throw new Error(`package-lock.json does not pin ${name}; it should come with bun/libsql's optional dependencies`);
  return { version: entry.version, integrity: entry.integrity };
}

function sri(file: string, algorithm: string): string {
  return `${algorithm}-${createHash(algorithm).update(readFileSync(file)).digest("base64")}`;
}

/**
 * The unpacked contents (npm's `package/` directory) of `name` at the version package-lock.json
 * pins, downloaded once with `npm pack` and checked against the lock file's integrity.
 */
export function fetchPackage(name: string, log: (s: string) => void = () => {}): string {
  const { version, integrity } = lockedPackage(name);
  const base = `${name.replace(/^@/, "").replace("/", "-")}-${version}`;
  const dir = join(CACHE, base);
  if (existsSync(join(dir, "package.json"))) return dir;
  mkdirSync(CACHE, { recursive: true });
  const t0 = Date.now();
  const packed = spawnSync("npm", ["pack", `${name}@${version}`, "--pack-destination", CACHE, "--json", "--silent"], { cwd: CACHE, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (packed.status !== 0) throw new Error(`npm pack ${name}@${version} failed: ${packed.stderr || packed.stdout}`);
  const tgz = join(CACHE, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
  const [algorithm] = integrity.split("-");
  const got = sri(tgz, algorithm!);
  if (got !== integrity) {
    rmSync(tgz, { force: true });
    throw new Error(`${name}@${version}: the downloaded tarball's integrity ${got} is not package-lock.json's ${integrity}`);
  }
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const untar = spawnSync("tar", ["-xzf", tgz, "-C", tmp], { encoding: "utf8" });
  if (untar.status !== 0) throw new Error(`unpacking ${tgz} failed: ${untar.stderr}`);
  rmSync(tgz, { force: true });
  rmSync(dir, { recursive: true, force: true });
  renameSync(join(tmp, "package"), dir);
  rmSync(tmp, { recursive: true, force: true });
  log(`fetched ${name}@${version} (npm pack, integrity checked against package-lock.json) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return dir;
}

/** libSQL's native module for `target`: the installed one when it is this platform's, else fetched. */
export function libsqlNativeModule(target: Target, log?: (s: string) => void): string {
  const installed = join(REPO, "node_modules", target.libsqlPackage);
  const want = lockedPackage(target.libsqlPackage).version;
  if (existsSync(join(installed, "index.node"))) {
    const have = (JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { version: string }).version;
    if (have === want) return join(installed, "index.node");
  }
  return join(fetchPackage(target.libsqlPackage, log), "index.node");
}

/**
 * Bun's runtime executable for `target`, or undefined when the running Bun is it. The bytecode in
 * the executable is the building Bun's, so the runtime must be the same Bun version.
 */
export function bunExecutable(target: Target, log?: (s: string) => void): string | undefined {
  const running = (globalThis as { Bun?: { version: string } }).Bun?.version;
  const want = lockedPackage(target.bunPackage).version;
  if (running !== want) throw new Error(`building with Bun ${running} but package-lock.json pins ${target.bunPackage}@${want}: run the build with node_modules/.bin/bun`);
  if (target === safeHost()) return undefined;
  return join(fetchPackage(target.bunPackage, log), "bin", target.bunExe);
}

function safeHost(): Target | undefined {
  try {
    return hostTarget();
  } catch {
    return undefined;
  }
}
