/**
 * The few Deno APIs longrun uses, typed here because the project type-checks with Bun's types.
 * Only code under `src/runtime/deno/` may call this.
 */

export interface DenoFsFile {
  tryLock(exclusive?: boolean): Promise<boolean>;
  unlock(): Promise<void>;
  close(): void;
}

export interface DenoServeOptions {
  hostname?: string;
  port?: number;
  signal?: AbortSignal;
  onListen?: (addr: { hostname: string; port: number }) => void;
}

export interface DenoHttpServer {
  finished: Promise<void>;
  shutdown(): Promise<void>;
  addr: { hostname: string; port: number };
}

export interface DenoNamespace {
  open(path: string, options: { read?: boolean; write?: boolean; create?: boolean; mode?: number }): Promise<DenoFsFile>;
  serve(options: DenoServeOptions, handler: (request: Request) => Response | Promise<Response>): DenoHttpServer;
}

export function deno(): DenoNamespace {
  return (globalThis as unknown as { Deno: DenoNamespace }).Deno;
}
