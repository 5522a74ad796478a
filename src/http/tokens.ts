/**
 * Bearer tokens for the HTTP API: one for the host side, one for the agent side. Random per
 * start (or given by environment for containers), written to a 0600 file under the root's
 * `.longrun/`, compared in constant time over SHA-256 digests (so lengths leak nothing either).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { join } from "node:path";
import type { Side } from "../rpc/method.ts";
import { writeFileAtomic } from "../store/atomic.ts";

export interface Tokens {
  host: string;
  agent: string;
}

export const TOKEN_ENV = { host: "LONGRUN_HOST_TOKEN", agent: "LONGRUN_AGENT_TOKEN" } as const;

export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Tokens from the environment when both are set (at least 16 characters each), else new random ones. */
export function tokensFrom(env: Record<string, string | undefined>): { tokens: Tokens; fromEnv: boolean } {
  const host = env[TOKEN_ENV.host];
  const agent = env[TOKEN_ENV.agent];
  if (host !== undefined || agent !== undefined) {
    if (!host || !agent || host.length < 16 || agent.length < 16 || host === agent) {
      throw new Error(`${TOKEN_ENV.host} and ${TOKEN_ENV.agent} must both be set, differ, and be at least 16 characters`);
    }
    return { tokens: { host, agent }, fromEnv: true };
  }
  return { tokens: { host: newToken(), agent: newToken() }, fromEnv: false };
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * A checker that says which side a bearer token speaks for, or null. The expected tokens are
 * hashed once, here; each request hashes the given token once and compares it with both digests
 * in constant time (both comparisons always run).
 */
export function sideChecker(tokens: Tokens): (authorization: string | undefined | null) => Side | null {
  const host = digest(tokens.host);
  const agent = digest(tokens.agent);
  return (authorization) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    const given = digest(m ? m[1]! : "");
    const isHost = timingSafeEqual(given, host);
    const isAgent = timingSafeEqual(given, agent);
    if (!m) return null;
    return isHost ? "host" : isAgent ? "agent" : null;
  };
}

export function tokenFilePath(longrunDir: string): string {
  return join(longrunDir, "http.json");
}

/** Writes where the server listens and (unless they came from the environment) its tokens, mode 0600. */
export function writeTokenFile(path: string, info: { url: string; tokens: Tokens; fromEnv: boolean }): void {
  const body = {
    url: info.url,
    pid: process.pid,
    started_at: new Date().toISOString(),
    ...(info.fromEnv ? { tokens_from_env: true } : { host_token: info.tokens.host, agent_token: info.tokens.agent }),
  };
  writeFileAtomic(path, JSON.stringify(body, null, 2) + "\n", { mode: 0o600 });
}
