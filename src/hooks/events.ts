/**
 * The Claude Code hook events longrun answers, as one table: what longrun does at each, how install
 * registers it (matcher, timeout, whether a failure blocks), how long the hook takes at most and
 * waits for a lock, the function that answers it (src/hooks/claude.ts) and the sample install's
 * self-check sends. Pure data. Claude Code's other events (PostToolUse, Notification, SubagentStop,
 * SessionEnd, …) get no hook.
 */

export interface HookEvent {
  /** What longrun does at this event. */
  does: string;
  /** The matcher of the group install writes (`*`: every tool), or none. */
  matcher?: string;
  /** Seconds Claude Code waits for the hook (the installed `timeout`). */
  timeoutSeconds: number;
  /**
   * A failure blocks: installed with `onFailure: "block"`, and the hook fails closed (exit 2, the
   * tool call denied or the prompt blocked). Other events never block (a blocking Stop would make
   * the model go on).
   */
  blocking: boolean;
  /** How long the hook may take before it answers on its own (src/hooks/command.ts `DEADLINE_MS`). */
  deadlineMs: number;
  /** How long it waits for another process's lock on the state. */
  lockWaitMs: number;
  /** The exported function of src/hooks/claude.ts that answers it. */
  handler: "sessionStart" | "userPromptSubmit" | "preToolUse" | "stop" | "preCompact";
  /** The payload install's self-check sends (in a scratch root with no task). */
  sample: Readonly<Record<string, unknown>>;
  /** The self-check's permission decision it wants, if any. */
  sampleDecision?: "deny";
}

/** Every event longrun installs a hook for, in the order install writes and checks them. */
export const HOOK_EVENTS = {
  SessionStart: {
    does: "resume: what the task is, for the model's context; a new session ends a lease that still stands",
    timeoutSeconds: 60, blocking: false, deadlineMs: 30_000, lockWaitMs: 5_000, handler: "sessionStart",
    sample: { hook_event_name: "SessionStart", source: "startup" },
  },
  UserPromptSubmit: {
    does: "begins a turn (or resumes a paused task); the user's approval line grants the lease for this turn",
    timeoutSeconds: 30, blocking: true, deadlineMs: 15_000, lockWaitMs: 5_000, handler: "userPromptSubmit",
    sample: { hook_event_name: "UserPromptSubmit", prompt: "hello" },
  },
  PreToolUse: {
    does: "the gate: denies a call (with the reason), rewrites a shell command into its sandbox, or says nothing",
    matcher: "*", timeoutSeconds: 10, blocking: true, deadlineMs: 4_000, lockWaitMs: 2_000, handler: "preToolUse",
    sample: { hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: "x.txt", content: "x" } }, sampleDecision: "deny",
  },
  Stop: {
    does: "ends the turn (and its lease), saving a pause checkpoint when the assistant said something",
    timeoutSeconds: 60, blocking: false, deadlineMs: 30_000, lockWaitMs: 5_000, handler: "stop",
    sample: { hook_event_name: "Stop", stop_hook_active: false },
  },
  PreCompact: {
    does: "a progress checkpoint before the context is compacted (the task goes on, the lease stands)",
    timeoutSeconds: 60, blocking: false, deadlineMs: 30_000, lockWaitMs: 5_000, handler: "preCompact",
    sample: { hook_event_name: "PreCompact", trigger: "manual" },
  },
} as const satisfies Record<string, HookEvent>;

export type ClaudeEvent = keyof typeof HOOK_EVENTS;

/** The events, in the table's order. */
export const CLAUDE_EVENTS = Object.keys(HOOK_EVENTS) as readonly ClaudeEvent[];

/** One event's row, typed as a row (so optional columns read as optional). */
export function eventRow(event: ClaudeEvent): HookEvent {
  return HOOK_EVENTS[event];
}

/** One column of the table, by event. */
export function eventColumn<K extends keyof HookEvent>(key: K): Readonly<Record<ClaudeEvent, HookEvent[K]>> {
  return Object.fromEntries(CLAUDE_EVENTS.map((e) => [e, (HOOK_EVENTS[e] as HookEvent)[key]])) as Record<ClaudeEvent, HookEvent[K]>;
}
