/**
 * The memory Worker: runs FTS5 searches on its own libSQL connections (one per database URL),
 * so the main thread, where gate checks answer, never waits on a search.
 */
import { Database } from "../db/database.ts";
import type { WorkerReply, WorkerRequest } from "./protocol.ts";
import { searchMemories } from "./search.ts";

declare const self: {
  onmessage: ((e: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(message: WorkerReply): void;
};

const open = new Map<string, Promise<Database>>();

function database(url: string): Promise<Database> {
  let db = open.get(url);
  if (!db) {
    db = Database.open(url);
    open.set(url, db);
    db.catch(() => open.delete(url));
  }
  return db;
}

self.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const req = e.data;
  try {
    if (req.op === "close") {
      for (const db of open.values()) await (await db).close();
      open.clear();
      self.postMessage({ id: req.id, ok: true });
      return;
    }
    if (req.test_hold) Atomics.wait(new Int32Array(req.test_hold), 0, 0);
    const page = await searchMemories(await database(req.url), req.query, req.options);
    self.postMessage({ id: req.id, ok: true, page_json: JSON.stringify(page) });
  } catch (err) {
    const error = err instanceof Error ? { message: err.message, name: err.name } : { message: String(err), name: "Error" };
    self.postMessage({ id: req.id, ok: false, error });
  }
};
