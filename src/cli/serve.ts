/** `longrun serve [--root DIR]`: the stdio JSON-RPC server, wired. */
import { Dispatcher } from "../rpc/dispatcher.ts";
import { allMethods } from "../rpc/methods/index.ts";
import { RootRegistry } from "../root/registry.ts";
import { rootAtStart } from "./root_arg.ts";
import type { ServerStore } from "../store/server_config.ts";
import { serveStdio } from "../stdio/server.ts";

export async function runServe(options: { root: string | null; maxRoots?: number; server?: ServerStore | null }): Promise<number> {
  const defaultRoot = options.server ? null : rootAtStart(options.root);
  if (defaultRoot === null && !options.server) return 2;
  const roots = new RootRegistry({ defaultRoot, maxOpen: options.maxRoots, server: options.server, webhooks: true });
  const dispatcher = new Dispatcher({ methods: allMethods(), roots });
  const stop = new AbortController();
  const onTerm = () => stop.abort();
  process.on("SIGTERM", onTerm);
  process.on("SIGINT", onTerm);
  try {
    await serveStdio({
      dispatcher,
      input: process.stdin,
      output: process.stdout,
      caller: { side: "host", via: "stdio" },
      log: (l) => process.stderr.write(l + "\n"),
      stop: stop.signal,
    });
  } finally {
    await roots.closeAll();
  }
  return 0;
}
