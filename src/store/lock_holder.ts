/**
 * Who holds a file lock, for error messages: on Linux, `/proc/locks` lists every lock with the
 * pid of its holder and the device and inode of its file. Elsewhere (or when it cannot tell) null.
 */
import { readFileSync, statSync } from "node:fs";

export function lockHolder(lockPath: string): { pid: number; command: string | null } | null {
  let table: string;
  let ino: number;
  try {
    ino = statSync(lockPath).ino;
    table = readFileSync("/proc/locks", "utf8");
  } catch {
    return null;
  }
  for (const line of table.split("\n")) {
    // 1: FLOCK  ADVISORY  WRITE 12345 08:01:1234567 0 EOF
    const m = /^\d+:\s+(?:->\s+)?\S+\s+\S+\s+\S+\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s/.exec(line);
    if (!m || Number(m[2]) !== ino) continue;
    const pid = Number(m[1]);
    let command: string | null = null;
    try {
      command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ").slice(0, 120) || null;
    } catch {
      // gone, or not ours to read
    }
    return { pid, command };
  }
  return null;
}
