/** HTTP on Deno: Deno.serve. */
import type { HttpListener } from "../types.ts";
import { deno } from "./deno.ts";

export async function denoServe(fetch: (req: Request) => Response | Promise<Response>, hostname: string, port: number): Promise<HttpListener> {
  const ac = new AbortController();
  let bound = port;
  const listening = new Promise<void>((resolve) => {
    const server = deno().serve({ hostname, port, signal: ac.signal, onListen: (addr) => ((bound = addr.port), resolve()) }, fetch);
    stopServer = async () => {
      ac.abort();
      await server.finished;
    };
  });
  let stopServer: () => Promise<void> = async () => {};
  await listening;
  return { port: bound, stop: () => stopServer() };
}
