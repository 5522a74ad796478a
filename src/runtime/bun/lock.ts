/** flock(2) through Bun's FFI: the lock belongs to the open file and dies with the process. */
import { closeSync, openSync } from "node:fs";
import { dlopen, FFIType } from "bun:ffi";
import type { FileLocker } from "../index.ts";

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

export function bunLocker(): FileLocker {
  const libc = dlopen(process.platform === "darwin" ? "libc.dylib" : "libc.so.6", {
    flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  });
  const flock = libc.symbols.flock;
  return {
    tryLock(path) {
      const fd = openSync(path, "a+", 0o600);
      if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
        closeSync(fd);
        return Promise.resolve(null);
      }
      return Promise.resolve({
        release() {
          flock(fd, LOCK_UN);
          closeSync(fd);
          return Promise.resolve();
        },
      });
    },
  };
}
