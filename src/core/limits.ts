/**
 * Documented limits. At a limit things work; one unit over, the request fails with
 * `limit_exceeded` naming the field, the limit, the actual size and the unit, and nothing is written.
 * The "Limits" table of docs/limits.md is generated from these numbers (scripts/gen_docs.ts; `system.describe` returns them).
 */
export const LIMITS = {
  /** One JSON-RPC message on stdio (one line), in bytes, newline excluded. */
  line_bytes: 1024 * 1024,
  /** One HTTP request body, in bytes. */
  body_bytes: 1024 * 1024,
  /** Requests in one JSON-RPC batch. */
  batch_size: 100,
  /** Nesting depth of a JSON-RPC message. */
  json_depth: 32,
  /** A short text field (reason, action, title, phase, next_step, …), in characters. */
  short_text_chars: 2_000,
  /** A long text field (description, summary), in characters. */
  text_chars: 64 * 1024,
  /** One memory body, in characters. */
  memory_content_chars: 512 * 1024,
  /** Keywords of one memory or task, and scope patterns of one lease. */
  list_items: 64,
  /** One item of such a list (a keyword, a scope pattern, a tool, a source, a gap), in characters. */
  list_item_chars: 200,
  /** Memories one root may hold (checkpoints and outcomes are never refused for this). */
  memories_per_root: 2_000_000,
  /** Records in one memory.save_many. */
  save_many_items: 1_000,
  /** Hits in one page of memory search. */
  search_limit: 50,
  /** Bytes one context.read returns at most. */
  context_read_bytes: 256 * 1024,
  /** A checkpoint's `data` object (the host's own state), as compact JSON, in characters. */
  checkpoint_data_chars: 16 * 1024,
  /** The longest time to live an owner may be given (`owner_ttl_seconds` of run.start and run.claim), in seconds. */
  owner_ttl_seconds: 7 * 24 * 3600,
  /** Checkpoints in one page of task.checkpoints. */
  checkpoints_page: 100,
  /** How far ahead a parked run's `wake_at` may be, in days. */
  wake_at_days: 366,
  /** Open child runs one run may have at once (run.child). */
  child_runs_per_run: 100,
  /** Open child runs in one task, at every level. */
  child_runs_per_task: 1000,
  /** Levels of child runs under a top-level run (a child's child is level 2). */
  child_depth: 4,
  /** Open gaps in one task (what its drafts do not yet cover; src/ledger/gaps.ts). */
  gaps_open: 1000,
  /** Events in one page of events.read. */
  events_page: 500,
  /** The longest events.read waits for an event (`wait_ms`), in milliseconds: under the 30 s a client waits for an answer by default. */
  events_wait_ms: 25_000,
  /** events.read calls of one side waiting for an event (`wait_ms`) at once, per root. */
  events_waiting: 16,
  /** Events a root's log keeps (the oldest go first, at each retention pass of a running server). */
  events_kept: 1_000_000,
  /** Approvals of one task waiting for the host's answer at once (approval.request). */
  approvals_pending: 100,
  /** Approvals of the whole root waiting for the host's answer at once. */
  approvals_pending_root: 1_000,
} as const;

/** Bodies longer than this (UTF-8 bytes) are kept under raw_data/, the index keeping a reference and a digest. */
export const INLINE_BODY_BYTES = 8 * 1024;

/** How much of an externalised body the index keeps inline as a preview, in characters. */
export const PREVIEW_CHARS = 2_000;
