/**
 * The request chain of a run (issue 28): whether the original question and constraints went into
 * each of its model requests. longrun never sees a request; the host records, with each
 * `receipt.begin {kind: model_request}`, `sent`: sha256 hex digests of the whole request, of the
 * question as it sent it and of each constraint as it sent it. Here they are compared with the
 * digests of the task's own question and constraints (UTF-8 text as stored):
 *
 * | request's `question` | shown |
 * |---|---|
 * | the question's digest | `carried` |
 * | another digest | `differs` (the question was reworded or replaced on the way) |
 * | none given / no `sent` | `not_recorded` |
 *
 * and `constraints_missing` lists the constraints whose digest is not among the request's. A request
 * whose question differs or that misses a constraint is `drifted`: the chain shows where the
 * original ask stopped reaching the model.
 */
import { sha256Hex } from "../store/blobs.ts";
import type { Receipt } from "./receipts.ts";

export interface ChainRequest {
  receipt_id: string;
  status: Receipt["status"];
  begun_at: string;
  digest: string | null;
  question: "carried" | "differs" | "not_recorded";
  /** The constraints (their index and text) this request did not carry; null when it recorded none. */
  constraints_missing: { index: number; text: string }[] | null;
  drifted: boolean;
}

export interface RequestChain {
  question_sha256: string | null;
  constraints_sha256: string[];
  requests: ChainRequest[];
  /** Requests whose question differs or that miss a constraint. */
  drifted: number;
  /** Model requests with no digest of what they sent. */
  not_recorded: number;
}

/** The chain of a run's model requests against its task's question and constraints. */
export function requestChain(question: string | null, constraints: readonly string[], receipts: readonly Receipt[]): RequestChain {
  const q = question === null ? null : sha256Hex(question);
  const cs = constraints.map((c) => sha256Hex(c));
  const requests = receipts.filter((r) => r.kind === "model_request").map((r): ChainRequest => {
    const sent = r.sent;
    const asked: ChainRequest["question"] = !sent?.question ? "not_recorded" : sent.question === q ? "carried" : "differs";
    const missing = sent?.constraints ? cs.flatMap((d, index) => (sent.constraints!.includes(d) ? [] : [{ index, text: constraints[index]! }])) : null;
    return {
      receipt_id: r.receipt_id,
      status: r.status,
      begun_at: r.begun_at,
      digest: sent?.digest ?? null,
      question: asked,
      constraints_missing: missing,
      drifted: asked === "differs" || (missing !== null && missing.length > 0),
    };
  });
  return {
    question_sha256: q,
    constraints_sha256: cs,
    requests,
    drifted: requests.filter((r) => r.drifted).length,
    not_recorded: requests.filter((r) => r.digest === null).length,
  };
}
