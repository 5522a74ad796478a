/**
 * Bodies kept under a root's `raw_data/`: generated names only (never a caller-chosen path),
 * written atomically, with size and sha256 recorded by whoever indexes them, and checked on read.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { StateCorruptError } from "../core/errors.ts";
import { writeFileAtomic } from "./atomic.ts";

export interface Blob {
  /** `raw_data/<prefix>-<sha16>-<rand8>.<ext>`, relative to the root. */
  ref: string;
  size: number;
  sha256: string;
}

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

export function writeBlob(rawDir: string, prefix: string, bytes: Uint8Array, ext = "txt"): Blob {
  const sha256 = sha256Hex(bytes);
  const name = `${prefix}-${sha256.slice(0, 16)}-${randomBytes(4).toString("hex")}.${ext}`;
  writeFileAtomic(join(rawDir, name), bytes, { mode: 0o600, label: "raw" });
  return { ref: `raw_data/${name}`, size: bytes.length, sha256 };
}

function pathOf(rawDir: string, ref: string): string {
  if (!/^raw_data\/[a-z]+-[0-9a-f]{16}-[0-9a-f]{8}\.[a-z]+$/.test(ref)) throw new Error(`not a raw_data reference: ${JSON.stringify(ref)}`);
  return join(rawDir, ref.slice("raw_data/".length));
}

/** Reads a blob back, refusing one that is missing or does not match its digest. */
export function readBlob(rawDir: string, ref: string, sha256: string, what: string): Uint8Array {
  const path = pathOf(rawDir, ref);
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new StateCorruptError(path, `${what} is missing`, e);
  }
  if (sha256Hex(bytes) !== sha256) throw new StateCorruptError(path, `${what} does not match its sha256`);
  return bytes;
}

export function removeBlob(rawDir: string, ref: string): void {
  try {
    unlinkSync(pathOf(rawDir, ref));
  } catch {
    // already gone
  }
}
