/**
 * What every Claude Code hook shares: its input and output, the task state it opens (the state
 * only, without libSQL, or the full root where memory is needed), and the word a Stop that could
 * not end its turn leaves for the gate.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { ROOT_PATHS } from "../root/layout.ts";
import { openRoot as openScoped, type StateRoot } from "../root/open.ts";
import type { Root } from "../root/root.ts";
import { type RootStore, rootStore } from "../root/steps.ts";
import { hookServerStore } from "../store/server_config.ts";
import { type ClaudeEvent, eventColumn } from "./events.ts";

export type HookInput = Record<string, unknown>;
/** What a hook prints: a JSON object, or nothing at all (no decision). */
export type HookOutput = Record<string, unknown> | null;

/** How long a hook waits for another process's lock on the state file (the events table's `lockWaitMs`). */
export const LOCK_WAIT_MS: Readonly<Record<ClaudeEvent, number>> = eventColumn("lockWaitMs");

/** The hooks' root: the project on the libSQL server the environment names (LONGRUN_STORE), else the directory. */
function hookStore(root: string): RootStore {
  return rootStore(root, hookServerStore());
}

/**
 * The contract over the task state only (src/root/open.ts): enough for gate checks, turns and
 * grants, without loading libSQL. The gate (`gate`) lays nothing out.
 */
export async function stateOnlyContract(root: string, lockTimeoutMs = 5_000, gate = false): Promise<StateRoot> {
  return openScoped({ store: hookStore(root), scope: gate ? "gate" : "state", lockTimeoutMs });
}

export function blockPrompt(reason: string): HookOutput {
  return { decision: "block", reason: `longrun: ${reason}` };
}

/**
 * Where a Stop that could not end its turn leaves word of it (`.longrun/`, or the server store's
 * state directory): while it is there the gate refuses writes, until a prompt begins a new turn.
 */
export function turnEndPath(root: string): string {
  const server = hookServerStore();
  return server ? `${server.stateDir}/turn_end_pending` : `${root}/${ROOT_PATHS.turnEnd}`;
}

export function turnEndPending(root: string): string | null {
  const path = turnEndPath(root);
  return existsSync(path) ? `a Stop hook found the state busy or failing; see ${path}` : null;
}

export function markTurnEnded(root: string, why: string): void {
  try {
    writeFileSync(turnEndPath(root), JSON.stringify({ at: new Date().toISOString(), why }) + "\n");
  } catch {
    // nowhere to leave word: the lease still ends at the next prompt's turn
  }
}

export function clearTurnEnded(root: string): void {
  rmSync(turnEndPath(root), { force: true });
}

export function context(event: ClaudeEvent, text: string): HookOutput {
  return { hookSpecificOutput: { hookEventName: event, additionalContext: text } };
}

/** Opens the full root (libSQL, memory) only on the paths that need memory. */
export async function openRoot(root: string, lockTimeoutMs: number): Promise<Root> {
  return openScoped({ store: hookStore(root), scope: "full", options: { searchInWorker: false, lockTimeoutMs } });
}
