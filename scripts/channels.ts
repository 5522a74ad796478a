/**
 * The channels a release is installed through besides its archives: the npm packages
 * (scripts/npm_package.ts) into `<release>/npm/` and the Python wheels, one per platform
 * (scripts/python_wheel.py), into `<release>/python/`. Both carry the executables taken out of the
 * release's own archives, so what npm or pip installs is byte for byte what the archive holds, and
 * an assembled release (`release.ts --assemble`, archives built on several machines) gets them too.
 *
 *   bun scripts/channels.ts [DIR]      again for the release in DIR (default dist/release/); its SHA256SUMS is not rewritten
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inflateRawSync } from "node:zlib";
import { VERSION } from "../src/version.ts";
import { npmPackages } from "./npm_package.ts";
import { REPO, type Target, targetByName } from "./targets.ts";

/** The bytes of the entry `name` in a zip archive (stored or deflated), read from its central directory. */
export function zipEntry(zip: Buffer, name: string): Buffer {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error("not a zip archive (no end of central directory)");
  const count = zip.readUInt16LE(end + 10);
  let p = zip.readUInt32LE(end + 16);
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error("a damaged zip central directory");
    const method = zip.readUInt16LE(p + 10);
    const packed = zip.readUInt32LE(p + 20);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const local = zip.readUInt32LE(p + 42);
    if (zip.toString("utf8", p + 46, p + 46 + nameLen) === name) {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + packed);
      if (method === 0) return Buffer.from(data);
      if (method === 8) return inflateRawSync(data);
      throw new Error(`${name}: zip compression method ${method} is neither stored nor deflated`);
    }
    p += 46 + nameLen + extraLen + commentLen;
  }
  throw new Error(`no ${name} in the zip archive`);
}

/** `target`'s executable out of its archive in `releaseDir`, written under `scratch`; its path. */
function unpack(releaseDir: string, target: Target, archive: string, scratch: string): string {
  const inner = `longrun-${VERSION}-${target.name}/${target.exe}`;
  const dir = join(scratch, target.name);
  mkdirSync(dir, { recursive: true });
  const out = join(dir, target.exe);
  if (target.archive === "zip") {
    writeFileSync(out, zipEntry(readFileSync(join(releaseDir, archive)), inner), { mode: 0o755 });
    return out;
  }
  const r = spawnSync("tar", ["-xzf", join(releaseDir, archive), "-C", dir, "--strip-components=1", inner], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`could not take ${inner} out of ${archive}: ${(r.stderr || String(r.error)).trim()}`);
  return out;
}

/**
 * Writes `releaseDir/npm/` and `releaseDir/python/` from the archives of `built` (manifest.json's
 * targets). Fails, naming the step, when npm pack or python3 is missing or fails.
 */
export function writeChannels(releaseDir: string, built: { target: string; archive: string }[], log: (s: string) => void): void {
  const scratch = mkdtempSync(join(tmpdir(), "longrun-channels-"));
  try {
    const executables = built.map((b) => {
      const target = targetByName(b.target);
      return { target, exe: unpack(releaseDir, target, b.archive, scratch) };
    });
    npmPackages(executables, { out: join(releaseDir, "npm"), log });
    const python = join(releaseDir, "python");
    // --direct: the package's own backend without pip around it (the same bytes, less time, no pip needed)
    const args = [join(REPO, "scripts", "python_wheel.py"), "--out", python, "--no-pure", "--no-sdist", "--direct", ...executables.flatMap((e) => ["--binary", e.exe])];
    const r = spawnSync("python3", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    if (r.error) throw new Error(`the Python wheels need python3 (3.9 or later) on PATH: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`scripts/python_wheel.py failed (exit ${r.status}): ${(r.stderr || r.stdout).trim()}`);
    for (const m of r.stdout.matchAll(/^python_wheel: (\S+\.whl) <- /gm)) log(`  python/${m[1]}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const dir = process.argv[2] ?? join(REPO, "dist", "release");
  try {
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { targets: { target: string; archive: string }[] };
    writeChannels(dir, manifest.targets, (s) => console.log(s));
  } catch (e) {
    console.error(`channels: ${(e as Error).message}`);
    process.exit(1);
  }
}
