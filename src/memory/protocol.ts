/** Messages between the main thread and the memory Worker. */
import type { SearchOptions, SearchPage } from "../core/ports.ts";

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

export type WorkerReply =
  | { id: number; ok: true; page?: SearchPage }
  | { id: number; ok: false; error: { message: string; name: string } };
