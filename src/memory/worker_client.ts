/**
 * The main thread's side of the memory Worker: posts searches, matches replies by id. The
 * Worker holds the process open only while a search is in flight.
 */
import type { SearchOptions, SearchPage } from "../core/ports.ts";
import type { WorkerReply, WorkerRequest } from "./protocol.ts";
import type { Searcher } from "./store.ts";
import { ownUrl } from "../runtime/load.ts";

interface Pending {
  resolve: (page: SearchPage | undefined) => void;
  reject: (e: Error) => void;
}

type RefWorker = Worker & { ref?: () => void; unref?: () => void };

export class MemorySearchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MemorySearchError";
  }
}

export class WorkerSearcher implements Searcher {
  readonly #url: string;
  #worker: RefWorker | null = null;
  readonly #pending = new Map<number, Pending>();
  readonly #testHold: SharedArrayBuffer | undefined;
  #next = 1;
  #closed = false;

  /** `testOnlyHold` makes each search block the Worker thread while it holds 0 (`SearchRequest.test_hold`): for tests of non-blocking gates only. */
  constructor(url: string, options: { testOnlyHold?: SharedArrayBuffer } = {}) {
    this.#url = url;
    this.#testHold = options.testOnlyHold;
  }

  /** The Worker starts with the first search, so processes that never search never pay for it. */
  #started(): RefWorker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(ownUrl("memory/worker"), { type: "module" }) as RefWorker;
    worker.unref?.();
    worker.onmessage = (e: MessageEvent<WorkerReply>) => this.#settle(e.data);
    worker.onerror = (e: ErrorEvent) => {
      e.preventDefault?.();
      this.#failAll(new MemorySearchError(`Memory worker failed: ${e.message}`));
    };
    this.#worker = worker;
    return worker;
  }

  #settle(reply: WorkerReply): void {
    const p = this.#pending.get(reply.id);
    if (!p) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker?.unref?.();
    if (reply.ok) p.resolve(reply.page_json === undefined ? undefined : (JSON.parse(reply.page_json) as SearchPage));
    else p.reject(new MemorySearchError(`Memory search failed: ${reply.error.message}`));
  }

  #failAll(e: Error): void {
    for (const p of this.#pending.values()) p.reject(e);
    this.#pending.clear();
  }

  #post(req: WorkerRequest, p: Pending): void {
    const worker = this.#started();
    this.#pending.set(req.id, p);
    worker.ref?.();
    worker.postMessage(req);
  }

  search(query: string | readonly string[], options: SearchOptions = {}): Promise<SearchPage> {
    if (this.#closed) return Promise.reject(new MemorySearchError("Memory search is closed"));
    const id = this.#next++;
    return new Promise<SearchPage | undefined>((resolve, reject) => {
      this.#post(
        {
          id,
          op: "search",
          url: this.#url,
          query: typeof query === "string" ? query : [...query],
          options,
          test_hold: this.#testHold,
        },
        { resolve, reject },
      );
    }).then((page) => page ?? { hits: [], next_cursor: null });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#worker) return;
    const id = this.#next++;
    const done = new Promise<unknown>((resolve, reject) => this.#post({ id, op: "close" }, { resolve, reject }));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise((r) => (timer = setTimeout(r, 2000)));
    await Promise.race([done.catch(() => {}), timeout]);
    clearTimeout(timer);
    this.#worker.terminate();
    this.#worker = null;
    this.#failAll(new MemorySearchError("Memory search closed"));
  }
}

/** Searches on the calling thread. For one-shot commands where starting a Worker costs more than it saves. */
export class InProcessSearcher implements Searcher {
  constructor(private readonly search_: (q: string | readonly string[], o?: SearchOptions) => Promise<SearchPage>) {}
  search(query: string | readonly string[], options?: SearchOptions): Promise<SearchPage> {
    return this.search_(query, options);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
