/**
 * Blobs as rows of the root's own database (`blobs`): the store of a root on a libSQL server, so
 * long bodies and externalised context live with the project, not on whichever runner wrote them.
 * Same discipline as the files: written (committed) before the row that names them, removed when
 * that row does not commit, collected when a killed writer left one no row names.
 */
import { ContentMissingError } from "../core/errors.ts";
import type { CrashPoint } from "../core/ports.ts";
import type { Database } from "../db/database.ts";
import { type Blob, blobRef, type BlobStore, COLLECT_BATCH, type CollectPace, type NamedAmong, RAW_REF_PREFIX, sha256Hex } from "./blobs.ts";
import type { SqlExec } from "../db/sql.ts";

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * Which of `refs` a row names: memories' raw bodies, artifacts and their attachments,
 * externalised contexts (every column that holds a blob reference). Each is an indexed lookup
 * (schema version 11), so the cost is that of `refs`, whatever the number of memories. Runs on
 * the writing connection (the Worker's in a server), as a plain read: no write lock is taken.
 */
export async function blobsNamed(db: Database, refs: readonly string[]): Promise<Set<string>> {
  if (!refs.length) return new Set();
  const list = JSON.stringify(refs);
  const rs = await db.execute({
    sql: `SELECT raw_ref AS ref FROM memories WHERE raw_ref IN (SELECT value FROM json_each(?))
     UNION SELECT ref FROM artifacts WHERE ref IN (SELECT value FROM json_each(?))
     UNION SELECT ref FROM artifact_attachments WHERE ref IN (SELECT value FROM json_each(?))
     UNION SELECT path FROM contexts WHERE path IN (SELECT value FROM json_each(?))`,
    args: [list, list, list, list],
  });
  return new Set(rs.rows.map((r) => String(r.ref)));
}

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
    async collectOrphans(named: NamedAmong, graceMs: number, pace: CollectPace = {}): Promise<string[]> {
      const gone: string[] = [];
      const batch = pace.batch ?? COLLECT_BATCH;
      // in pages of the primary key, each page one read and one probe, so no statement runs long
      for (let after = ""; ;) {
        await (pace.step ?? nextTurn)();
        const cutoff = Date.now() - graceMs;
        const page = await db.values({ sql: "SELECT ref, created_ms FROM blobs WHERE ref > ? ORDER BY ref LIMIT ?", args: [after, batch] });
        if (!page.length) return gone;
        after = String(page.at(-1)![0]);
        const old = page.filter((r) => Number(r[1]) < cutoff).map((r) => String(r[0]));
        if (!old.length) continue;
        const kept = await named(old);
        for (const ref of old) {
          if (kept.has(ref)) continue;
          await db.execute({ sql: "DELETE FROM blobs WHERE ref = ? AND created_ms < ?", args: [ref, cutoff] });
          gone.push(ref.slice(RAW_REF_PREFIX.length));
        }
      }
    },
  };
}
