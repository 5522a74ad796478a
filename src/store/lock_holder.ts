/**
 * Who holds a write lock on a file, for error messages: on Linux, `/proc/locks` lists every lock
 * with the pid of its holder and the device and inode of its file (SQLite's write lock on
 * `memory.db` is a POSIX lock on its `-shm` or main file). Elsewhere, or when it cannot tell, null.
 */
import { readFileSync, statSync } from "node:fs";

export function lockHolder(paths: readonly string[], exceptPid = process.pid): { pid: number; command: string | null } | null {
  let table: string;
  const inodes = new Set<number>();
  for (const p of paths) {
    try {
      inodes.add(statSync(p).ino);
    } catch {
      // absent
    }
  }
  try {
    table = readFileSync("/proc/locks", "utf8");
  } catch {
    return null;
  }
  for (const line of table.split("\n")) {
    // 1: POSIX  ADVISORY  WRITE 12345 08:01:1234567 120 120
    const m = /^\d+:\s+\S+\s+\S+\s+WRITE\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s/.exec(line);
    if (!m || !inodes.has(Number(m[2])) || Number(m[1]) === exceptPid) continue;
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
