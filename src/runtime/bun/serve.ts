/** HTTP on Bun: Bun.serve. */
import type { HttpListener } from "../types.ts";

export function bunServe(fetch: (req: Request) => Response | Promise<Response>, hostname: string, port: number): HttpListener {
  const server = Bun.serve({ fetch, hostname, port, maxRequestBodySize: 64 * 1024 * 1024 });
  return {
    port: server.port ?? port,
    stop: () => server.stop(),
  };
}
