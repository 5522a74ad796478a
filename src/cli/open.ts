/**
 * `longrun open [--root DIR] [--url URL] [--no-browser]`: the status page for a person, also one
 * whose agent only runs `longrun mcp`. If a `longrun http` for the root is running (the URL in
 * its `.longrun/http.json`, or `--url`, answers, and the host token is valid) it asks that server
 * for a one-time login link (`POST /v1/login-link`); otherwise it serves the root itself on
 * 127.0.0.1 (a free port), in the foreground until Ctrl-C. It prints the link on stdout (one
 * line) and opens it in a browser unless `--no-browser` or there is no display.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { parseArgs } from "node:util";
import { readTokenFile, TOKEN_FILE_ENV } from "../http/token_files.ts";
import { TOKEN_ENV, TokenEnvError } from "../http/tokens.ts";
import { dialable, personRoot, serverInfo, UsageError } from "./health.ts";

type EnvMap = Record<string, string | undefined>;

/** The host token for a server: LONGRUN_HOST_TOKEN (or its _FILE), else what its http.json holds or names; null if none. */
export function hostTokenFor(info: Record<string, unknown> | null, env: EnvMap): string | null {
  if (env[TOKEN_ENV.host]) return env[TOKEN_ENV.host]!;
  if (env[TOKEN_FILE_ENV.host]) return readTokenFile(TOKEN_FILE_ENV.host, env[TOKEN_FILE_ENV.host]!);
  if (typeof info?.host_token === "string") return info.host_token;
  if (typeof info?.host_token_file === "string") return readTokenFile("the host_token_file in .longrun/http.json", info.host_token_file);
  if (typeof info?.host_token_env === "string" && env[info.host_token_env]) return env[info.host_token_env]!;
  return null;
}

/** Asks the server at `base` for a login link: the link, or why not (unreachable, refused). */
export async function askForLink(base: string, token: string): Promise<{ link: string } | { why: string; reachable: boolean }> {
  let r: Response;
  try {
    r = await fetch(`${base}/v1/login-link`, { method: "POST", headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5000), redirect: "manual" });
  } catch (e) {
    return { why: `${base} does not answer (${String((e as { cause?: { code?: string } })?.cause?.code ?? (e as Error)?.message ?? e).replace(/\s+/g, " ")})`, reachable: false };
  }
  const body = (await r.json().catch(() => null)) as { url?: unknown; detail?: unknown } | null;
  if (r.status === 200 && typeof body?.url === "string") return { link: body.url };
  return { why: `${base} refused a login link: ${r.status}${typeof body?.detail === "string" ? ` (${body.detail})` : ""}`, reachable: true };
}

/** `xdg-open` (or macOS's `open`) on PATH when there is a display to open a browser on; null otherwise. */
function opener(env: EnvMap): string | null {
  const name = process.platform === "darwin" ? "open" : process.platform === "linux" || process.platform.endsWith("bsd") ? "xdg-open" : null;
  if (name === null) return null;
  if (name === "xdg-open" && !env.DISPLAY && !env.WAYLAND_DISPLAY) return null;
  for (const dir of (env.PATH ?? "").split(delimiter)) if (dir && existsSync(join(dir, name))) return join(dir, name);
  return null;
}

function show(link: string, browser: boolean): void {
  process.stdout.write(link + "\n");
  const program = browser ? opener(process.env) : null;
  if (program === null) {
    process.stderr.write("longrun: open that link in a browser (it works once)\n");
    return;
  }
  try {
    const child = spawn(program, [link], { stdio: "ignore", detached: true });
    child.on("error", () => process.stderr.write("longrun: could not start a browser; open the link yourself\n"));
    child.unref();
  } catch {
    process.stderr.write("longrun: could not start a browser; open the link yourself\n");
  }
}

export async function runOpenCommand(args: string[]): Promise<number> {
  let root: string;
  let values: { root?: string; url?: string; "no-browser"?: boolean };
  let base: string | null;
  let token: string | null;
  try {
    try {
      values = parseArgs({ args, options: { root: { type: "string" }, url: { type: "string" }, "no-browser": { type: "boolean" } }, strict: true }).values;
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    root = personRoot(values.root);
    const info = serverInfo(root);
    base = values.url !== undefined ? dialable(values.url, "--url") : typeof info?.url === "string" ? dialable(info.url, "the url in .longrun/http.json") : null;
    token = hostTokenFor(info, process.env);
  } catch (e) {
    if (!(e instanceof UsageError) && !(e instanceof TokenEnvError)) throw e;
    process.stderr.write(`longrun: ${e.message}; see longrun --help\n`);
    return 2;
  }
  const browser = values["no-browser"] !== true;

  if (base !== null && token !== null) {
    const answer = await askForLink(base, token);
    if ("link" in answer) {
      show(answer.link, browser);
      return 0;
    }
    if (values.url !== undefined || answer.reachable) {
      process.stderr.write(`longrun: ${answer.why}\n`);
      return 1;
    }
  } else if (values.url !== undefined) {
    process.stderr.write(`longrun: no host token for ${values.url}: set ${TOKEN_ENV.host} (or ${TOKEN_FILE_ENV.host}), or run in the root whose .longrun/http.json holds it\n`);
    return 1;
  }

  // no server for this root: serve it here, on loopback, until Ctrl-C
  const { ConfigError, httpConfig } = await import("./http_config.ts");
  let config;
  try {
    config = httpConfig({ root, host: "127.0.0.1", port: "0" }, process.env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`longrun: ${e.message}\n`);
    return 2;
  }
  return (await import("./http.ts")).runHttp(
    { ...config, server: null, loginLink: true },
    {
      onListening: ({ url, page }) => {
        show(page.startLink(url), browser);
        process.stderr.write(`longrun: serving the status page for ${root} on ${url}; Ctrl-C stops it\n`);
      },
    },
  );
}
