/**
 * Bearer tokens for the HTTP API: one for the host side, one for the agent side, and an optional
 * read-only one for `/metrics`. Given by environment or by files it names (token_files.ts: then
 * not written anywhere), or kept in a 0600 file under the root's `.longrun/` (random at the first
 * start, the same after a restart, new with `--rotate-tokens`). Compared in constant time over
 * fixed-size buffers of length and bytes (so lengths leak nothing either), without hashing each
 * request; the set in force can be swapped while serving (LiveTokens), the old tokens then
 * failing at once.
 */
import { Buffer } from "node:buffer";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import type { Side } from "../rpc/method.ts";
import { writeFileAtomic } from "../store/atomic.ts";

export interface Tokens {
  host: string;
  agent: string;
  /** Opens `GET /metrics` and nothing else (none: only the host token does). */
  metrics?: string | null;
}

/** What a bearer token may speak for: a side, or reading the metrics. */
export type Credential = Side | "metrics";

export const TOKEN_ENV = { host: "LONGRUN_HOST_TOKEN", agent: "LONGRUN_AGENT_TOKEN", metrics: "LONGRUN_METRICS_TOKEN" } as const;

/** What a given token must be: RFC 6750's b64token (what fits a Bearer header as is). */
export const TOKEN_RULES = {
  min: 16,
  max: 1024,
  pattern: /^[A-Za-z0-9\-._~+/]+=*$/,
  text: "16 to 1024 characters of A-Z a-z 0-9 - . _ ~ + / (= only at the end)",
} as const;

/** A given token that breaks the rules, or a token file that cannot be read; the message names the variable, never the value. */
export class TokenEnvError extends Error {
  override name = "TokenEnvError";
}

export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Why `value` cannot be a token (a phrase about `name`, never quoting the value), or null. */
export function tokenProblem(name: string, value: string): string | null {
  if (value.length < TOKEN_RULES.min || value.length > TOKEN_RULES.max) return `${name} is ${value.length} characters long`;
  if (!TOKEN_RULES.pattern.test(value)) return `${name} has a character outside that set (a space, a quote, a non-ASCII letter, …)`;
  return null;
}

/** The rule every error about the host and agent tokens states first. */
export const PAIR_RULE = `${TOKEN_ENV.host} and ${TOKEN_ENV.agent} (each or its _FILE) must both be set, differ, and each be ${TOKEN_RULES.text}`;

/**
 * Bytes a packed token takes: its length (2 bytes), then its bytes zero-padded to one of two
 * fixed sizes, the small one when every expected token fits it (random ones, 43 characters, do).
 * Every comparison runs over the same bytes whatever the given token; the size says no more
 * than whether the expected tokens are longer than 64 characters.
 */
const ROOM = { small: 2 + 64, large: 2 + TOKEN_RULES.max } as const;

/** Length marks of strings that cannot be tokens: one for an expected token, another for a given one, so two such never match. */
const NOT_A_TOKEN = { expected: 0xfffe, given: 0xffff } as const;

/**
 * `token`'s length and bytes into `into` (see ROOM). A string that cannot be a token here (longer
 * than the room, or a character outside TOKEN_RULES, which random tokens keep to as well) packs
 * as a length no token has: it then differs from every token, by the same comparison.
 */
function pack(token: string, into: Buffer, side: keyof typeof NOT_A_TOKEN): Buffer {
  into.fill(0);
  if (token.length > into.length - 2 || !TOKEN_RULES.pattern.test(token)) into.writeUInt16BE(NOT_A_TOKEN[side], 0);
  else {
    into.writeUInt16BE(token.length, 0);
    into.write(token, 2, "latin1"); // ASCII only, by the pattern: one byte a character
  }
  return into;
}

/**
 * A checker that says what a bearer token speaks for, or null. The expected tokens are packed
 * once, here (length and bytes, padded to a fixed size: ROOM; no metrics token packs as one no
 * given string matches); each request packs the given token into one buffer and compares it with
 * all three in constant time (every comparison always runs, over the same number of bytes
 * whatever the lengths), with no hash per request.
 */
export function credentialChecker(tokens: Tokens): (authorization: string | undefined | null) => Credential | null {
  const metricsToken = tokens.metrics ?? "";
  const room = Math.max(tokens.host.length, tokens.agent.length, metricsToken.length) <= ROOM.small - 2 ? ROOM.small : ROOM.large;
  const host = pack(tokens.host, Buffer.alloc(room), "expected");
  const agent = pack(tokens.agent, Buffer.alloc(room), "expected");
  const metrics = pack(metricsToken, Buffer.alloc(room), "expected");
  const given = Buffer.alloc(room);
  return (authorization) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    pack(m ? m[1]! : "", given, "given");
    const isHost = timingSafeEqual(given, host);
    const isAgent = timingSafeEqual(given, agent);
    const isMetrics = timingSafeEqual(given, metrics);
    if (!m) return null;
    return isHost ? "host" : isAgent ? "agent" : isMetrics ? "metrics" : null;
  };
}

/** Which side a bearer token speaks for, or null (the metrics token speaks for neither). */
export function sideChecker(tokens: Tokens): (authorization: string | undefined | null) => Side | null {
  const credential = credentialChecker(tokens);
  return (authorization) => {
    const c = credential(authorization);
    return c === "metrics" ? null : c;
  };
}

/**
 * The tokens in force, swappable while serving (a rotation): from the next request on only the
 * new set is accepted.
 */
export class LiveTokens {
  #tokens!: Tokens;
  #check!: (authorization: string | undefined | null) => Credential | null;

  constructor(tokens: Tokens) {
    this.set(tokens);
  }

  set(tokens: Tokens): void {
    this.#check = credentialChecker(tokens);
    this.#tokens = tokens;
  }

  get current(): Tokens {
    return this.#tokens;
  }

  credentialOf(authorization: string | undefined | null): Credential | null {
    return this.#check(authorization);
  }

  sideOf(authorization: string | undefined | null): Side | null {
    const c = this.#check(authorization);
    return c === "metrics" ? null : c;
  }
}

export function tokenFilePath(longrunDir: string): string {
  return join(longrunDir, "http.json");
}

/** Where the tokens in force came from, as `http.json` and the start line name them. */
export interface TokenOriginInfo {
  /** The variable given for each credential (`LONGRUN_HOST_TOKEN` or `LONGRUN_HOST_TOKEN_FILE`, …), and the file when one. */
  given: Partial<Record<Credential, { variable: string; file?: string }>>;
}

/**
 * Writes where the server listens and its tokens, mode 0600. Given tokens (environment or
 * files) are not written: the file names the variables (or files) instead, and clients read them
 * there (`tokens_from_env`).
 */
export function writeTokenFile(path: string, info: { url: string; tokens: Tokens; origins: TokenOriginInfo }): void {
  const { given } = info.origins;
  const named = (c: Credential) => {
    const g = given[c];
    if (!g) return {};
    return g.file !== undefined ? { [`${c}_token_file`]: g.file } : { [`${c}_token_env`]: g.variable };
  };
  const pairGiven = given.host !== undefined;
  const body = {
    url: info.url,
    pid: process.pid,
    started_at: new Date().toISOString(),
    ...(pairGiven ? { tokens_from_env: true, ...named("host"), ...named("agent") } : { host_token: info.tokens.host, agent_token: info.tokens.agent }),
    ...(given.metrics ? named("metrics") : !pairGiven && info.tokens.metrics ? { metrics_token: info.tokens.metrics } : {}),
  };
  writeFileAtomic(path, JSON.stringify(body, null, 2) + "\n", { mode: 0o600 });
}

/**
 * The tokens a previous start kept in `path`, to keep them across a restart: only from a regular
 * file (not a link) of ours, readable by us alone, whose tokens keep the rules and differ. Else
 * why not (null: there is no file).
 */
export function keptTokens(path: string): { tokens: Tokens } | { why: string } | null {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return null;
  }
  if (!st.isFile()) return { why: `${path} is not a regular file` };
  const uid = typeof process.getuid === "function" ? process.getuid() : null;
  if (uid === null) return { why: "file modes cannot be checked on this system" };
  if (st.uid !== uid) return { why: `${path} belongs to uid ${st.uid}, not to this process (${uid})` };
  if ((st.mode & 0o077) !== 0) return { why: `${path} has mode ${(st.mode & 0o777).toString(8)} (0600 needed)` };
  let text: string;
  try {
    text = readOwnFile(path, st.ino);
  } catch {
    return { why: `${path} changed while it was read` };
  }
  let info: Record<string, unknown>;
  try {
    info = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { why: `${path} is not valid JSON` };
  }
  const { host_token: host, agent_token: agent, metrics_token: metrics } = info;
  if (typeof host !== "string" || typeof agent !== "string") return { why: `${path} holds no tokens` };
  if (tokenProblem("host_token", host) || tokenProblem("agent_token", agent) || host === agent) return { why: `${path} holds tokens that break the rules` };
  const keepMetrics = typeof metrics === "string" && !tokenProblem("metrics_token", metrics) && metrics !== host && metrics !== agent;
  return { tokens: { host, agent, metrics: keepMetrics ? metrics : null } };
}

/** The most bytes http.json is read up to (it holds a URL, a pid, times and three tokens). */
const MAX_KEPT_FILE_BYTES = 64 * 1024;

/**
 * The content of the regular file at `path` that is still the one looked at (`ino`): opened
 * without following a link or blocking (a FIFO swapped in after the look), then checked again on
 * the open descriptor. Throws otherwise.
 */
function readOwnFile(path: string, ino: number): string {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.ino !== ino || st.size > MAX_KEPT_FILE_BYTES) throw new Error("not the file looked at");
    const buf = Buffer.alloc(st.size);
    let n = 0;
    for (let r; n < buf.length && (r = readSync(fd, buf, n, buf.length - n, null)) > 0; ) n += r;
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * On a clean stop: the file stays (its tokens are the next start's) without this process's pid,
 * with `stopped_at`, if it is still this process's (another server may have started on the root
 * since).
 */
export function markTokenFileStopped(path: string): void {
  try {
    const st = lstatSync(path);
    if (!st.isFile()) return;
    const info = JSON.parse(readOwnFile(path, st.ino)) as Record<string, unknown>;
    if (info.pid !== process.pid) return;
    delete info.pid;
    info.stopped_at = new Date().toISOString();
    writeFileAtomic(path, JSON.stringify(info, null, 2) + "\n", { mode: 0o600 });
  } catch {
    // gone already, or not ours to judge
  }
}
