/**
 * Release builds: one executable per target (scripts/targets.ts), each packed with LICENSE and
 * README.md and docs/ into an archive, plus SHA256SUMS and manifest.json.
 *
 *   npm run release                               every target
 *   npm run release -- --targets linux-x64,linux-arm64
 *
 * Writes
 *   dist/release/longrun-<version>-<target>.tar.gz   (windows: .zip), holding longrun-<version>-<target>/longrun[.exe]
 *   dist/release/SHA256SUMS                          `sha256sum -c` format, one line per archive
 *   dist/release/manifest.json                       version, commit, and per target: archive, sha256, sizes
 *   dist/build/<target>/longrun[.exe]                the executables, unpacked (the release tests run these)
 *
 * The version is package.json's (src/version.ts must agree). Archives are reproducible for a given
 * set of executables: entries sorted, owner root, mtime the commit's time (or SOURCE_DATE_EPOCH).
 * Bun's runtime and libSQL's native module for each target are fetched once with `npm pack` into
 * dist/.cache/packages/ (scripts/targets.ts).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERSION } from "../src/version.ts";
import { compile, gitCommit } from "./compile.ts";
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

export async function release(targets: Target[], log: (s: string) => void = (s) => console.log(s)): Promise<void> {
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string };
  if (pkg.version !== VERSION) throw new Error(`package.json's version ${pkg.version} is not src/version.ts's ${VERSION}`);
  const commit = gitCommit();
  const mtime = sourceDate();
  rmSync(RELEASE_DIR, { recursive: true, force: true });
  mkdirSync(RELEASE_DIR, { recursive: true });
  // the README links into docs/, so the reference travels with it
  const docs = ["LICENSE", "README.md", ...readdirSync(join(REPO, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)].map((f) => ({ f, data: readFileSync(join(REPO, f)) }));
  const manifest: Record<string, unknown>[] = [];
  const sums: string[] = [];
  const t0 = performance.now();
  for (const target of targets) {
    const outDir = join(BUILD_DIR, target.name);
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    const exe = join(outDir, target.exe);
    const built = await compile({ outfile: exe, target: target.name, commit, log });
    chmodSync(exe, 0o755);
    const top = `longrun-${VERSION}-${target.name}`;
    const entries: Entry[] = [{ name: `${top}/${target.exe}`, data: readFileSync(exe), mode: 0o755 }, ...docs.map(({ f, data }) => ({ name: `${top}/${f}`, data, mode: 0o644 }))];
    const archive = target.archive === "zip" ? zip(entries, mtime) : Bun.gzipSync(tar(entries, mtime), { level: 6, library: "libdeflate" });
    const name = archiveName(target);
    writeFileSync(join(RELEASE_DIR, name), archive);
    const digest = sha256(archive);
    sums.push(`${digest}  ${name}`);
    manifest.push({ target: target.name, bun_target: target.bun, archive: name, sha256: digest, archive_bytes: archive.length, executable_bytes: statSync(exe).size, build_seconds: Number(built.seconds.toFixed(1)) });
    log(`  ${name}: ${(archive.length / 1e6).toFixed(1)} MB (executable ${(statSync(exe).size / 1e6).toFixed(1)} MB)`);
  }
  writeFileSync(join(RELEASE_DIR, "SHA256SUMS"), sums.join("\n") + "\n");
  writeFileSync(join(RELEASE_DIR, "manifest.json"), JSON.stringify({ name: "longrun", version: VERSION, commit, source_date_epoch: mtime, targets: manifest }, null, 2) + "\n");
  log(`release ${VERSION} (${commit}): ${targets.length} targets in ${((performance.now() - t0) / 1000).toFixed(1)} s -> ${RELEASE_DIR}`);
  log(readdirSync(RELEASE_DIR).map((f) => `  ${f}`).join("\n"));
}

if (import.meta.main) {
  const i = process.argv.indexOf("--targets");
  try {
    const targets = i >= 0 ? (process.argv[i + 1] ?? "").split(",").filter(Boolean).map(targetByName) : TARGETS;
    if (targets.length === 0) throw new Error("--targets needs a comma-separated list");
    await release(targets);
  } catch (e) {
    console.error(`release: ${(e as Error).message}`);
    process.exit(1);
  }
}
