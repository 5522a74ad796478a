/**
 * The one place that knows which runtime runs us. Runtime-specific code lives in
 * `src/runtime/<runtime>/`, loaded on demand from here and nowhere else.
 */

export type RuntimeKey = "bun" | "deno" | "other";

export function runtimeKey(): RuntimeKey {
  const g = globalThis as Record<string, unknown>;
  if (typeof g.Bun !== "undefined") return "bun";
  if (typeof g.Deno !== "undefined") return "deno";
  return "other";
}

/**
 * The argv that starts this same program again: the compiled executable itself, or the runtime
 * with this entry file (`bun src/main.ts`, `deno run -A src/main.ts`).
 */
export function selfArgv(): string[] {
  const key = runtimeKey();
  if (key === "deno") {
    const main = (globalThis as unknown as { Deno: { mainModule: string } }).Deno.mainModule;
    return [process.execPath, "run", "-A", "--no-check", "--quiet", new URL(main).pathname];
  }
  const script = process.argv[1] ?? "";
  if (key === "bun" && (/^(\/\$bunfs\/|[A-Za-z]:[\\/]~BUN[\\/])/.test(script) || script === "" || script === process.execPath)) return [process.execPath];
  return [process.execPath, script];
}

import type { HttpListener } from "./types.ts";
export type { HttpListener } from "./types.ts";

/** Serves `fetch` on hostname:port with the runtime's own server (Bun.serve or Deno.serve). */
export async function serveHttp(fetch: (req: Request) => Response | Promise<Response>, hostname: string, port: number): Promise<HttpListener> {
  const key = runtimeKey();
  if (key === "bun") return (await import("./bun/serve.ts")).bunServe(fetch, hostname, port);
  if (key === "deno") return (await import("./deno/serve.ts")).denoServe(fetch, hostname, port);
  throw new Error("longrun runs on Bun or Deno; this runtime has no HTTP server adapter");
}

/**
 * One request line over a unix socket and its answer line, or null (no answer in time, or a
 * runtime without an adapter: Bun only, for now).
 */
export async function unixRequest(path: string, line: string, timeoutMs: number, maxAnswerBytes: number): Promise<string | null> {
  if (runtimeKey() !== "bun") return null;
  return (await import("./bun/unix.ts")).unixRequest(path, line, timeoutMs, maxAnswerBytes);
}

/** Serves one answer line per connection on the unix socket `path` (Bun only, for now). */
export async function listenUnix(path: string, o: import("./types.ts").UnixServeOptions): Promise<import("./types.ts").UnixListener> {
  if (runtimeKey() !== "bun") throw new Error("the resident gate runs on Bun (the compiled executable) only");
  return (await import("./bun/unix.ts")).listenUnix(path, o);
}
