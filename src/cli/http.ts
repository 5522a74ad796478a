/**
 * `longrun http [--root DIR] [--host 127.0.0.1] [--port N] [--allow-root DIR]… [--expose]`:
 * the HTTP API. Binds loopback unless told otherwise (a non-loopback address also needs --expose).
 * Prints one JSON line on stdout with the URL and the token file; logs go to stderr.
 */
import { createHttpApp } from "../http/app.ts";
import { tokenFilePath, tokensFrom, writeTokenFile } from "../http/tokens.ts";
import { Dispatcher } from "../rpc/dispatcher.ts";
import { allMethods } from "../rpc/methods/index.ts";
import { RootRegistry } from "../roots.ts";
import { rootPaths } from "../root.ts";
import { rootAtStart } from "./root_arg.ts";
import { serveHttp } from "../runtime/index.ts";

/** Leases granted over HTTP without a ttl_seconds end after this long (or with the turn, if sooner). */
export const HTTP_DEFAULT_LEASE_TTL_SECONDS = 600;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

export interface HttpCommandOptions {
  root: string | null;
  host: string;
  port: number;
  allowRoots: string[];
  expose: boolean;
  /** Extra `Host` header values to answer to (a container's service name, say); `:port` added when missing. */
  allowedHosts: string[];
  /** At most this many roots open at once (least recently used idle ones closed first). */
  maxRoots?: number;
}

export async function runHttp(o: HttpCommandOptions): Promise<number> {
  if (!LOOPBACK.has(o.host) && !o.expose) {
    process.stderr.write(`longrun: refusing to listen on ${o.host}: it is not loopback; add --expose if you really mean it (tokens stay required)\n`);
    return 2;
  }
  if (!LOOPBACK.has(o.host) && o.allowedHosts.length === 0 && (o.host === "0.0.0.0" || o.host === "::")) {
    process.stderr.write(`longrun: listening on ${o.host} needs --allowed-host NAME for each name clients use to reach it (requests with any other Host header are refused)\n`);
    return 2;
  }
  const root = rootAtStart(o.root);
  if (root === null) return 2;
  const roots = new RootRegistry({ defaultRoot: root, allow: [root, ...o.allowRoots], maxOpen: o.maxRoots });
  await roots.get(); // lays out the default root (its .longrun/ holds the token file)
  const dispatcher = new Dispatcher({ methods: allMethods(), roots });
  const stopped = new Promise<void>((resolve) => {
    process.on("SIGTERM", resolve);
    process.on("SIGINT", resolve);
  });
  const { tokens, fromEnv } = tokensFrom(process.env);
  // The served Host values depend on the port actually bound, so the app is made once it is known.
  let fetch: (req: Request) => Response | Promise<Response> = () => new Response("starting", { status: 503 });
  const listener = await serveHttp((req) => fetch(req), o.host, o.port);
  const hostPart = o.host.includes(":") ? `[${o.host}]` : o.host;
  const everywhere = o.host === "0.0.0.0" || o.host === "::";
  const hosts = [
    `${hostPart}:${listener.port}`,
    ...(LOOPBACK.has(o.host) || everywhere ? [`localhost:${listener.port}`, `127.0.0.1:${listener.port}`] : []),
    ...o.allowedHosts.map((h) => (/:\d+$/.test(h) ? h : `${h}:${listener.port}`)),
  ];
  const app = createHttpApp({ dispatcher, tokens, hosts, defaultLeaseTtlSeconds: HTTP_DEFAULT_LEASE_TTL_SECONDS });
  fetch = (req) => app.fetch(req);
  const url = `http://${hostPart}:${listener.port}`;
  const tokenFile = tokenFilePath(rootPaths(root).longrun);
  writeTokenFile(tokenFile, { url, tokens, fromEnv });
  process.stdout.write(JSON.stringify({ url, token_file: tokenFile }) + "\n");
  process.stderr.write(`longrun: HTTP API on ${url} (root ${root}); tokens in ${tokenFile}\n`);

  await stopped;
  await listener.stop();
  await dispatcher.drained();
  await roots.closeAll();
  return 0;
}
