/**
 * Tokens given to `longrun http` by environment: each credential's variable holds the token
 * (`LONGRUN_HOST_TOKEN`) or names a file holding it (`LONGRUN_HOST_TOKEN_FILE`, as container
 * secrets are mounted; the content less one trailing newline). Token files are read again on
 * demand (SIGHUP) and when one changes (its inode, size or times, looked at once a second): a
 * good new set replaces the old at once, a bad one keeps the old and is reported once.
 */
import { Buffer } from "node:buffer";
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
import { type Credential, PAIR_RULE, TOKEN_ENV, TOKEN_RULES, TokenEnvError, type TokenOriginInfo, tokenProblem } from "./tokens.ts";

export const TOKEN_FILE_ENV = { host: "LONGRUN_HOST_TOKEN_FILE", agent: "LONGRUN_AGENT_TOKEN_FILE", metrics: "LONGRUN_METRICS_TOKEN_FILE" } as const;

const CREDENTIALS = ["host", "agent", "metrics"] as const;

/** Where one credential comes from: a value in the variable, or a file it names. */
export interface TokenOrigin {
  variable: string;
  value?: string;
  file?: string;
}

export type TokenOrigins = Partial<Record<Credential, TokenOrigin>>;

/** The tokens given by environment: the host and agent pair (both or neither) and the metrics token, each possibly absent. */
export interface GivenTokens {
  pair: { host: string; agent: string } | null;
  metrics: string | null;
  /** The token files' inodes, sizes and times, looked at before they were read (a change after that is seen by the watch). */
  seen: string;
}

type EnvMap = Record<string, string | undefined>;

/**
 * Which variable gives each credential (an empty variable counts as unset). Throws
 * TokenEnvError when a credential is given twice (the value and a file) or only one of host and
 * agent is given.
 */
export function tokenOrigins(env: EnvMap): TokenOrigins {
  const origins: TokenOrigins = {};
  for (const c of CREDENTIALS) {
    const value = env[TOKEN_ENV[c]] || undefined;
    const file = env[TOKEN_FILE_ENV[c]] || undefined;
    if (value !== undefined && file !== undefined) throw new TokenEnvError(`${TOKEN_ENV[c]} and ${TOKEN_FILE_ENV[c]} are both set: set one of them`);
    if (value !== undefined) origins[c] = { variable: TOKEN_ENV[c], value };
    else if (file !== undefined) origins[c] = { variable: TOKEN_FILE_ENV[c], file };
  }
  if ((origins.host === undefined) !== (origins.agent === undefined)) {
    const [set, missing] = origins.host === undefined ? [origins.agent!.variable, "host"] : [origins.host.variable, "agent"];
    throw new TokenEnvError(`${PAIR_RULE}: ${set} is set but the ${missing} token is not (${TOKEN_ENV[missing as "host"]} or ${TOKEN_FILE_ENV[missing as "host"]}; set neither for random tokens kept in .longrun/http.json)`);
  }
  return origins;
}

/** The most bytes a token file may hold (a token and a line end). */
const MAX_FILE_BYTES = TOKEN_RULES.max + 2;

/** A token file's content less one trailing newline, or TokenEnvError naming the variable and the file (never the content). */
export function readTokenFile(variable: string, file: string): string {
  const cannot = (why: string) => new TokenEnvError(`${variable}: cannot read the token file ${JSON.stringify(file)}: ${why}`);
  let fd: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw cannot("it is not a regular file");
    if (st.size > MAX_FILE_BYTES) throw cannot(`it holds ${st.size} bytes (a token is at most ${TOKEN_RULES.max} characters)`);
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    if (!fstatSync(fd).isFile()) {
      closeSync(fd); // swapped for something else since the look
      throw cannot("it is not a regular file");
    }
  } catch (e) {
    if (e instanceof TokenEnvError) throw e;
    throw cannot(String((e as NodeJS.ErrnoException)?.code ?? (e as Error)?.message ?? e));
  }
  const buf = Buffer.alloc(MAX_FILE_BYTES + 1);
  let n = 0;
  try {
    for (let r; n < buf.length && (r = readSync(fd, buf, n, buf.length - n, null)) > 0; ) n += r;
  } catch (e) {
    throw cannot(String((e as NodeJS.ErrnoException)?.code ?? e));
  } finally {
    closeSync(fd);
  }
  if (n > MAX_FILE_BYTES) throw cannot(`it holds more than ${MAX_FILE_BYTES} bytes`);
  const text = buf.subarray(0, n).toString("latin1").replace(/\r?\n$/, "");
  if (text === "") throw new TokenEnvError(`${variable} names an empty file (${JSON.stringify(file)}): write the token into it`);
  return text;
}

/** The given tokens, read and checked against the rules (each token, and all different). Throws TokenEnvError naming the variable. */
export function readGivenTokens(origins: TokenOrigins): GivenTokens {
  const seen = lookAt(tokenFiles(origins));
  const value = (c: Credential): string | null => {
    const o = origins[c];
    if (!o) return null;
    const v = o.file !== undefined ? readTokenFile(o.variable, o.file) : o.value!;
    const p = tokenProblem(o.file !== undefined ? `the content of ${o.variable}'s file` : o.variable, v);
    if (p) throw new TokenEnvError(c === "metrics" ? `${o.variable} must be ${TOKEN_RULES.text}: ${p}` : `${PAIR_RULE}: ${p}`);
    return v;
  };
  const host = value("host");
  const agent = value("agent");
  const metrics = value("metrics");
  if (host !== null && host === agent) throw new TokenEnvError(`${PAIR_RULE}: they are the same (the host token grants leases, the agent token must not)`);
  if (metrics !== null && (metrics === host || metrics === agent)) {
    throw new TokenEnvError(`${origins.metrics!.variable} must differ from the host and agent tokens (it opens /metrics and nothing else)`);
  }
  return { pair: host !== null && agent !== null ? { host, agent } : null, metrics, seen };
}

function tokenFiles(origins: TokenOrigins): string[] {
  return CREDENTIALS.flatMap((c) => (origins[c]?.file !== undefined ? [origins[c]!.file!] : []));
}

/** What tells a file changed (device, inode, size, times), for each file; an error code for one that cannot be looked at. */
function lookAt(files: string[]): string {
  return files
    .map((f) => {
      try {
        const s = statSync(f, { bigint: true });
        return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
      } catch (e) {
        return String((e as NodeJS.ErrnoException)?.code ?? "unreadable");
      }
    })
    .join("|");
}

/** For http.json and the start line: the variable (and file) each given credential came from. */
export function originInfo(origins: TokenOrigins): TokenOriginInfo {
  const given: TokenOriginInfo["given"] = {};
  for (const c of CREDENTIALS) {
    const o = origins[c];
    if (o) given[c] = o.file !== undefined ? { variable: o.variable, file: o.file } : { variable: o.variable };
  }
  return { given };
}

export interface TokenFileWatch {
  /** Reads the token files again now (SIGHUP). */
  reload(why: string): void;
  stop(): void;
}

/**
 * Watches the token files among `origins` (none: a watch that does nothing) from the state
 * `given` was read in: when one changes, or on `reload`, reads them all again; a good set goes
 * to `onChange`, a bad one's message to `onError` (once per change: the old tokens stay in force).
 */
export function watchTokenFiles(
  origins: TokenOrigins,
  given: GivenTokens,
  handlers: { onChange: (given: GivenTokens, why: string) => void; onError: (message: string) => void },
  intervalMs = 1000,
): TokenFileWatch {
  const files = tokenFiles(origins);
  let seen = given.seen;
  const reload = (why: string) => {
    seen = lookAt(files);
    let given: GivenTokens;
    try {
      given = readGivenTokens(origins);
    } catch (e) {
      handlers.onError(e instanceof TokenEnvError ? e.message : String(e));
      return;
    }
    handlers.onChange(given, why);
  };
  if (files.length === 0) return { reload: (why) => reload(why), stop: () => {} };
  const timer = setInterval(() => {
    if (lookAt(files) !== seen) reload("a token file changed");
  }, intervalMs);
  (timer as { unref?: () => void }).unref?.();
  return { reload, stop: () => clearInterval(timer) };
}
