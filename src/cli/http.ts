/**
 * `longrun http`: the HTTP API, configured by flags or environment (src/cli/http_config.ts). Binds
 * loopback unless told otherwise (a non-loopback address also needs --expose). Prints one JSON
 * line on stdout with the URL, the token file and either the status page's one-time login link
 * (`--login-link`) or how to get one (`longrun open`); logs (requests, errors, start and stop) go
 * to stderr as text or JSON lines. Tokens: given (environment, files), else those a previous
 * start kept in http.json, else new; SIGHUP or a changed token file reads the files again.
 * SIGTERM or SIGINT: stops listening, lets calls in flight finish, closes the roots, and leaves
 * the token file (without its pid) for the next start, exit 0.
 */
import { createHttpApp } from "../http/app.ts";
import { EventStreams } from "../http/page/stream.ts";
import { Logger, oneLine } from "../http/log.ts";
import { Metrics } from "../http/metrics.ts";
import { StatusPage } from "../http/page/routes.ts";
import { readiness } from "../http/ready.ts";
import { type GivenTokens, originInfo, watchTokenFiles } from "../http/token_files.ts";
import { keptTokens, LiveTokens, markTokenFileStopped, newToken, type Tokens, tokenFilePath, writeTokenFile } from "../http/tokens.ts";
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

/** What `longrun open` needs of a server it started itself: told once it listens, instead of the stdout line. */
export interface HttpStartHooks {
  onListening?: (info: { url: string; tokenFile: string; page: StatusPage }) => void;
}

/**
 * The tokens to serve with: the given ones, else (unless rotating) the pair and metrics token a
 * previous start kept in `tokenFile`, else new ones; with why new ones were minted, if it matters.
 */
function startTokens(o: HttpConfig, tokenFile: string): { tokens: Tokens; kept: boolean; why?: string } | { error: string } {
  const metricsGiven = o.given.metrics;
  if (o.given.pair) return { tokens: { ...o.given.pair, metrics: metricsGiven }, kept: false };
  const k = o.rotateTokens ? null : keptTokens(tokenFile);
  const pair = k && "tokens" in k ? k.tokens : { host: newToken(), agent: newToken(), metrics: null };
  if (metricsGiven !== null && (metricsGiven === pair.host || metricsGiven === pair.agent)) {
    return { error: `${o.tokenOrigins.metrics!.variable} must differ from the host and agent tokens in ${tokenFile}` };
  }
  const tokens = { host: pair.host, agent: pair.agent, metrics: metricsGiven ?? pair.metrics ?? newToken() };
  return { tokens, kept: k !== null && "tokens" in k, why: o.rotateTokens ? "--rotate-tokens" : k && "why" in k ? k.why : undefined };
}

export async function runHttp(o: HttpConfig, hooks: HttpStartHooks = {}): Promise<number> {
  const log = new Logger(o.logFormat);
  const hostPart = o.host.includes(":") ? `[${o.host}]` : o.host;
  // a root on a libSQL server keeps the token file in this runner's state directory
  const tokenFile = tokenFilePath(o.server ? o.server.stateDir : rootPaths(o.root).longrun);
  let signal: string | null = null;
  const stopped = new Promise<void>((resolve) => {
    for (const s of ["SIGTERM", "SIGINT"] as const) process.on(s, () => ((signal ??= s), resolve()));
  });
  // a crash after start: one log line (no stack), the token file kept for the next start, exit 1
  const crash = (e: unknown) => {
    log.event("error", "crash", { message: oneLine(e) });
    markTokenFileStopped(tokenFile);
    log.flush(true);
    process.exit(1);
  };
  process.on("uncaughtException", crash);
  process.on("unhandledRejection", crash);

  const roots = new RootRegistry({ defaultRoot: o.root, allow: [o.root, ...o.allowRoots], maxOpen: o.maxRoots, server: o.server, webhooks: true });
  if (o.server) mkdirSync(o.server.stateDir, { recursive: true, mode: 0o700 }); // the token file goes there before the server is reached
  try {
    await roots.get(); // lays out the default root (its .longrun/ holds the token file)
  } catch (e) {
    const err = toErrorObject(e);
    log.event("error", "start_failed", { kind: String(err.data?.kind ?? "internal") }, `cannot open the root ${roots.defaultRoot ?? o.root}: ${oneLine(err.message)}`);
    await roots.closeAll();
    return 1;
  }
  const chosen = startTokens(o, tokenFile);
  if ("error" in chosen) {
    log.event("error", "start_failed", { kind: "tokens" }, chosen.error);
    await roots.closeAll();
    return 2;
  }
  const live = new LiveTokens(chosen.tokens);
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
  const eventStreams = new EventStreams(250);
  const app = createHttpApp({ dispatcher, tokens: live, hosts, defaultLeaseTtlSeconds: HTTP_DEFAULT_LEASE_TTL_SECONDS, log, metrics, ready, page, mcpSeveralRoots: o.allowRoots.length > 0, eventStreams });
  fetch = (req) => app.fetch(req);
  const url = `http://${hostPart}:${listener.port}`;
  const origins = originInfo(o.tokenOrigins);
  try {
    writeTokenFile(tokenFile, { url, tokens: chosen.tokens, origins });
  } catch (e) {
    log.event("error", "start_failed", { kind: "token_file" }, `cannot write ${tokenFile}: ${oneLine(e)}`);
    await listener.stop();
    await roots.closeAll();
    return 1;
  }
  const given = o.given.pair !== null;
  const tokens = given ? "environment" : "file";
  const root = roots.defaultRoot ?? o.root;
  if (hooks.onListening) hooks.onListening({ url, tokenFile, page });
  else {
    // the page's login link works once: only when asked for, to whoever started the server (stdout), never to the log
    const login = o.loginLink ? { page: page.startLink(url) } : { login: o.server ? `longrun open --url ${url} (with the host token in LONGRUN_HOST_TOKEN)` : `longrun open --root ${root}` };
    process.stdout.write(JSON.stringify({ url, token_file: tokenFile, tokens, ...login }) + "\n");
  }
  const named = (c: "host" | "agent" | "metrics") => origins.given[c]?.variable;
  log.event(
    "info",
    "start",
    { url, root, token_file: tokenFile, tokens, tokens_kept: chosen.kept, log_format: o.logFormat },
    `HTTP API on ${url} (root ${root}); ` +
      (given
        ? `tokens from ${named("host")} and ${named("agent")} (not written to ${tokenFile})`
        : `tokens in ${tokenFile} (${chosen.kept ? "kept from the last start" : `new${chosen.why ? `: ${chosen.why}` : ""}`})`) +
      (named("metrics") ? `; metrics token from ${named("metrics")}` : "") +
      (o.loginLink ? "" : `; a login link for the status page: longrun open${o.server ? "" : ` --root ${root}`}`),
  );
  // rotation without a restart: SIGHUP, or a token file that changed, reads the files again
  const rotate = (g: GivenTokens, why: string) => {
    const now = live.current;
    const next: Tokens = { host: g.pair?.host ?? now.host, agent: g.pair?.agent ?? now.agent, metrics: o.tokenOrigins.metrics ? g.metrics : now.metrics };
    if (next.metrics != null && (next.metrics === next.host || next.metrics === next.agent)) {
      return log.event("error", "tokens_not_reloaded", { why }, `${why}: ${named("metrics")} must differ from the host and agent tokens; the tokens in force stay`);
    }
    const changed = (["host", "agent", "metrics"] as const).filter((c) => (next[c] ?? null) !== (now[c] ?? null));
    live.set(next);
    // page sessions and login codes opened with an old token end with it
    const ended = (["host", "agent"] as const).filter((c) => changed.includes(c)).reduce((n, side) => n + page.sessions.endSide(side), 0);
    log.event(
      "info",
      "tokens_reloaded",
      { why, changed: changed.join(",") || "none", page_sessions_ended: ended },
      `${why}: token files read again (${changed.length ? `new: ${changed.join(", ")}` : "unchanged"})${ended ? `; ${ended} page session(s) and code(s) of that side ended` : ""}`,
    );
  };
  const watch = watchTokenFiles(o.tokenOrigins, o.given, {
    onChange: rotate,
    onError: (message) => log.event("error", "tokens_not_reloaded", { message }, `${message}; the tokens in force stay`),
  });
  const hasFiles = Object.values(o.tokenOrigins).some((x) => x?.file !== undefined);
  // (no SIGHUP on Windows: there the files are only looked at)
  if (process.platform !== "win32") process.on("SIGHUP", () => {
    if (hasFiles) watch.reload("SIGHUP");
    else log.event("info", "tokens_not_reloaded", { why: "SIGHUP" }, "SIGHUP: no token files to read again (LONGRUN_HOST_TOKEN_FILE, …); restart with --rotate-tokens for new tokens in http.json");
  });

  await stopped;
  watch.stop();
  log.event("info", "stopping", { signal }, `${signal}: stopping (calls in flight finish first)`);
  page.close(); // live page streams never finish by themselves
  eventStreams.closeAll(); // nor do the event log's
  await listener.stop();
  await dispatcher.drained();
  await roots.closeAll();
  markTokenFileStopped(tokenFile);
  log.event("info", "stopped", {}, "stopped");
  // the log out before exit, unless nobody is reading it
  await Promise.race([new Promise<void>((resolve) => process.stderr.write("", () => resolve())), new Promise((r) => setTimeout(r, 2000))]);
  return 0;
}
