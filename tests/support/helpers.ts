/** Shared test helpers: temp roots, child processes of the same runtime, polling with a deadline. */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = realpathSync(fileURLToPath(new URL("../..", import.meta.url)));
export const isDeno = typeof (globalThis as Record<string, unknown>).Deno !== "undefined";

export function tempDir(prefix = "longrun-test-"): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/** Every file and directory under `dir`, relative sorted, links not followed (empty when there is nothing): what a refused call must leave as it was. */
export function listTree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      out.push(r);
      if (e.isDirectory()) walk(join(d, e.name), r);
    }
  };
  walk(dir, "");
  return out.sort();
}

/** What else goes when a test directory is removed (a test root's own libSQL server, tests/support/sqld.ts). */
export const dirCleanups = new Map<string, () => void>();

export function removeDir(dir: string): void {
  const cleanup = dirCleanups.get(dir);
  dirCleanups.delete(dir);
  cleanup?.();
  rmSync(dir, { recursive: true, force: true });
}

/**
 * A root's command-line arguments: `--root DIR`, or, for a test root the suites put on a libSQL
 * server (tests/support/sqld.ts, `<dir>/test_store.json`), `--store URL --project KEY --state-dir DIR`.
 */
export function rootArgv(args: readonly string[]): string[] {
  const i = args.indexOf("--root");
  if (i < 0 || i + 1 >= args.length) return [...args];
  let store: { url: string; project: string } | null = null;
  try {
    store = JSON.parse(readFileSync(join(args[i + 1]!, "test_store.json"), "utf8"));
  } catch {
    return [...args];
  }
  return [...args.slice(0, i), "--store", store!.url, "--project", store!.project, "--state-dir", args[i + 1]!, ...args.slice(i + 2)];
}

/** argv that runs a TypeScript file with the runtime running the tests (bun, or deno run). */
export function scriptArgv(script: string, args: string[] = []): string[] {
  const exe = process.execPath;
  return isDeno ? [exe, "run", "-A", "--no-check", "--quiet", script, ...args] : [exe, script, ...args];
}

export interface RunResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

export function run(
  argv: string[],
  options: { env?: Record<string, string>; input?: string | Uint8Array; cwd?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, rootArgv(argv.slice(1)), {
      cwd: options.cwd ?? REPO,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

/** Polls `check` until it returns a truthy value or the deadline passes. */
export async function until<T>(check: () => T | Promise<T>, what: string, deadlineMs = 10_000): Promise<NonNullable<T>> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A hold for Worker searches (`RootOptions.testOnlySearchHold`): while armed, every search blocks
 * the memory Worker until `release()`. Deterministic where a timed block was not.
 */
export function searchHold(armed = true) {
  const buffer = new SharedArrayBuffer(4);
  const cell = new Int32Array(buffer);
  Atomics.store(cell, 0, armed ? 0 : 1);
  return {
    buffer,
    arm: () => Atomics.store(cell, 0, 0),
    release: () => {
      Atomics.store(cell, 0, 1);
      Atomics.notify(cell, 0);
    },
  };
}

/** Whether this process may mount (root with CAP_SYS_ADMIN), probed with a tiny tmpfs: tests of real file-system faults need it. */
export function canMount(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = tempDir("longrun-mount-probe-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], { stdio: "ignore" });
    execFileSync("umount", [probe], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    removeDir(probe);
  }
}

/**
 * A separate process holding a memory.db's write lock (tests/fixtures/hold_write_lock.ts), as a
 * stuck or hostile process would; resolves once it is held, to a function that kills it.
 */
export async function holdWriteLock(db: string): Promise<() => Promise<void>> {
  const argv = scriptArgv(join(REPO, "tests", "fixtures", "hold_write_lock.ts"), [db]);
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  await until(() => out.includes("held"), "the lock to be held");
  return async () => {
    child.kill("SIGKILL");
    await new Promise((r) => child.on("close", r));
  };
}
