/**
 * Bearer tokens for the HTTP API: one for the host side, one for the agent side. Random per
 * start and written to a 0600 file under the root's `.longrun/`, or given by environment for
 * containers (then not written anywhere); compared in constant time over fixed-size buffers of
 * length and bytes (so lengths leak nothing either), without hashing each request.
 */
import { Buffer } from "node:buffer";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { Side } from "../rpc/method.ts";
import { writeFileAtomic } from "../store/atomic.ts";

export interface Tokens {
  host: string;
  agent: string;
}

export const TOKEN_ENV = { host: "LONGRUN_HOST_TOKEN", agent: "LONGRUN_AGENT_TOKEN" } as const;

/** What a token given by environment must be: RFC 6750's b64token (what fits a Bearer header as is). */
export const TOKEN_RULES = {
  min: 16,
  max: 1024,
  pattern: /^[A-Za-z0-9\-._~+/]+=*$/,
  text: "16 to 1024 characters of A-Z a-z 0-9 - . _ ~ + / (= only at the end)",
} as const;

/** A token given by environment that breaks the rules; the message names the variable, never the value. */
export class TokenEnvError extends Error {
  override name = "TokenEnvError";
}

export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * Tokens from the environment when set (both, see TOKEN_RULES), else new random ones. An empty
 * variable counts as unset. Throws TokenEnvError, naming the variable, when the rules are broken.
 */
export function tokensFrom(env: Record<string, string | undefined>): { tokens: Tokens; fromEnv: boolean } {
  const host = env[TOKEN_ENV.host] || undefined;
  const agent = env[TOKEN_ENV.agent] || undefined;
  if (host === undefined && agent === undefined) return { tokens: { host: newToken(), agent: newToken() }, fromEnv: false };
  const refuse = (problem: string) =>
    new TokenEnvError(`${TOKEN_ENV.host} and ${TOKEN_ENV.agent} must both be set, differ, and each be ${TOKEN_RULES.text}: ${problem}`);
  if (host === undefined || agent === undefined) {
    const [set, missing] = host === undefined ? [TOKEN_ENV.agent, TOKEN_ENV.host] : [TOKEN_ENV.host, TOKEN_ENV.agent];
    throw refuse(`${set} is set but ${missing} is not (set neither for random tokens written to .longrun/http.json)`);
  }
  for (const [name, value] of [[TOKEN_ENV.host, host], [TOKEN_ENV.agent, agent]] as const) {
    if (value.length < TOKEN_RULES.min || value.length > TOKEN_RULES.max) throw refuse(`${name} is ${value.length} characters long`);
    if (!TOKEN_RULES.pattern.test(value)) throw refuse(`${name} has a character outside that set (a space, a quote, a non-ASCII letter, …)`);
  }
  if (host === agent) throw refuse("they are the same (the host token grants leases, the agent token must not)");
  return { tokens: { host, agent }, fromEnv: true };
}

/**
 * Bytes a packed token takes: its length (2 bytes), then its bytes zero-padded to one of two
 * fixed sizes, the small one when both expected tokens fit it (random ones, 43 characters, do).
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
 * A checker that says which side a bearer token speaks for, or null. The expected tokens are
 * packed once, here (length and bytes, padded to a fixed size: ROOM); each request packs
 * the given token into one buffer and compares it with both in constant time (both comparisons
 * always run, over the same number of bytes whatever the lengths), with no hash per request.
 */
export function sideChecker(tokens: Tokens): (authorization: string | undefined | null) => Side | null {
  const room = Math.max(tokens.host.length, tokens.agent.length) <= ROOM.small - 2 ? ROOM.small : ROOM.large;
  const host = pack(tokens.host, Buffer.alloc(room), "expected");
  const agent = pack(tokens.agent, Buffer.alloc(room), "expected");
  const given = Buffer.alloc(room);
  return (authorization) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    pack(m ? m[1]! : "", given, "given");
    const isHost = timingSafeEqual(given, host);
    const isAgent = timingSafeEqual(given, agent);
    if (!m) return null;
    return isHost ? "host" : isAgent ? "agent" : null;
  };
}

export function tokenFilePath(longrunDir: string): string {
  return join(longrunDir, "http.json");
}

/**
 * Writes where the server listens and its tokens, mode 0600. Tokens given by environment are not
 * written: the file names the variables instead (`tokens_from_env`), and clients read them there.
 */
export function writeTokenFile(path: string, info: { url: string; tokens: Tokens; fromEnv: boolean }): void {
  const body = {
    url: info.url,
    pid: process.pid,
    started_at: new Date().toISOString(),
    ...(info.fromEnv ? { tokens_from_env: true, host_token_env: TOKEN_ENV.host, agent_token_env: TOKEN_ENV.agent } : { host_token: info.tokens.host, agent_token: info.tokens.agent }),
  };
  writeFileAtomic(path, JSON.stringify(body, null, 2) + "\n", { mode: 0o600 });
}

/** Removes the token file if this process wrote it (another server may have started on the root since). */
export function removeTokenFile(path: string): void {
  try {
    const info = JSON.parse(readFileSync(path, "utf8")) as { pid?: unknown };
    if (info.pid === process.pid) unlinkSync(path);
  } catch {
    // gone already, or not ours to judge
  }
}
