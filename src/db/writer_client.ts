/**
 * The main thread's side of the writer Worker: one Worker per process, started on the first local
 * database that writes through it, holding the process open only while a request is in flight.
 */
import type { InArgs, ResultRows, ScriptStep } from "./types.ts";
import { ownUrl } from "../runtime/load.ts";
import type { WriterReply, WriterRequest } from "./writer_protocol.ts";

type RefWorker = Worker & { ref?: () => void; unref?: () => void };

/** An error from the Worker, with SQLite's code kept so a busy answer is recognised here too. */
export class WriterError extends Error {
  readonly code: string | undefined;
  constructor(e: { message: string; name: string; code?: string }) {
    super(e.message);
    this.name = e.name === "Error" ? "WriterError" : e.name;
    this.code = e.code;
  }
}

type Request = WriterRequest extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

export class WriterClient {
  static #shared: WriterClient | null = null;

  /** The process's writer Worker. */
  static shared(): WriterClient {
    WriterClient.#shared ??= new WriterClient();
    return WriterClient.#shared;
  }

  #worker: RefWorker | null = null;
  readonly #pending = new Map<number, { resolve: (r: WriterReply & { ok: true }) => void; reject: (e: Error) => void }>();
  #next = 1;
  #conns = 0;

  #started(): RefWorker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(ownUrl("db/writer_worker"), { type: "module" }) as RefWorker;
    worker.unref?.();
    worker.onmessage = (e: MessageEvent<WriterReply>) => {
      const reply = e.data;
      const p = this.#pending.get(reply.id);
      if (!p) return;
      this.#pending.delete(reply.id);
      if (this.#pending.size === 0) worker.unref?.();
      if (reply.ok) p.resolve(reply);
      else p.reject(new WriterError(reply.error));
    };
    worker.onerror = (e: ErrorEvent) => {
      e.preventDefault?.();
      const err = new WriterError({ message: `the writer worker failed: ${e.message}`, name: "WriterError" });
      for (const p of this.#pending.values()) p.reject(err);
      this.#pending.clear();
      this.#worker = null;
    };
    this.#worker = worker;
    return worker;
  }

  #send(req: Request): Promise<WriterReply & { ok: true }> {
    const worker = this.#started();
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.ref?.();
      worker.postMessage({ ...req, id } as WriterRequest);
    });
  }

  async request(req: Request): Promise<ResultRows | undefined> {
    return (await this.#send(req)).result;
  }

  /** A script's steps in one transaction in the Worker. */
  async script(conn: number, steps: ScriptStep[]): Promise<ResultRows[]> {
    return (await this.#send({ op: "script", conn, steps })).results ?? [];
  }

  /** Opens a connection of its own in the Worker; returns its number. */
  async open(path: string, busyTimeoutMs: number): Promise<number> {
    const conn = ++this.#conns;
    await this.request({ op: "open", conn, path, busy_timeout_ms: busyTimeoutMs });
    return conn;
  }

  run(conn: number, sql: string, args: InArgs): Promise<ResultRows> {
    return this.request({ op: "run", conn, sql, args }) as Promise<ResultRows>;
  }
}
