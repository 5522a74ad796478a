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
