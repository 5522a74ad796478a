/** Messages between the main thread and the memory Worker. */
import type { SearchOptions } from "../core/ports.ts";

export interface SearchRequest {
  id: number;
  op: "search";
  url: string;
  query: string | string[];
  options: SearchOptions;
  /**
   * Test hook: while element 0 of this shared buffer is 0, the Worker blocks its own thread before
   * searching, like a slow query would; the test sets it to 1 (and notifies) to let it go.
   */
  test_hold?: SharedArrayBuffer;
}

export interface CloseRequest {
  id: number;
  op: "close";
}

export type WorkerRequest = SearchRequest | CloseRequest;

/**
 * A search's page comes as its JSON text (`page_json`): Bun's structured clone of a page of hits
 * (an object per hit) cost ~15 µs each way, the text a few (stringified in the Worker, parsed
 * once on the main thread). Its values are strings, finite numbers and null, which JSON carries
 * exactly.
 */
export type WorkerReply =
  | { id: number; ok: true; page_json?: string }
  | { id: number; ok: false; error: { message: string; name: string } };
