/**
 * The one mapping from errors to the wire: a JSON-RPC error object and an HTTP status, both
 * derived from the same classes. Driver and runtime errors become -32603 with their message kept.
 */
import { ERROR_CODES, InternalError, LongrunError } from "../core/errors.ts";
import { InvalidRootError } from "../root/root.ts";

import { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError } from "../core/rpc_error.ts";
export { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, invalidParams, METHOD_NOT_FOUND, PARSE_ERROR, RpcError } from "../core/rpc_error.ts";

export interface ErrorObject {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}


export function toErrorObject(e: unknown): ErrorObject {
  if (e instanceof LongrunError) return { code: e.code, message: e.message, data: e.data };
  if (e instanceof RpcError) return { code: e.code, message: e.message, data: e.data };
  if (e instanceof InvalidRootError) {
    return { code: INVALID_PARAMS, message: e.message, data: { kind: "invalid_params", field: "root", root: e.root } };
  }
  if (e instanceof InternalError) return { code: INTERNAL_ERROR, message: e.message, data: { kind: "internal" } };
  const message = e instanceof Error ? e.message : String(e);
  return {
    code: INTERNAL_ERROR,
    message: `Internal error: ${message}; the request may not have been carried out, check task.status before retrying`,
    data: { kind: "internal" },
  };
}

const HTTP_STATUS: Record<string, number> = {
  parse_error: 400,
  invalid_request: 400,
  method_not_found: 404,
  invalid_params: 422,
  internal: 500,
  write_gate_violation: 403,
  transition_error: 409,
  checkpoint_write_error: 503,
  state_corrupt: 500,
  no_active_task: 409,
  stale_epoch: 409,
  budget_exhausted: 429,
  unauthorized: 401,
  limit_exceeded: 413,
  conflict: 409,
  not_found: 404,
  storage_error: 507,
  memory_corrupt: 500,
  content_missing: 410,
  idempotency_conflict: 409,
};

/** The HTTP status for an error kind (used by the HTTP front end's problem+json answers). */
export function httpStatusOf(kind: string): number {
  return HTTP_STATUS[kind] ?? 500;
}

export function kindOfCode(code: number): string {
  for (const [kind, c] of Object.entries(ERROR_CODES)) if (c === code) return kind;
  if (code === PARSE_ERROR) return "parse_error";
  if (code === INVALID_REQUEST) return "invalid_request";
  if (code === METHOD_NOT_FOUND) return "method_not_found";
  if (code === INVALID_PARAMS) return "invalid_params";
  return "internal";
}
