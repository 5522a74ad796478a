/**
 * `longrun http`'s configuration from its flags and the environment (what a container sets).
 * A flag wins over its variable; an empty variable counts as unset. Any bad value is a
 * ConfigError whose message names the flag or variable, what it accepts and what it got (never a
 * token's value): the command prints it as one line and exits 2.
 */
import { isIP } from "node:net";
import type { LogFormat } from "../http/log.ts";
import { LOG_FORMATS } from "../http/log.ts";
import { type GivenTokens, readGivenTokens, type TokenOrigins, tokenOrigins } from "../http/token_files.ts";
import { TokenEnvError } from "../http/tokens.ts";
import { InvalidRootError, resolveRoot } from "../root/root.ts";
import type { ServerStore } from "../store/server_config.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Every variable `longrun http` reads (besides LONGRUN_MAX_ROOTS, shared with serve, and the token variables: src/http/token_files.ts). */
export const HTTP_ENV = {
  root: "LONGRUN_ROOT",
  host: "LONGRUN_HOST",
  port: "LONGRUN_PORT",
  expose: "LONGRUN_EXPOSE",
  allowedHosts: "LONGRUN_ALLOWED_HOSTS",
  allowRoots: "LONGRUN_ALLOW_ROOTS",
  logFormat: "LONGRUN_LOG_FORMAT",
  loginLink: "LONGRUN_LOGIN_LINK",
} as const;

export const LOOPBACK: ReadonlySet<string> = new Set(["127.0.0.1", "localhost", "::1"]);

export interface HttpConfig {
  /** The real path of the default root. */
  root: string;
  /** A root on a libSQL server instead (`--store`, `LONGRUN_STORE`): then the only root. */
  server?: ServerStore | null;
  host: string;
  port: number;
  /** Real paths of the directories roots named by callers must be in (besides the default root). */
  allowRoots: string[];
  expose: boolean;
  /** Extra `Host` names to answer to (a container's service name, say), each optionally with `:port`. */
  allowedHosts: string[];
  maxRoots?: number;
  logFormat: LogFormat;
  /** Which variable gives each token (its value, or a file it names); the files are read again on SIGHUP or when they change. */
  tokenOrigins: TokenOrigins;
  /** The given tokens as read at start (absent ones: kept in http.json, or random). */
  given: GivenTokens;
  /** Mint new tokens instead of keeping those in http.json (`--rotate-tokens`). */
  rotateTokens: boolean;
  /** Print the status page's one-time login link on stdout at start (`--login-link`, LONGRUN_LOGIN_LINK). */
  loginLink: boolean;
}

export interface HttpFlags {
  root?: string;
  host?: string;
  port?: string;
  expose?: boolean;
  "allowed-host"?: string[];
  "allow-root"?: string[];
  "log-format"?: string;
  "rotate-tokens"?: boolean;
  "login-link"?: boolean;
}

type EnvMap = Record<string, string | undefined>;

const LABEL = "[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?";
const HOSTNAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*\\.?$`);

/** A name or address to listen on, or to answer to in `Host`: an IP address or a DNS name. */
function isHostName(s: string): boolean {
  return isIP(s) !== 0 || HOSTNAME.test(s);
}

/** Where a value came from, as the error should name it. */
interface Source {
  name: string;
  value: string;
}

function pick(flag: string | undefined, flagName: string, env: EnvMap, envName: string): Source | null {
  if (flag !== undefined) return { name: flagName, value: flag };
  const v = env[envName];
  return v === undefined || v === "" ? null : { name: envName, value: v };
}

function bad(src: Source, accepts: string): ConfigError {
  return new ConfigError(`${src.name} must be ${accepts}, got ${JSON.stringify(src.value.length > 200 ? src.value.slice(0, 200) + "…" : src.value)}`);
}

function directory(src: Source, value: string): string {
  try {
    return resolveRoot(value);
  } catch (e) {
    if (e instanceof InvalidRootError) throw new ConfigError(`${src.name}: ${e.message}`);
    throw new ConfigError(`${src.name}: cannot use ${JSON.stringify(value)}: ${(e as Error)?.message ?? e}`);
  }
}

/** One `Host` name to answer to, normalized: lower case, IPv6 in brackets; `:port` kept when given. */
function allowedHost(src: Source, entry: string): string {
  const accepts = "host names or IP addresses (each optionally with :port), e.g. longrun,longrun.internal:8080";
  const e = entry.trim().toLowerCase();
  if (isIP(e) === 6) return `[${e}]`;
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(e);
  const name = m?.[1] ?? "";
  const ok = m !== null && (name.startsWith("[") ? isIP(name.slice(1, -1)) === 6 : isHostName(name)) && (m[2] === undefined || Number(m[2]) <= 65535);
  if (!ok) throw new ConfigError(`${src.name} must list ${accepts}; ${JSON.stringify(entry)} is not one`);
  return e;
}

/** The configuration of `longrun http`, or a ConfigError. `maxRoots` is parsed by the caller (shared with serve). */
export function httpConfig(flags: HttpFlags, env: EnvMap, maxRoots?: number): HttpConfig {
  const fmtSrc = pick(flags["log-format"], "--log-format", env, HTTP_ENV.logFormat);
  const logFormat = (fmtSrc?.value ?? "text") as LogFormat;
  if (!LOG_FORMATS.includes(logFormat)) throw bad(fmtSrc!, "text or json");

  const hostSrc = pick(flags.host, "--host", env, HTTP_ENV.host);
  const host = hostSrc?.value ?? "127.0.0.1";
  if (!isHostName(host)) throw bad(hostSrc!, "an IP address or host name to listen on (127.0.0.1, ::1, 0.0.0.0, ::, or a name of this machine)");

  const portSrc = pick(flags.port, "--port", env, HTTP_ENV.port);
  const port = portSrc === null ? 0 : /^\d{1,5}$/.test(portSrc.value) ? Number(portSrc.value) : NaN;
  if (!(port >= 0 && port <= 65535)) throw bad(portSrc!, "a port number from 0 to 65535 (0: any free port)");

  const expose = onOff(flags.expose, env, HTTP_ENV.expose);
  const loginLink = onOff(flags["login-link"], env, HTTP_ENV.loginLink);

  const allowedHosts: string[] = [];
  if (flags["allowed-host"]?.length) {
    for (const h of flags["allowed-host"]) allowedHosts.push(allowedHost({ name: "--allowed-host", value: h }, h));
  } else {
    const src = pick(undefined, "", env, HTTP_ENV.allowedHosts);
    if (src) {
      for (const h of src.value.split(",")) if (h.trim() !== "") allowedHosts.push(allowedHost({ name: HTTP_ENV.allowedHosts, value: src.value }, h));
    }
  }

  if (!LOOPBACK.has(host) && !expose) {
    throw new ConfigError(
      `refusing to listen on ${host}: it is not loopback; add --expose (or ${HTTP_ENV.expose}=1) if you really mean it (tokens stay required)`,
    );
  }
  if ((host === "0.0.0.0" || host === "::") && allowedHosts.length === 0) {
    throw new ConfigError(
      `listening on ${host} needs --allowed-host NAME (or ${HTTP_ENV.allowedHosts}=NAME,…) for each name clients use to reach it (requests with any other Host header are refused)`,
    );
  }

  const rootSrc = pick(flags.root, "--root", env, HTTP_ENV.root);
  const root = directory(rootSrc ?? { name: "the working directory", value: process.cwd() }, rootSrc?.value ?? process.cwd());

  const allowRoots: string[] = [];
  if (flags["allow-root"]?.length) {
    for (const d of flags["allow-root"]) allowRoots.push(directory({ name: "--allow-root", value: d }, d));
  } else {
    const src = pick(undefined, "", env, HTTP_ENV.allowRoots);
    if (src) for (const d of src.value.split(":")) if (d !== "") allowRoots.push(directory({ name: HTTP_ENV.allowRoots, value: d }, d));
  }

  let origins: TokenOrigins;
  let given: GivenTokens;
  try {
    origins = tokenOrigins(env);
    given = readGivenTokens(origins);
  } catch (e) {
    if (e instanceof TokenEnvError) throw new ConfigError(e.message);
    throw e;
  }
  const rotateTokens = flags["rotate-tokens"] === true;
  if (rotateTokens && given.pair) {
    throw new ConfigError(`--rotate-tokens mints new tokens in place of those kept in .longrun/http.json; these come from ${origins.host!.variable} and ${origins.agent!.variable}: change them there`);
  }

  return { root, host, port, allowRoots, expose, allowedHosts, maxRoots, logFormat, tokenOrigins: origins, given, rotateTokens, loginLink };
}

/** A switch: its flag when given, else its variable (1, true, yes, on; or 0, false, no, off). */
function onOff(flag: boolean | undefined, env: EnvMap, envName: string): boolean {
  if (flag === true) return true;
  const src = pick(undefined, "", env, envName);
  if (!src) return false;
  const v = src.value.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(v)) return true;
  if (!["0", "false", "no", "off"].includes(v)) throw bad(src, "1, true, yes or on (or 0, false, no, off)");
  return false;
}
