/** flock(2) through Deno's FsFile.tryLock: the lock belongs to the open file and dies with the process. */
import type { FileLocker } from "../index.ts";
import { deno } from "./deno.ts";

export function denoLocker(): FileLocker {
  return {
    async tryLock(path) {
      const file = await deno().open(path, { read: true, write: true, create: true, mode: 0o600 });
      if (!(await file.tryLock(true))) {
        file.close();
        return null;
      }
      return {
        async release() {
          await file.unlock();
          file.close();
        },
      };
    },
  };
}
