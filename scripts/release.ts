/**
 * Release builds: one executable per target (scripts/targets.ts), each packed with LICENSE and
 * README.md and docs/ into an archive, plus install.sh, SHA256SUMS, manifest.json and (given a
 * key) SHA256SUMS.minisig.
 *
 *   npm run release                               every target (scripts/release.sh: installs from the lock file first when needed)
 *   npm run release -- --target linux-x64         one target (--targets linux-x64,linux-arm64: several)
 *   npm run release -- --out DIR                  the release into DIR instead of dist/release/ (executables still in dist/build/)
 *   npm run release -- --target NAME --part       only the archive, SHA256SUMS and manifest.json: a part for --assemble
 *   bun scripts/release.ts --assemble A B ...     one release from one-target releases A, B, ... (CI: one per runner)
 *
 * Writes
 *   dist/release/longrun-<version>-<target>.tar.gz   (windows: .zip), holding longrun-<version>-<target>/longrun[.exe]
 *   dist/release/install.sh                          the installer (a copy of the repository's)
 *   dist/release/SHA256SUMS                          `sha256sum -c` format, one line per file of the release
 *   dist/release/SHA256SUMS.minisig                  when LONGRUN_MINISIGN_KEY names a minisign secret key (scripts/sign.ts)
 *   dist/release/manifest.json                       version, commit, per target: archive, sha256, sizes; the other files
 *   dist/build/<target>/longrun[.exe]                the executables, unpacked (the release tests run these)
 *
 * The version is package.json's (src/version.ts must agree). Archives are reproducible for a given
 * set of executables: entries sorted, owner root, mtime the commit's time (or SOURCE_DATE_EPOCH).
 * Bun's runtime and libSQL's native module for each target are fetched once with `npm pack` into
 * dist/.cache/packages/ (scripts/targets.ts).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { VERSION } from "../src/version.ts";
import { writeChannels } from "./channels.ts";
import { compile, gitCommit } from "./compile.ts";
import { checkSigningKey, SIGNATURE, signSums } from "./sign.ts";
import { REPO, type Target, TARGETS, targetByName } from "./targets.ts";

export const RELEASE_DIR = join(REPO, "dist", "release");
export const BUILD_DIR = join(REPO, "dist", "build");

interface Entry {
  name: string;
  data: Uint8Array<ArrayBuffer>;
  mode: number;
}

/** A POSIX ustar archive of `entries` (regular files; their directories are added). */
export function tar(entries: Entry[], mtime: number): Uint8Array<ArrayBuffer> {
  const blocks: Uint8Array<ArrayBuffer>[] = [];
  const header = (name: string, size: number, mode: number, type: "0" | "5") => {
    const h = new Uint8Array(512);
    const put = (s: string, off: number, len: number) => h.set(new TextEncoder().encode(s).subarray(0, len), off);
    const octal = (n: number, len: number) => n.toString(8).padStart(len - 1, "0") + "\0";
    if (new TextEncoder().encode(name).length > 100) throw new Error(`tar: name too long: ${name}`);
    put(name, 0, 100);
    put(octal(mode, 8), 100, 8);
    put(octal(0, 8), 108, 8); // uid
    put(octal(0, 8), 116, 8); // gid
    put(octal(size, 12), 124, 12);
    put(octal(mtime, 12), 136, 12);
    put("        ", 148, 8); // checksum placeholder
    put(type, 156, 1);
    put("ustar\0", 257, 6);
    put("00", 263, 2);
    put("root", 265, 32);
    put("root", 297, 32);
    let sum = 0;
    for (const b of h) sum += b;
    put(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
    return h;
  };
  const dirs = new Set<string>();
  for (const e of [...entries].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const parts = e.name.split("/");
    for (let i = 1; i < parts.length; i++) {
      const d = parts.slice(0, i).join("/") + "/";
      if (!dirs.has(d)) {
        dirs.add(d);
        blocks.push(header(d, 0, 0o755, "5"));
      }
    }
    blocks.push(header(e.name, e.data.length, e.mode, "0"), e.data);
    const pad = (512 - (e.data.length % 512)) % 512;
    if (pad) blocks.push(new Uint8Array(pad));
  }
  blocks.push(new Uint8Array(1024));
  return Buffer.concat(blocks) as Uint8Array<ArrayBuffer>;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A zip archive of `entries` (deflated, Unix modes kept). */
export function zip(entries: Entry[], mtime: number): Uint8Array {
  const d = new Date(mtime * 1000);
  const dosTime = (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2);
  const dosDate = ((Math.max(1980, d.getUTCFullYear()) - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate();
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of [...entries].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const name = Buffer.from(e.name, "utf8");
    const packed = Bun.deflateSync(e.data, { level: 6, library: "libdeflate" }); // raw DEFLATE
    const crc = crc32(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8);
    local.writeUInt16LE(dosTime, 10);
    local.writeUInt16LE(dosDate, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, Buffer.from(packed.buffer, packed.byteOffset, packed.length));
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt16LE(dosTime, 12);
    central.writeUInt16LE(dosDate, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((0o100000 | e.mode) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + packed.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

function sourceDate(): number {
  if (process.env.SOURCE_DATE_EPOCH && /^\d+$/.test(process.env.SOURCE_DATE_EPOCH)) return Number(process.env.SOURCE_DATE_EPOCH);
  const t = spawnSync("git", ["log", "-1", "--format=%ct"], { cwd: REPO, encoding: "utf8" });
  return t.status === 0 && /^\d+$/.test(t.stdout.trim()) ? Number(t.stdout.trim()) : 0;
}

export function archiveName(target: Target, version = VERSION): string {
  return `longrun-${version}-${target.name}.${target.archive}`;
}

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

/** What manifest.json says of one target's archive. */
export interface ManifestTarget {
  target: string;
  bun_target: string;
  archive: string;
  sha256: string;
  archive_bytes: number;
  executable_bytes: number;
  build_seconds: number;
}

export interface Manifest {
  name: "longrun";
  version: string;
  commit: string;
  source_date_epoch: number;
  targets: ManifestTarget[];
  /** Every other file SHA256SUMS lists (install.sh, packages), with its digest. */
  files: { name: string; sha256: string; bytes: number }[];
  /** SHA256SUMS.minisig when the release was signed, else null. */
  signature: string | null;
}

export interface ReleaseOptions {
  /** Where the release is written (default dist/release/, emptied first). */
  releaseDir?: string;
  /** Where the executables are written, one folder per target (default dist/build/). */
  buildDir?: string;
  log?: (s: string) => void;
  /**
   * Only the archives, their SHA256SUMS and manifest.json: one part of a release that
   * `assemble` finishes (CI builds each target on its own runner, then assembles them on one).
   */
  part?: boolean;
}

/** Files that describe the release rather than belong to it: not listed in SHA256SUMS. */
const DESCRIBING = new Set(["SHA256SUMS", SIGNATURE, "manifest.json"]);

/** Every file under `dir`, as paths relative to it with `/`, sorted. */
function filesUnder(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...filesUnder(dir, rel));
    else if (e.isFile()) out.push(rel);
  }
  return out.sort();
}

/**
 * Builds `targets` into a release: one archive per target, then what every release holds beside
 * them (`finishRelease`).
 */
export async function release(targets: Target[], options: ReleaseOptions = {}): Promise<Manifest> {
  const { releaseDir = RELEASE_DIR, buildDir = BUILD_DIR, log = (s: string) => console.log(s) } = options;
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string };
  if (pkg.version !== VERSION) throw new Error(`package.json's version ${pkg.version} is not src/version.ts's ${VERSION}`);
  const commit = gitCommit();
  const mtime = sourceDate();
  rmSync(releaseDir, { recursive: true, force: true });
  mkdirSync(releaseDir, { recursive: true });
  // the README links into docs/, so the reference travels with it
  const docs = ["LICENSE", "README.md", ...readdirSync(join(REPO, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)].map((f) => ({ f, data: readFileSync(join(REPO, f)) }));
  const built: ManifestTarget[] = [];
  const t0 = performance.now();
  for (const target of targets) {
    const outDir = join(buildDir, target.name);
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    const exe = join(outDir, target.exe);
    const compiled = await compile({ outfile: exe, target: target.name, commit, log });
    chmodSync(exe, 0o755);
    const top = `longrun-${VERSION}-${target.name}`;
    const entries: Entry[] = [{ name: `${top}/${target.exe}`, data: readFileSync(exe), mode: 0o755 }, ...docs.map(({ f, data }) => ({ name: `${top}/${f}`, data, mode: 0o644 }))];
    const archive = target.archive === "zip" ? zip(entries, mtime) : Bun.gzipSync(tar(entries, mtime), { level: 6, library: "libdeflate" });
    const name = archiveName(target);
    writeFileSync(join(releaseDir, name), archive);
    built.push({ target: target.name, bun_target: target.bun, archive: name, sha256: sha256(archive), archive_bytes: archive.length, executable_bytes: statSync(exe).size, build_seconds: Number(compiled.seconds.toFixed(1)) });
    log(`  ${name}: ${(archive.length / 1e6).toFixed(1)} MB (executable ${(statSync(exe).size / 1e6).toFixed(1)} MB)`);
  }
  const manifest = options.part ? writePart(releaseDir, { commit, source_date_epoch: mtime, targets: built }) : finishRelease(releaseDir, { commit, source_date_epoch: mtime, targets: built }, log);
  log(`release ${VERSION} (${commit}): ${targets.length} targets in ${((performance.now() - t0) / 1000).toFixed(1)} s -> ${releaseDir}`);
  return manifest;
}

/**
 * What every release holds beside its archives, written into `releaseDir` once the archives are
 * there (by `release`, or by `assemble` from one-target releases built on several machines):
 * install.sh; SHA256SUMS over every file of the directory; manifest.json; and, when
 * LONGRUN_MINISIGN_KEY names a secret key, SHA256SUMS.minisig (scripts/sign.ts).
 */
export function finishRelease(releaseDir: string, built: Pick<Manifest, "commit" | "source_date_epoch" | "targets">, log: (s: string) => void): Manifest {
  const key = process.env.LONGRUN_MINISIGN_KEY;
  if (key) checkSigningKey(key); // before anything is written: a release that cannot be signed fails now
  for (const f of DESCRIBING) rmSync(join(releaseDir, f), { force: true });
  copyFileSync(join(REPO, "install.sh"), join(releaseDir, "install.sh"));
  chmodSync(join(releaseDir, "install.sh"), 0o755);
  // the npm packages and the wheels (npm/, python/), made from the archives' executables, are
  // written into releaseDir here, before SHA256SUMS lists the directory (scripts/channels.ts)
  writeChannels(releaseDir, built.targets, log);
  const archives = new Set(built.targets.map((t) => t.archive));
  const sums: string[] = [];
  const files: Manifest["files"] = [];
  for (const name of filesUnder(releaseDir)) {
    if (DESCRIBING.has(name)) continue;
    const data = readFileSync(join(releaseDir, name));
    const digest = sha256(data);
    sums.push(`${digest}  ${name}`);
    if (!archives.has(name)) files.push({ name, sha256: digest, bytes: data.length });
  }
  for (const t of built.targets) if (!sums.includes(`${t.sha256}  ${t.archive}`)) throw new Error(`${t.archive} in ${releaseDir} is not the archive its manifest describes (sha256 ${t.sha256})`);
  writeFileSync(join(releaseDir, "SHA256SUMS"), sums.join("\n") + "\n");
  let signature: string | null = null;
  if (key) {
    signSums(join(releaseDir, "SHA256SUMS"), key, `longrun ${VERSION} ${built.commit} SHA256SUMS`);
    signature = SIGNATURE;
    log(`  signed SHA256SUMS with ${key}: ${SIGNATURE}`);
  } else {
    log("  not signed (set LONGRUN_MINISIGN_KEY to a minisign secret key file to write SHA256SUMS.minisig)");
  }
  const manifest: Manifest = { name: "longrun", version: VERSION, ...built, files, signature };
  writeFileSync(join(releaseDir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
  log(readdirSync(releaseDir).sort().map((f) => `  ${f}`).join("\n"));
  return manifest;
}

/** A part for `assemble`: SHA256SUMS of its archives and its manifest.json, nothing else. */
function writePart(releaseDir: string, built: Pick<Manifest, "commit" | "source_date_epoch" | "targets">): Manifest {
  writeFileSync(join(releaseDir, "SHA256SUMS"), built.targets.map((t) => `${t.sha256}  ${t.archive}\n`).join(""));
  const manifest: Manifest = { name: "longrun", version: VERSION, ...built, files: [], signature: null };
  writeFileSync(join(releaseDir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
  return manifest;
}

/**
 * One release from several one-target releases (each a directory `release --target NAME` wrote,
 * e.g. on that platform's CI runner): their archives are copied into `releaseDir` and the release
 * is finished there. They must agree on version and commit.
 */
export function assemble(parts: string[], options: ReleaseOptions = {}): Manifest {
  const { releaseDir = RELEASE_DIR, log = (s: string) => console.log(s) } = options;
  if (parts.length === 0) throw new Error("--assemble needs the directories of one-target releases");
  const manifests = parts.map((dir) => {
    const file = join(dir, "manifest.json");
    if (!existsSync(file)) throw new Error(`${dir} holds no manifest.json: not a release directory`);
    return { dir, m: JSON.parse(readFileSync(file, "utf8")) as Manifest };
  });
  const first = manifests[0]!.m;
  for (const { dir, m } of manifests) {
    if (m.version !== VERSION || m.commit !== first.commit) throw new Error(`${dir} is longrun ${m.version} at ${m.commit}, not ${VERSION} at ${first.commit}: the parts of a release are built from one commit`);
  }
  const targets = manifests.flatMap(({ m }) => m.targets);
  const seen = new Set<string>();
  for (const t of targets) {
    if (seen.has(t.target)) throw new Error(`two parts hold ${t.target}`);
    seen.add(t.target);
  }
  rmSync(releaseDir, { recursive: true, force: true });
  mkdirSync(releaseDir, { recursive: true });
  for (const { dir, m } of manifests) for (const t of m.targets) copyFileSync(join(dir, t.archive), join(releaseDir, t.archive));
  const order = (t: ManifestTarget) => TARGETS.findIndex((x) => x.name === t.target);
  return finishRelease(releaseDir, { commit: first.commit, source_date_epoch: first.source_date_epoch, targets: targets.sort((a, b) => order(a) - order(b)) }, log);
}

const USAGE = "usage: bun scripts/release.ts [--target NAME | --targets A,B] [--part] [--out DIR] | --assemble DIR... [--out DIR]";

/** The command line: which targets (or parts) and where, or a one-line error naming what was wrong. */
export function parseArgs(argv: string[]): { targets: Target[]; out: string; assemble: string[] | null; part: boolean } {
  let targets: Target[] | null = null;
  let part = false;
  let out = RELEASE_DIR;
  let parts: string[] | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (!v || v.startsWith("--")) throw new Error(`${a} needs a value (${USAGE})`);
      return v;
    };
    if (a === "--target" || a === "--targets") {
      const names = a === "--target" ? [value()] : value().split(",").filter(Boolean);
      if (names.length === 0) throw new Error(`--targets needs a comma-separated list (${USAGE})`);
      targets = [...(targets ?? []), ...names.map(targetByName)];
    } else if (a === "--out") out = resolve(value());
    else if (a === "--part") part = true;
    else if (a === "--assemble") {
      parts = [];
      while (argv[i + 1] && !argv[i + 1]!.startsWith("--")) parts.push(resolve(argv[++i]!));
    } else throw new Error(`unknown argument ${JSON.stringify(a)} (${USAGE})`);
  }
  if (parts && (targets || part)) throw new Error("--assemble builds nothing: give it no --target or --part");
  return { targets: targets ?? TARGETS, out, assemble: parts, part };
}

if (import.meta.main) {
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`release: ${(e as Error).message}`);
    process.exit(2);
  }
  try {
    if (args.assemble) assemble(args.assemble, { releaseDir: args.out });
    else await release(args.targets, { releaseDir: args.out, part: args.part });
  } catch (e) {
    console.error(`release: ${(e as Error).message}`);
    process.exit(1);
  }
}
