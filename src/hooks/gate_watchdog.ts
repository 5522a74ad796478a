/**
 * The resident gate's watchdog, a Worker of its own: the gate decides on its main thread, where
 * a check stuck in synchronous code stops every timer. When one call has been decided for longer
 * than the limit, it removes the gate's socket (hooks then decide on their own at once) and ends
 * the process.
 */
import { lstatSync, rmSync, writeSync } from "node:fs";
import { prepareExitNow } from "../runtime/exit_now.ts";

export interface GateWatchdogStart {
  /** Float64 [0]: when the call being decided began (ms since the epoch), 0 when idle. */
  busy: SharedArrayBuffer;
  limitMs: number;
  socket: string;
  /** The socket's inode: only this gate's own socket is removed. */
  ino: number;
}

declare const self: { onmessage: ((e: MessageEvent<GateWatchdogStart>) => void) | null };

const exitNow = prepareExitNow();

self.onmessage = async (e: MessageEvent<GateWatchdogStart>) => {
  const { busy, limitMs, socket, ino } = e.data;
  const exit = await exitNow;
  const since = new Float64Array(busy);
  setInterval(() => {
    const t = since[0]!;
    if (t === 0 || Date.now() - t < limitMs) return;
    try {
      if (lstatSync(socket).ino === ino) rmSync(socket, { force: true });
    } catch {
      // already gone
    }
    writeSync(2, `longrun: the resident gate spent more than ${limitMs / 1000} s on one call; it ends (hooks decide on their own)\n`);
    exit(1);
  }, Math.min(250, limitMs));
};
