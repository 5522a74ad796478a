/**
 * The hook's watchdog, a Worker of its own: the gate's checks run synchronously on the main
 * thread, where no timer can interrupt them, so the bound is kept here. At the deadline, unless
 * the main thread has answered, it answers for it — a blocking event (PreToolUse,
 * UserPromptSubmit) with exit status 2 and the reason on stderr (Claude Code then blocks the call),
 * any other event with a note and status 0 — and ends the process at once.
 *
 * The two threads share one Int32 (`claim`): whoever changes it from 0 to 1 answers; the other
 * stays silent.
 */
import { writeFileSync, writeSync } from "node:fs";
import { prepareExitNow } from "../runtime/exit_now.ts";

export interface WatchdogStart {
  claim: SharedArrayBuffer;
  deadlineMs: number;
  blocking: boolean;
  /** What to write when the deadline passes: stderr for a blocking event, stdout otherwise. */
  message: string;
  /** A file to leave before ending (Stop's word that its turn ended unrecorded), or none. */
  mark?: string;
}

declare const self: { onmessage: ((e: MessageEvent<WatchdogStart>) => void) | null };

const exitNow = prepareExitNow();

self.onmessage = async (e: MessageEvent<WatchdogStart>) => {
  const { claim, deadlineMs, blocking, message, mark } = e.data;
  const exit = await exitNow;
  setTimeout(() => {
    if (Atomics.compareExchange(new Int32Array(claim), 0, 0, 1) !== 0) return;
    if (mark) {
      try {
        writeFileSync(mark, JSON.stringify({ at: new Date().toISOString(), why: `the hook gave up after ${deadlineMs / 1000} s` }) + "\n");
      } catch {
        // nowhere to leave word: the next prompt's turn still ends the lease
      }
    }
    if (blocking) writeSync(2, message + "\n");
    else writeSync(1, message + "\n");
    exit(blocking ? 2 : 0);
  }, deadlineMs);
};
