/**
 * The protocol's own errors (JSON-RPC 2.0 codes): parse, invalid request, unknown method, invalid
 * params. Pure, so the ledger can refuse bad params without reaching up to the RPC edge; the edge
 * (src/rpc/errors.ts) maps them to the wire.
 */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/** A protocol-level error (parse, invalid request, unknown method, invalid params). */
export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data: Record<string, unknown>) {
    super(message);
    this.name = "RpcError";
  }
}

export function invalidParams(message: string, data: Record<string, unknown> = {}): RpcError {
  return new RpcError(INVALID_PARAMS, message, { kind: "invalid_params", ...data });
}
