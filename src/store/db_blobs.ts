/**
 * Blobs as rows of the root's own database (`blobs`): the store of a root on a libSQL server, so
 * long bodies and externalised context live with the project, not on whichever runner wrote them.
 * Same discipline as the files: written (committed) before the row that names them, removed when
 * that row does not commit, collected when a killed writer left one no row names.
 */
import { ContentMissingError } from "../core/errors.ts";
import type { CrashPoint } from "../core/ports.ts";
import type { Database } from "../db/database.ts";
import { type Blob, blobRef, type BlobStore, sha256Hex } from "./blobs.ts";
import type { SqlExec } from "../db/sql.ts";

export function dbBlobs(db: Database, where: string): BlobStore {
  return {
    async put(prefix: string, bytes: Uint8Array, crash?: CrashPoint, ext?: string, within?: SqlExec): Promise<Blob> {
      const sha256 = sha256Hex(bytes);
      const ref = blobRef(prefix, sha256, ext);
      crash?.("raw.after_temp_write");
      const insert = { sql: "INSERT INTO blobs(ref, bytes, created_ms) VALUES (?, ?, ?)", args: [ref, bytes, Date.now()] };
      if (within) await within.run(insert.sql, insert.args);
      else await db.execute(insert);
      crash?.("raw.after_rename");
      return { ref, size: bytes.length, sha256 };
    },
    async get(ref: string, sha256: string, what: string): Promise<Uint8Array> {
      const rows = await db.values({ sql: "SELECT bytes FROM blobs WHERE ref = ?", args: [ref] });
      const at = `${where} (blob ${ref})`;
      if (!rows.length) throw new ContentMissingError(at, what, "missing");
      const v = rows[0]![0];
      const bytes = v instanceof Uint8Array ? v : v instanceof ArrayBuffer ? new Uint8Array(v) : new TextEncoder().encode(String(v));
      if (sha256Hex(bytes) !== sha256) throw new ContentMissingError(at, what, "mismatch");
      return bytes;
    },
    async remove(ref: string): Promise<void> {
      await db.execute({ sql: "DELETE FROM blobs WHERE ref = ?", args: [ref] }).catch(() => {});
    },
    async collectOrphans(refs: ReadonlySet<string>, graceMs: number): Promise<string[]> {
      const old = await db.values({ sql: "SELECT ref FROM blobs WHERE created_ms < ?", args: [Date.now() - graceMs] });
      const gone: string[] = [];
      for (const [ref] of old) {
        if (refs.has(String(ref))) continue;
        await db.execute({ sql: "DELETE FROM blobs WHERE ref = ? AND created_ms < ?", args: [String(ref), Date.now() - graceMs] });
        gone.push(String(ref).slice("raw_data/".length));
      }
      return gone;
    },
  };
}
