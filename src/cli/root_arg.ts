/** The `--root` of a long-running command, checked at start: a bad root ends the command (exit 2), not each request. */
import { InvalidRootError, resolveRoot } from "../root/root.ts";

/** The real path of `--root` (default: the working directory), or null after saying why on stderr. */
export function rootAtStart(root: string | null): string | null {
  try {
    return resolveRoot(root ?? process.cwd());
  } catch (e) {
    if (!(e instanceof InvalidRootError)) throw e;
    process.stderr.write(`longrun: ${e.message}\n`);
    return null;
  }
}
