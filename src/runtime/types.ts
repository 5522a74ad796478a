/** The shapes runtime-specific code (src/runtime/bun/, src/runtime/deno/) fills in: no code, so nothing loads a runtime by importing them. */

export interface HttpListener {
  /** The port actually bound (useful with port 0). */
  port: number;
  stop(): Promise<void>;
}

/** The handful of calls both runtimes' SQLite offer under one shape. */
export interface SyncSqlite {
  all(sql: string, args: readonly (string | number | bigint | null | Uint8Array)[]): Record<string, unknown>[];
  exec(sql: string): void;
  close(): void;
}

/** What a unix-socket server answers with, and its bounds (src/runtime/bun/unix.ts). */
export interface UnixServeOptions {
  /** The answer to one request line (one line, no newline in it). */
  answer(line: string): Promise<string>;
  /** A connection that sends no full line within this is closed unanswered. */
  readTimeoutMs: number;
  maxRequestBytes: number;
}

export interface UnixListener {
  stop(): void;
}
