/**
 * Receipt states of a tool effect (seed 003, section 5). Recorded before the effect (`begun`),
 * settled after (`completed` with a result reference, or `failed`). When a run is claimed after a
 * crash, what was begun but never settled becomes `unknown`: it may have happened. Unknown is
 * never re-run by longrun; it stays listed until a caller reconciles it with evidence.
 */

import type { Amounts } from "./budget.ts";

/**
 * What a receipt records: a tool call (the default), a model request (what adjust.handoff names),
 * or a child run started from this one. Each counts where it belongs: a tool call as one of
 * `tool_calls`, a model request as one of `requests` (its tokens and cost are charged with
 * budget.charge once known), a child run in no dimension of this run (it spends its own run's
 * budget).
 */
export const RECEIPT_KINDS = ["tool_call", "model_request", "child_run"] as const;
export type ReceiptKind = (typeof RECEIPT_KINDS)[number];

/** What beginning an effect of `kind` charges to the run's budget. */
export function kindCharge(kind: ReceiptKind): Amounts {
  switch (kind) {
    case "tool_call":
      return { tool_calls: 1 };
    case "model_request":
      return { requests: 1 };
    case "child_run":
      return {};
  }
}

export const RECEIPT_STATUSES = ["begun", "completed", "failed", "unknown"] as const;
export type ReceiptStatus = (typeof RECEIPT_STATUSES)[number];

export type BeginVerdict =
  | { kind: "new"; attempt: number }
  | { kind: "replay" }
  | { kind: "refuse"; reason: "unknown" | "in_flight" | "args_differ" };

/** What `receipt.begin` does on a key, given the newest receipt already under it (if any). */
export function beginVerdict(existing: { status: ReceiptStatus; args_digest: string; attempt: number } | null, argsDigest: string): BeginVerdict {
  if (!existing) return { kind: "new", attempt: 1 };
  if (existing.args_digest !== argsDigest) return { kind: "refuse", reason: "args_differ" };
  switch (existing.status) {
    case "completed":
      return { kind: "replay" };
    case "failed":
      return { kind: "new", attempt: existing.attempt + 1 };
    case "unknown":
      return { kind: "refuse", reason: "unknown" };
    case "begun":
      return { kind: "refuse", reason: "in_flight" };
  }
}

/** Whether `settle` may move a receipt from `from` to `to`; unknown needs evidence. */
export function settleAllowed(from: ReceiptStatus, to: "completed" | "failed", hasEvidence: boolean): boolean {
  if (from === "begun") return true;
  if (from === "unknown") return hasEvidence;
  void to;
  return false;
}
