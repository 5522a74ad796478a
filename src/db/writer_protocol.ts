/** Messages between the main thread and the writer Worker, which owns every local write connection. */
import type { InArgs, ResultRows, ScriptStep } from "./types.ts";

export type WriterRequest =
  | { id: number; op: "open"; conn: number; path: string; busy_timeout_ms: number }
  | { id: number; op: "run"; conn: number; sql: string; args: InArgs }
  | { id: number; op: "script"; conn: number; steps: ScriptStep[] }
  | { id: number; op: "begin" | "commit" | "rollback" | "close"; conn: number };

export type WriterReply =
  | { id: number; ok: true; result?: ResultRows; results?: ResultRows[] }
  | { id: number; ok: false; error: { message: string; name: string; code?: string } };
