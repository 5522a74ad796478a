/** Messages between the main thread and the memory Worker. */
import type { SearchOptions, SearchPage } from "../core/ports.ts";

export interface SearchRequest {
  id: number;
  op: "search";
  url: string;
  query: string | string[];
  options: SearchOptions;
  /** Test hook: the Worker blocks its own thread this long before searching, like a slow query would. */
  test_block_ms?: number;
}

export interface CloseRequest {
  id: number;
  op: "close";
}

export type WorkerRequest = SearchRequest | CloseRequest;

export type WorkerReply =
  | { id: number; ok: true; page?: SearchPage }
  | { id: number; ok: false; error: { message: string; name: string } };
