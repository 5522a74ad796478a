/**
 * Crash points for tests: `LONGRUN_CRASH_AT=checkpoint.before_commit` (comma-separated names)
 * makes the process SIGKILL itself when it reaches that step. Unset, this is a no-op. The shipped
 * executable is built with `process.env.LONGRUN_BUILD` fixed to "release", which turns crash points
 * off for good: no variable in a user's environment can make it kill itself mid-write.
 */
import type { CrashPoint } from "../core/ports.ts";

export function crashPointsFromEnv(env: Record<string, string | undefined> = process.env): CrashPoint {
  if (process.env.LONGRUN_BUILD === "release") return () => {};
  const names = new Set((env.LONGRUN_CRASH_AT ?? "").split(",").map((s) => s.trim()).filter(Boolean));
  if (names.size === 0) return () => {};
  return (point: string) => {
    if (names.has(point)) {
      process.stderr.write(`longrun: crash point ${point}: killing this process\n`);
      process.kill(process.pid, "SIGKILL");
    }
  };
}
