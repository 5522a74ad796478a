/**
 * `longrun http`: the HTTP API, configured by flags or environment (src/cli/http_config.ts). Binds
 * loopback unless told otherwise (a non-loopback address also needs --expose). Prints one JSON
 * line on stdout with the URL, the token file and the status page's one-time login link; logs
 * (requests, errors, start and stop) go to stderr as text or JSON lines. SIGTERM or SIGINT: stops listening, lets calls in flight finish,
 * closes the roots, removes the token file, exit 0.
 */
import { createHttpApp } from "../http/app.ts";
import { Logger, oneLine } from "../http/log.ts";
import { Metrics } from "../http/metrics.ts";
import { StatusPage } from "../http/page/routes.ts";
import { readiness } from "../http/ready.ts";
import { removeTokenFile, TOKEN_ENV, tokenFilePath, writeTokenFile } from "../http/tokens.ts";
import { Dispatcher } from "../rpc/dispatcher.ts";
import { toErrorObject } from "../rpc/errors.ts";
import { allMethods } from "../rpc/methods/index.ts";
import { RootRegistry } from "../root/registry.ts";
import { rootPaths } from "../root/root.ts";
import { mkdirSync } from "node:fs";
import { type HttpListener, serveHttp } from "../runtime/index.ts";
import { type HttpConfig, LOOPBACK } from "./http_config.ts";

/** Leases granted over HTTP without a ttl_seconds end after this long (or with the turn, if sooner). */
export const HTTP_DEFAULT_LEASE_TTL_SECONDS = 600;

export async function runHttp(o: HttpConfig): Promise<number> {
  const log = new Logger(o.logFormat);
  const hostPart = o.host.includes(":") ? `[${o.host}]` : o.host;
  // a root on a libSQL server keeps the token file in this runner's state directory
  const tokenFile = tokenFilePath(o.server ? o.server.stateDir : rootPaths(o.root).longrun);
  let signal: string | null = null;
  const stopped = new Promise<void>((resolve) => {
    for (const s of ["SIGTERM", "SIGINT"] as const) process.on(s, () => ((signal ??= s), resolve()));
  });
  // a crash after start: one log line (no stack), the token file removed, exit 1
  const crash = (e: unknown) => {
    log.event("error", "crash", { message: oneLine(e) });
    removeTokenFile(tokenFile);
    log.flush(true);
    process.exit(1);
  };
  process.on("uncaughtException", crash);
  process.on("unhandledRejection", crash);

  const roots = new RootRegistry({ defaultRoot: o.root, allow: [o.root, ...o.allowRoots], maxOpen: o.maxRoots, server: o.server });
  if (o.server) mkdirSync(o.server.stateDir, { recursive: true, mode: 0o700 }); // the token file goes there before the server is reached
  try {
    await roots.get(); // lays out the default root (its .longrun/ holds the token file)
  } catch (e) {
    const err = toErrorObject(e);
    log.event("error", "start_failed", { kind: String(err.data?.kind ?? "internal") }, `cannot open the root ${roots.defaultRoot ?? o.root}: ${oneLine(err.message)}`);
    await roots.closeAll();
    return 1;
  }
  const dispatcher = new Dispatcher({ methods: allMethods(), roots });
  const metrics = new Metrics();

  // The served Host values depend on the port actually bound, so the app is made once it is known.
  let fetch: (req: Request) => Response | Promise<Response> = () => new Response("starting", { status: 503 });
  let listener: HttpListener;
  try {
    listener = await serveHttp((req) => fetch(req), o.host, o.port);
  } catch (e) {
    log.event("error", "start_failed", { kind: "listen" }, `cannot listen on ${hostPart}:${o.port}: ${oneLine(e).replace(/^Error: /, "")}`);
    await roots.closeAll();
    return 2;
  }
  const everywhere = o.host === "0.0.0.0" || o.host === "::";
  const hosts = [
    `${hostPart}:${listener.port}`,
    ...(LOOPBACK.has(o.host) || everywhere ? [`localhost:${listener.port}`, `127.0.0.1:${listener.port}`] : []),
    // a name given without a port: with the bound port, and alone (a client on port 80 in front, a Kubernetes Service, sends no port)
    ...o.allowedHosts.flatMap((h) => (/:\d+$/.test(h) ? [h] : [h, `${h}:${listener.port}`])),
  ];
  const ready = readiness(roots, {
    onChange: (ok, why) => (ok ? log.event("info", "ready") : log.event("error", "not_ready", { kind: why?.kind, message: why ? oneLine(why.message) : undefined })),
  });
  const page = new StatusPage({ dispatcher, defaultRoot: roots.defaultRoot ?? o.root, allowRoots: o.server ? [] : o.allowRoots, cookieName: `longrun_page_${listener.port}` });
  const app = createHttpApp({ dispatcher, tokens: o.tokens, hosts, defaultLeaseTtlSeconds: HTTP_DEFAULT_LEASE_TTL_SECONDS, log, metrics, ready, page, mcpSeveralRoots: o.allowRoots.length > 0 });
  fetch = (req) => app.fetch(req);
  const url = `http://${hostPart}:${listener.port}`;
  try {
    writeTokenFile(tokenFile, { url, tokens: o.tokens, fromEnv: o.tokensFromEnv });
  } catch (e) {
    log.event("error", "start_failed", { kind: "token_file" }, `cannot write ${tokenFile}: ${oneLine(e)}`);
    await listener.stop();
    await roots.closeAll();
    return 1;
  }
  const tokens = o.tokensFromEnv ? "environment" : "file";
  // the page's login link works once: it goes to whoever started the server (stdout), never to the log
  process.stdout.write(JSON.stringify({ url, token_file: tokenFile, tokens, page: page.startLink(url) }) + "\n");
  log.event(
    "info",
    "start",
    { url, root: roots.defaultRoot ?? o.root, token_file: tokenFile, tokens, log_format: o.logFormat },
    `HTTP API on ${url} (root ${roots.defaultRoot ?? o.root}); ` +
      (o.tokensFromEnv ? `tokens from ${TOKEN_ENV.host} and ${TOKEN_ENV.agent} (not written to ${tokenFile})` : `tokens in ${tokenFile}`),
  );

  await stopped;
  log.event("info", "stopping", { signal }, `${signal}: stopping (calls in flight finish first)`);
  page.close(); // live page streams never finish by themselves
  await listener.stop();
  await dispatcher.drained();
  await roots.closeAll();
  removeTokenFile(tokenFile);
  log.event("info", "stopped", {}, "stopped");
  // the log out before exit, unless nobody is reading it
  await Promise.race([new Promise<void>((resolve) => process.stderr.write("", () => resolve())), new Promise((r) => setTimeout(r, 2000))]);
  return 0;
}
