/**
 * The writer Worker: every write to a local memory.db in a long-lived process runs here, on this
 * thread's own connections (one per opened database), so a commit's fsync, an FTS merge or a wait
 * for another process's lock never holds up the main thread, where gate checks answer. Requests of
 * one connection run in order; while one waits on a busy lock (with timers), others go on.
 */
import { CONNECTION_PRAGMAS, runScript } from "./types.ts";
import { releaseStatements, SyncDb } from "./local.ts";
import type { WriterReply, WriterRequest } from "./writer_protocol.ts";

declare const self: {
  onmessage: ((e: MessageEvent<WriterRequest>) => void) | null;
  postMessage(message: WriterReply): void;
};

const conns = new Map<number, SyncDb>();
const queues = new Map<number, Promise<unknown>>();

async function handle(req: WriterRequest): Promise<WriterReply> {
  try {
    if (req.op === "open") {
      conns.set(req.conn, new SyncDb(req.path, { busyTimeoutMs: req.busy_timeout_ms, asyncBusy: true, pragmas: CONNECTION_PRAGMAS }));
      return { id: req.id, ok: true };
    }
    const db = conns.get(req.conn);
    if (!db) throw new Error(`connection ${req.conn} is not open`);
    switch (req.op) {
      case "run":
        return { id: req.id, ok: true, result: await db.run(req.sql, req.args) };
      case "script": {
        // one transaction, one message: an import does not pay a round trip per statement
        await db.begin();
        try {
          const results = await runScript(req.steps, (sql, args) => db.runSync(sql, args));
          db.commit();
          return { id: req.id, ok: true, results };
        } catch (e) {
          db.rollback();
          throw e;
        }
      }
      case "begin":
        await db.begin();
        return { id: req.id, ok: true };
      case "commit":
        db.commit();
        return { id: req.id, ok: true };
      case "rollback":
        db.rollback();
        return { id: req.id, ok: true };
      case "close":
        db.close();
        conns.delete(req.conn);
        await releaseStatements(); // the file really closed before the caller opens it again
        return { id: req.id, ok: true };
    }
  } catch (err) {
    const e = err as { message?: string; name?: string; code?: unknown };
    return { id: req.id, ok: false, error: { message: String(e?.message ?? err), name: String(e?.name ?? "Error"), code: typeof e?.code === "string" ? e.code : undefined } };
  }
}

self.onmessage = (e: MessageEvent<WriterRequest>) => {
  const req = e.data;
  const before = queues.get(req.conn) ?? Promise.resolve();
  const next = before.then(() => handle(req)).then((reply) => self.postMessage(reply));
  queues.set(req.conn, next.catch(() => {}));
};
