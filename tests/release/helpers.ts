/** Helpers for the release tests: mounts (root only), the stdio smoke, ELF/Mach-O/PE facts, a local HTTP server. */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { hostTarget, type Target } from "../../scripts/targets.ts";
import { canMount, REPO, removeDir, tempDir } from "../support/helpers.ts";
import { Server } from "../support/server.ts";

export const BUILD_DIR = join(REPO, "dist", "build");
export const RELEASE_DIR = join(REPO, "dist", "release");
export const VERSION_LINE = /^longrun (\d+\.\d+\.\d+\S*) \(([a-z0-9-]+), commit ([0-9a-f]{12}(?:\+dirty)?|unknown)\)$/;

/** The environment a child gets for these tests: no inherited cache or native settings. */
export function cleanEnv(over: Record<string, string>): Record<string, string> {
  return { XDG_CACHE_HOME: "", LONGRUN_NATIVE_DIR: "", ...over };
}

/** Whether this process may mount (root with CAP_SYS_ADMIN), probed once with a tiny tmpfs. */
export const CAN_MOUNT: boolean = canMount();

/** Mounts a tmpfs at `dir` (made if missing) with `options` (e.g. "ro", "noexec"). */
export function mountTmpfs(dir: string, options: string): void {
  mkdirSync(dir, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=64m,${options}`, "tmpfs", dir], { stdio: "ignore" });
}

/** Makes `dir` a read-only view of itself (a bind mount remounted read-only). */
export function bindReadOnly(dir: string): void {
  execFileSync("mount", ["--bind", dir, dir], { stdio: "ignore" });
  execFileSync("mount", ["-o", "remount,bind,ro", dir], { stdio: "ignore" });
}

/** Unmounts everything mounted at or under `dir`, deepest first; then removes the directory. */
export function unmountAll(dir: string): void {
  const mounts = readFileSync("/proc/self/mounts", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[1]?.replace(/\\040/g, " "))
    .filter((m): m is string => !!m && (m === dir || m.startsWith(dir + "/")))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) spawnSync("umount", ["-l", m], { stdio: "ignore" });
  removeDir(dir);
}

/**
 * The stdio round trip a release must pass: task.start, memory.save, memory.search finds what
 * was saved (the search runs in the memory Worker, so libSQL is loaded on two threads). Returns
 * the server's pid's memfd links seen before it exits (Linux).
 */
export async function stdioSmoke(argv: string[], root: string, env: Record<string, string>, deadlineMs = 15_000): Promise<{ memfds: string[]; stderr: string }> {
  const s = new Server({ name: "release smoke", argv }, ["serve", "--root", root], env);
  try {
    const started = await answer(s, "task.start", { description: "release smoke: the native module loads" }, deadlineMs);
    assert.equal(started.task.access_mode, "read_only");
    const saved = await answer(s, "memory.save", { type: "note", title: "smoke note", content: "saved by the release smoke" }, deadlineMs);
    const found = await answer(s, "memory.search", { query: "smoke" }, deadlineMs);
    assert.ok(found.hits.some((h: { id: string }) => h.id === saved.id), JSON.stringify(found));
    const memfds: string[] = [];
    try {
      for (const fd of readdirSync(`/proc/${s.child.pid}/fd`)) {
        try {
          const link = readlinkSync(`/proc/${s.child.pid}/fd/${fd}`);
          if (link.startsWith("/memfd:longrun-libsql")) memfds.push(link);
        } catch {
          // closed meanwhile
        }
      }
    } catch {
      // no /proc here, or not ours to read (qemu)
    }
    const { code } = await s.close();
    assert.equal(code, 0, s.stderr);
    return { memfds, stderr: s.stderr };
  } finally {
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
  }
}

async function answer(s: Server, method: string, params: Record<string, unknown>, deadlineMs: number): Promise<Record<string, any>> {
  const id = `${method}-${Math.random().toString(36).slice(2)}`;
  await s.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  const a = await s.answer(id, deadlineMs);
  if (a.error) throw new Error(`${method} failed: ${JSON.stringify(a.error)} (stderr: ${s.stderr})`);
  return a.result as Record<string, any>;
}

/** The program interpreter an ELF executable asks for (PT_INTERP), or null. */
export function elfInterpreter(bytes: Uint8Array): string | null {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  assert.equal(b.readUInt32BE(0), 0x7f454c46, "an ELF file");
  assert.equal(b[4], 2, "64-bit");
  const phoff = Number(b.readBigUInt64LE(0x20));
  const phentsize = b.readUInt16LE(0x36);
  const phnum = b.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) {
    const p = phoff + i * phentsize;
    if (b.readUInt32LE(p) === 3) {
      const off = Number(b.readBigUInt64LE(p + 8));
      const size = Number(b.readBigUInt64LE(p + 32));
      return b.subarray(off, off + size).toString("latin1").replace(/\0+$/, "");
    }
  }
  return null;
}

/** ELF e_machine: 0x3e x86-64, 0xb7 AArch64. */
export function elfMachine(bytes: Uint8Array): number {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).readUInt16LE(0x12);
}

/** A 64-bit Mach-O's CPU type and load command ids. */
export function machO(bytes: Uint8Array): { cpu: number; commands: number[] } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  assert.equal(b.readUInt32LE(0), 0xfeedfacf, "a 64-bit Mach-O file");
  const ncmds = b.readUInt32LE(16);
  const commands: number[] = [];
  let off = 32;
  for (let i = 0; i < ncmds; i++) {
    commands.push(b.readUInt32LE(off));
    off += b.readUInt32LE(off + 4);
  }
  return { cpu: b.readUInt32LE(4), commands };
}

/** A PE file's machine (0x8664 x64) and subsystem (3: console). */
export function peHeader(bytes: Uint8Array): { machine: number; subsystem: number } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  assert.equal(b.toString("latin1", 0, 2), "MZ");
  const pe = b.readUInt32LE(0x3c);
  assert.equal(b.toString("latin1", pe, pe + 4), "PE\0\0");
  return { machine: b.readUInt16LE(pe + 4), subsystem: b.readUInt16LE(pe + 24 + 68) };
}

/** Finds an executable on PATH (or the usual system directories), or null. */
export function which(name: string): string | null {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

/** What a LocalServer answers at a path: a file on disk, or a body with its content type. */
export type Route = { file: string } | { body: string; type: string };

/**
 * An HTTP server on 127.0.0.1 answering GET from `routes` (keys are decoded paths, so npm's
 * `/@scope%2fname` is `/@scope/name`), 404 otherwise; records every path asked for, in order.
 */
export class LocalServer {
  readonly routes = new Map<string, Route>();
  readonly asked: string[] = [];
  url = "";
  #server: HttpServer | undefined;

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      let path: string;
      try {
        path = decodeURIComponent((req.url ?? "/").split("?")[0]!);
      } catch {
        res.writeHead(400).end("bad path");
        return;
      }
      this.asked.push(path);
      const route = req.method === "GET" || req.method === "HEAD" ? this.routes.get(path) : undefined;
      if (!route) {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found");
        return;
      }
      if ("body" in route) {
        res.writeHead(200, { "content-type": route.type, "content-length": String(Buffer.byteLength(route.body)) }).end(req.method === "HEAD" ? undefined : route.body);
        return;
      }
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(statSync(route.file).size) });
      if (req.method === "HEAD") res.end();
      else createReadStream(route.file).pipe(res);
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.#server) return resolve();
      this.#server.closeAllConnections?.();
      this.#server.close(() => resolve());
    });
  }
}

/**
 * argv that runs `argv` with exactly `env` (through `env -i`): a client such as npm or pip must
 * not see the npm_config_* / PIP_* settings of whoever runs the tests.
 */
export function withOnlyEnv(env: Record<string, string>, argv: string[]): string[] {
  return ["env", "-i", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv];
}

/** The release target this machine runs natively (scripts/targets.ts), or null when it is none. */
export const HOST_TARGET: Target | null = (() => {
  try {
    return hostTarget();
  } catch {
    return null;
  }
})();
