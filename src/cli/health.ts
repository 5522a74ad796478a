/**
 * `longrun health [--url URL] [--ready] [--timeout S] [--root DIR]`: asks a running `longrun http`
 * whether it is alive (`GET /health`) or ready (`GET /ready`), for a container's HEALTHCHECK where
 * there is no shell and no curl. One line; exit 0 when it answers `200 {"ok":true}`, 1 when not
 * (or not at all), 2 on a usage error. The URL: `--url`, else the one in the root's
 * `.longrun/http.json`, else http://127.0.0.1:8080 (the image's port).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { InvalidRootError, resolveRoot } from "../root/paths.ts";

export const DEFAULT_URL = "http://127.0.0.1:8080";

/** A usage error: one line, exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The root a person's command means: `--root`, else LONGRUN_ROOT, else the working directory (its real path). */
export function personRoot(flag: string | undefined, env: Record<string, string | undefined> = process.env): string {
  const dir = flag ?? (env.LONGRUN_ROOT || process.cwd());
  try {
    return resolveRoot(dir);
  } catch (e) {
    if (e instanceof InvalidRootError) throw new UsageError(`${flag !== undefined ? "--root" : env.LONGRUN_ROOT ? "LONGRUN_ROOT" : "the working directory"}: ${e.message}`);
    throw e;
  }
}

/** What `<root>/.longrun/http.json` says (null: no such file, or not JSON). */
export function serverInfo(root: string): Record<string, unknown> | null {
  try {
    const info = JSON.parse(readFileSync(join(root, ".longrun", "http.json"), "utf8")) as unknown;
    return info !== null && typeof info === "object" && !Array.isArray(info) ? (info as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * A base URL to connect to: http(s) only, no path beyond `/`, no query; a server listening on
 * every address (0.0.0.0, ::) is reached on loopback. Throws UsageError naming `what`.
 */
export function dialable(text: string, what: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new UsageError(`${what} must be a URL such as ${DEFAULT_URL}, got ${JSON.stringify(text)}`);
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.username || u.password || u.search || u.hash || (u.pathname !== "/" && u.pathname !== "")) {
    throw new UsageError(`${what} must be http://HOST:PORT (no path, query or credentials), got ${JSON.stringify(text)}`);
  }
  if (u.hostname === "0.0.0.0") u.hostname = "127.0.0.1";
  if (u.hostname === "[::]") u.hostname = "[::1]";
  return u.origin;
}

function seconds(text: string | undefined): number {
  if (text === undefined) return 5;
  const n = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(n > 0 && n <= 3600)) throw new UsageError(`--timeout must be a number of seconds from 0.1 to 3600, got ${JSON.stringify(text)}`);
  return n;
}

export async function runHealthCommand(args: string[]): Promise<number> {
  let probe: string;
  let timeout: number;
  try {
    let values;
    try {
      values = parseArgs({ args, options: { url: { type: "string" }, root: { type: "string" }, ready: { type: "boolean" }, timeout: { type: "string" } }, strict: true }).values;
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    timeout = seconds(values.timeout);
    let base: string;
    if (values.url !== undefined) base = dialable(values.url, "--url");
    else {
      const info = serverInfo(personRoot(values.root));
      base = typeof info?.url === "string" ? dialable(info.url, "the url in .longrun/http.json") : DEFAULT_URL;
    }
    probe = `${base}/${values.ready ? "ready" : "health"}`;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`longrun: ${e.message}; see longrun --help\n`);
    return 2;
  }
  try {
    const r = await fetch(probe, { signal: AbortSignal.timeout(timeout * 1000), redirect: "manual" });
    const body = await r.text();
    let ok = false;
    try {
      ok = r.status === 200 && (JSON.parse(body) as { ok?: unknown }).ok === true;
    } catch {
      // not the probe's answer
    }
    if (ok) {
      process.stdout.write(`ok: ${probe} answered 200\n`);
      return 0;
    }
    process.stdout.write(`not ${probe.endsWith("/ready") ? "ready" : "healthy"}: ${probe} answered ${r.status}\n`);
    return 1;
  } catch (e) {
    const why = (e as Error)?.name === "TimeoutError" ? `no answer within ${timeout} s` : String((e as { cause?: { code?: string } })?.cause?.code ?? (e as Error)?.message ?? e).replace(/\s+/g, " ");
    process.stdout.write(`not ${probe.endsWith("/ready") ? "ready" : "healthy"}: ${probe}: ${why}\n`);
    return 1;
  }
}
