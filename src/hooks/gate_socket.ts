/**
 * Where a root's resident gate listens, and whether a socket there can be trusted: the one rule
 * the per-call hook and the gate server share.
 *
 * The gate listens on `<root>/.longrun/gate.sock`. Bun cannot ask a unix socket who is at its
 * other end (no SO_PEERCRED), so trust rests on where the socket is: `.longrun/` is a place the
 * agent cannot create files in (the gate refuses every write there, the OS sandbox hides it), so a
 * socket there was made by a longrun of this user. The hook checks that before it connects:
 * `.longrun` a real directory (not a link) owned by this user and writable by no one else, the
 * socket a socket (not a link) owned by this user that no one else may open. Anything else, and
 * the hook decides on its own (the cold path), as it does when no gate runs.
 *
 * A gate also answers only hooks of its own build (`gateIdentity`: the version, the commit and
 * the executable file's identity), so a gate left running by an older executable never decides
 * for a newer one.
 */
import { lstatSync, statSync } from "node:fs";
import { ROOT_PATHS } from "../root/layout.ts";
import { VERSION } from "../version.ts";

/** The socket's name inside `.longrun/`. */
export const GATE_SOCKET = "gate.sock";

/** Unix socket paths are limited (108 bytes on Linux, 104 on macOS); a longer one gets no resident gate. */
export const MAX_SOCKET_PATH = 100;

/** The version of the request and answer lines (src/hooks/gate_client.ts, gate_server.ts). */
export const GATE_PROTOCOL = 1;

/** The gate socket's path for `root`, or null where the path is too long for a unix socket. */
export function gateSocketPath(root: string): string | null {
  const path = `${root === "/" ? "" : root}/${ROOT_PATHS.longrun}/${GATE_SOCKET}`;
  return Buffer.byteLength(path) <= MAX_SOCKET_PATH ? path : null;
}

/**
 * Why `.longrun/` of `root` cannot hold a trusted socket, or null when it can: a real directory
 * owned by this user, writable by no one else.
 */
export function stateDirProblem(root: string): string | null {
  const dir = `${root === "/" ? "" : root}/${ROOT_PATHS.longrun}`;
  const uid = typeof process.getuid === "function" ? process.getuid() : -1;
  let st;
  try {
    st = lstatSync(dir);
  } catch {
    return `${dir} does not exist`;
  }
  if (st.isSymbolicLink() || !st.isDirectory()) return `${dir} is not a directory`;
  if (st.uid !== uid) return `${dir} belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o022) !== 0) return `${dir} is writable by other users (mode ${(st.mode & 0o777).toString(8)})`;
  return null;
}

/** The socket path of `root`'s gate when one is there that this user may trust, else null. */
export function trustedGateSocket(root: string): string | null {
  const path = gateSocketPath(root);
  if (path === null || stateDirProblem(root) !== null) return null;
  try {
    const st = lstatSync(path);
    const uid = typeof process.getuid === "function" ? process.getuid() : -1;
    return st.isSocket() && st.uid === uid && (st.mode & 0o077) === 0 ? path : null;
  } catch {
    return null;
  }
}

/**
 * This build's identity, or null when not running as the compiled executable (from the sources a
 * file of them can change under a running gate unseen, so there is no resident gate there).
 */
export function gateIdentity(): string | null {
  const main = process.argv[1] ?? "";
  if (!/^(\/\$bunfs\/|[A-Za-z]:[\\/]~BUN[\\/])/.test(main)) return null;
  try {
    const st = statSync(process.execPath);
    return `${VERSION} ${process.env.LONGRUN_BUILD_COMMIT ?? "?"} ${process.env.LONGRUN_BUILD ?? "?"} ${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return null;
  }
}
