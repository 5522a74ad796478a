/**
 * Crash points for tests: `LONGRUN_CRASH_AT=checkpoint.after_memory_commit` (comma-separated names)
 * makes the process SIGKILL itself when it reaches that step. Unset, this is a no-op.
 */
import type { CrashPoint } from "../core/ports.ts";

export function crashPointsFromEnv(env: Record<string, string | undefined> = process.env): CrashPoint {
  const names = new Set((env.LONGRUN_CRASH_AT ?? "").split(",").map((s) => s.trim()).filter(Boolean));
  if (names.size === 0) return () => {};
  return (point: string) => {
    if (names.has(point)) {
      process.stderr.write(`longrun: crash point ${point}: killing this process\n`);
      process.kill(process.pid, "SIGKILL");
    }
  };
}
