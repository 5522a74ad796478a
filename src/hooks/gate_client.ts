/**
 * The per-call hook's way to a resident gate: send the call to the root's gate (src/hooks/gate_server.ts)
 * over its socket and take its answer, or null, and the hook decides on its own (the cold path).
 * Null whenever anything is off: not the compiled executable, a root on a libSQL server, no socket
 * or one that cannot be trusted (src/hooks/gate_socket.ts), no answer within the wait, an answer of
 * another build or about another root, or anything malformed.
 */
import { unixRequest } from "../runtime/index.ts";
import { parseInput, rootFor } from "./hook_input.ts";
import type { HookResult } from "./hook_result.ts";
import { GATE_PROTOCOL, gateIdentity, trustedGateSocket } from "./gate_socket.ts";

/** The largest answer taken from a gate (a deny reason is a few hundred bytes). */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** What the hook sends: everything the cold path would decide with. */
export interface GateRequest {
  v: number;
  /** The asking build (`gateIdentity`): a gate of another build does not answer. */
  id: string;
  event: "PreToolUse";
  rootFlag: string | null;
  root: string;
  /** The hook's environment and working directory: the gate decides under them, as the cold path would. */
  env: Record<string, string>;
  cwd: string;
  input: string;
}

/** What a gate answers: the call's result, or why it leaves the call to the cold path. */
export type GateAnswer = { v: number; root: string } & ({ result: HookResult } | { fallback: string });

/** The result of a resident gate for this PreToolUse call, or null (decide it here). */
export async function askResidentGate(rootFlag: string | undefined, text: string, waitMs: number): Promise<HookResult | null> {
  const id = gateIdentity();
  if (id === null || process.env.LONGRUN_STORE) return null;
  let root: string;
  try {
    root = rootFor(rootFlag, parseInput(text));
  } catch {
    return null; // the cold path says what is wrong with the input
  }
  const path = trustedGateSocket(root);
  if (path === null) return null;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (typeof v === "string") env[k] = v;
  const request: GateRequest = { v: GATE_PROTOCOL, id, event: "PreToolUse", rootFlag: rootFlag ?? null, root, env, cwd: process.cwd(), input: text };
  const line = await unixRequest(path, JSON.stringify(request), waitMs, MAX_ANSWER_BYTES);
  if (line === null) return null;
  return resultOf(line, root);
}

/** The answer's result when it is well formed, about `root` and not a fallback; else null. */
export function resultOf(line: string, root: string): HookResult | null {
  let a: unknown;
  try {
    a = JSON.parse(line);
  } catch {
    return null;
  }
  const answer = a as Partial<GateAnswer> & { result?: Partial<HookResult> };
  if (typeof a !== "object" || a === null || answer.v !== GATE_PROTOCOL || answer.root !== root) return null;
  const r = answer.result;
  if (!r || (r.code !== 0 && r.code !== 2) || typeof r.stdout !== "string" || typeof r.stderr !== "string") return null;
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}
