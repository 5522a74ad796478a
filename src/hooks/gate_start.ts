/**
 * Starts a root's resident gate in the background (SessionStart, when `.longrun/hooks.json` sets
 * `resident_gate`): `longrun hook gate --root DIR`, detached, its output dropped. A gate that finds
 * one already answering ends at once, so starting one per session is safe; it ends by itself when
 * idle (src/hooks/gate_server.ts).
 */
import { gateIdentity, gateSocketPath, stateDirProblem } from "./gate_socket.ts";

/**
 * Starts the gate for `root` unless this is not the compiled executable or the root cannot have
 * one. Never throws. `node:child_process` is loaded here only (at start it costs a hook milliseconds).
 */
export async function startResidentGate(root: string): Promise<boolean> {
  if (gateIdentity() === null || gateSocketPath(root) === null || stateDirProblem(root) !== null) return false;
  try {
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, ["hook", "gate", "--root", root], { detached: true, stdio: "ignore", cwd: root, env: process.env });
    child.on("error", () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
