/**
 * `longrun hook gate [--root DIR] [--idle-exit SECONDS]`: a root's resident gate. It answers the
 * per-call PreToolUse hooks of this root over `<root>/.longrun/gate.sock` (src/hooks/gate_socket.ts),
 * so a tool call pays a small program's start instead of evaluating the gate and opening SQLite.
 *
 * It keeps every guarantee of the per-call gate because it runs the very same decision
 * (src/hooks/event_run.ts) for every call, from the disk, under the caller's environment and
 * working directory: the state and the settings are read per call, as the cold path reads them (no
 * cache across calls: a path's resolution is forgotten after each), and one call is decided at a
 * time. It answers only calls of its own build about its own root, and only PreToolUse (which
 * changes nothing). A call it does not answer in time, or at all, the hook decides on its own.
 *
 * It ends by itself when idle for `--idle-exit` seconds (default 900), when its socket is removed or
 * replaced, when `.longrun/` goes, when the executable is replaced, when one call takes longer than
 * the hook's deadline (src/hooks/gate_watchdog.ts), and on SIGTERM or SIGINT.
 */
import { chmodSync, lstatSync, rmSync, statSync } from "node:fs";
import { listenUnix, unixRequest } from "../runtime/index.ts";
import { ownUrl } from "../runtime/load.ts";
import { protectedRootRefusal } from "../root/place.ts";
import { HOOK_EVENTS } from "./events.ts";
import { runEvent } from "./event_run.ts";
import type { GateAnswer, GateRequest } from "./gate_client.ts";
import { GATE_PROTOCOL, gateIdentity, gateSocketPath, stateDirProblem } from "./gate_socket.ts";
import { parseInput, rootFor } from "./hook_input.ts";
import { forgetResolved } from "./resolve.ts";
import type { GateWatchdogStart } from "./gate_watchdog.ts";

/** The largest request taken (the hook's input is at most 8 MiB; its environment besides). */
const MAX_REQUEST_BYTES = 9 * 1024 * 1024;
/** A connection that sends no full request line within this is closed. */
const READ_TIMEOUT_MS = 2_000;
/** How often the gate looks whether it should end. */
const LOOK_MS = 1_000;

export interface GateServerOptions {
  root: string;
  /** Ends after this long without a call. */
  idleExitMs: number;
  log?: (line: string) => void;
}

/** Why the gate cannot serve `root`, or null. */
function refusal(root: string): string | null {
  if (!root.startsWith("/")) return `the root must be an absolute path, got ${JSON.stringify(root)}`;
  try {
    if (!statSync(root).isDirectory()) return `${root} is not a directory`;
  } catch {
    return `${root} does not exist`;
  }
  const place = protectedRootRefusal(root);
  if (place) return place;
  const dir = stateDirProblem(root);
  if (dir) return `${dir}; the resident gate serves a root longrun has laid out (start a task, or send a prompt, first)`;
  if (gateSocketPath(root) === null) return `the socket path under ${root} is longer than a unix socket allows`;
  return null;
}

/** Puts the caller's environment in place of this process's (the gate reads process.env, and git runs under it). */
function useEnvironment(env: Record<string, string>): void {
  for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
  for (const [k, v] of Object.entries(env)) if (process.env[k] !== v) process.env[k] = v;
}

function isRequest(r: unknown): r is GateRequest {
  const q = r as GateRequest;
  return typeof r === "object" && r !== null && typeof q.id === "string" && q.event === "PreToolUse" && typeof q.root === "string" && (q.rootFlag === null || typeof q.rootFlag === "string") &&
    typeof q.env === "object" && q.env !== null && Object.values(q.env).every((v) => typeof v === "string") && typeof q.cwd === "string" && typeof q.input === "string";
}

export async function runGateServer(o: GateServerOptions): Promise<number> {
  const log = o.log ?? ((line: string) => process.stderr.write(line + "\n"));
  const id = gateIdentity();
  if (id === null) {
    log("longrun: the resident gate runs from the compiled executable only (dist/longrun); the hook decides on its own here");
    return 2;
  }
  const root = o.root.replace(/\/+$/, "") || "/";
  const refused = refusal(root);
  if (refused) {
    log(`longrun: no resident gate: ${refused}`);
    return 2;
  }
  const path = gateSocketPath(root)!;
  const existing = existingSocket(path);
  if (existing === "other") {
    log(`longrun: no resident gate: ${path} exists and is not a socket; remove it`);
    return 2;
  }
  if (existing === "socket") {
    const pong = await unixRequest(path, JSON.stringify({ v: GATE_PROTOCOL, ping: true }), 1_000, 4096);
    if (pong !== null) {
      log(`longrun: a resident gate already answers on ${path}`);
      return 0;
    }
    rmSync(path, { force: true }); // a gate that ended without removing it
  }

  const before = process.umask(0o077);
  let listener;
  try {
    listener = await listenUnix(path, { answer: (line) => answer(line), readTimeoutMs: READ_TIMEOUT_MS, maxRequestBytes: MAX_REQUEST_BYTES });
  } finally {
    process.umask(before);
  }
  chmodSync(path, 0o600);
  const ino = lstatSync(path).ino;
  // a gate lives long: JavaScriptCore's normal tier-up policy (the hook's executable starts with a lazier one)
  (globalThis as { Bun?: { unsafe?: { setJITPolicy?: (scale: number) => void } } }).Bun?.unsafe?.setJITPolicy?.(1);

  const busy = new SharedArrayBuffer(8);
  const since = new Float64Array(busy);
  const watchdog = new Worker(ownUrl("hooks/gate_watchdog"), { type: "module" }) as Worker & { unref?: () => void };
  watchdog.unref?.();
  watchdog.postMessage({ busy, limitMs: HOOK_EVENTS.PreToolUse.deadlineMs, socket: path, ino } satisfies GateWatchdogStart);

  let last = Date.now();
  /** Calls answered so far (a ping reports it). */
  let answered = 0;
  let queue: Promise<unknown> = Promise.resolve();
  let ending: ((code: number) => void) | null = null;
  const ended = new Promise<number>((resolve) => (ending = resolve));
  const end = (why: string, code = 0) => {
    if (!ending) return;
    const done = ending;
    ending = null;
    clearInterval(look);
    listener.stop();
    try {
      if (lstatSync(path).ino === ino) rmSync(path, { force: true });
    } catch {
      // already gone
    }
    log(`longrun: resident gate for ${root} ends: ${why}`);
    done(code);
  };

  async function answer(line: string): Promise<string> {
    const reply = (body: { result: Awaited<ReturnType<typeof runEvent>> } | { fallback: string } | { pong: string; answered: number; pid: number }) => JSON.stringify({ v: GATE_PROTOCOL, root, ...body } as GateAnswer);
    let req: unknown;
    try {
      req = JSON.parse(line);
    } catch {
      return reply({ fallback: "the request is not JSON" });
    }
    if ((req as { v?: unknown; ping?: unknown }).v === GATE_PROTOCOL && (req as { ping?: unknown }).ping === true) return reply({ pong: id!, answered, pid: process.pid });
    if ((req as { v?: unknown }).v !== GATE_PROTOCOL || !isRequest(req)) return reply({ fallback: "not a request of this protocol" });
    if (req.id !== id) {
      setTimeout(() => end("a hook of another build asked (the executable was replaced)"), 0);
      return reply({ fallback: "another build" });
    }
    if (req.root !== root || req.env.LONGRUN_STORE) return reply({ fallback: "not this gate's root" });
    const turn = queue.then(() => decide(req));
    queue = turn.catch(() => undefined);
    return turn;
  }

  async function decide(req: GateRequest): Promise<string> {
    const reply = (body: { result: Awaited<ReturnType<typeof runEvent>> } | { fallback: string }) => JSON.stringify({ v: GATE_PROTOCOL, root, ...body } as GateAnswer);
    last = Date.now();
    since[0] = last;
    try {
      useEnvironment(req.env);
      try {
        process.chdir(req.cwd);
      } catch {
        return reply({ fallback: "the caller's working directory cannot be entered" });
      }
      forgetResolved();
      let mine: string;
      try {
        mine = rootFor(req.rootFlag ?? undefined, parseInput(req.input));
      } catch {
        return reply({ fallback: "the input names no root" });
      }
      if (mine !== root) return reply({ fallback: "not this gate's root" });
      const result = await runEvent("PreToolUse", req.rootFlag ?? undefined, req.input);
      answered++;
      return reply({ result });
    } finally {
      forgetResolved();
      since[0] = 0;
      last = Date.now();
    }
  }

  const look = setInterval(() => {
    if (Date.now() - last > o.idleExitMs && since[0] === 0) return end(`idle for ${Math.round(o.idleExitMs / 1000)} s`);
    try {
      if (lstatSync(path).ino !== ino) return end("its socket was replaced");
    } catch {
      return end("its socket was removed");
    }
    if (stateDirProblem(root) !== null) return end(".longrun/ changed");
    if (gateIdentity() !== id) return end("the executable was replaced");
  }, LOOK_MS);
  for (const sig of ["SIGTERM", "SIGINT"] as const) process.on(sig, () => end(sig));
  log(`longrun: resident gate for ${root} on ${path}`);
  return ended;
}

/** What is at the socket's path: nothing, a socket, or something else (never removed). */
function existingSocket(path: string): "none" | "socket" | "other" {
  try {
    return lstatSync(path).isSocket() ? "socket" : "other";
  } catch {
    return "none";
  }
}
