/** The shapes a database answers in, whichever connection answered (local or a libSQL server). */

/** A row: column values by name and by position. */
export type Row = Record<string | number, unknown>;

export type InValue = string | number | bigint | boolean | null | Uint8Array | ArrayBuffer;
export type InArgs = readonly InValue[];

export interface ResultRows {
  rows: Row[];
  rowsAffected: number;
  lastInsertRowid: number | bigint | undefined;
}

/** SQLite's "database is busy/locked", from any driver. */
export { isBusyError as busyError } from "./fault.ts";

/** Settings of every local connection (acknowledged writes survive power loss; references are checked). */
export const CONNECTION_PRAGMAS: readonly string[] = ["PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON"];

/** One statement of a script (`Database.script`). */
export interface ScriptStep {
  sql: string;
  args: InArgs;
}

/** Runs a script's steps in order on `run`; returns each step's rows. */
export async function runScript(steps: readonly ScriptStep[], run: (sql: string, args: InArgs) => Promise<ResultRows> | ResultRows): Promise<ResultRows[]> {
  const out: ResultRows[] = [];
  for (const step of steps) out.push(await run(step.sql, step.args));
  return out;
}
