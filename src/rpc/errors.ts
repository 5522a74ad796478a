/**
 * The one mapping from errors to the wire: a JSON-RPC error object and an HTTP status, both
 * derived from the same classes and the one table of kinds (src/core/errors.ts `ERRORS`,
 * `PROTOCOL_ERRORS`). Driver and runtime errors become -32603 with their message kept.
 */
import { ERRORS, InternalError, LongrunError, PROTOCOL_ERRORS, WIRE_ERRORS } from "../core/errors.ts";
import { type Lang, say } from "../core/messages/catalog.ts";
import { protocolText } from "../core/messages/protocol.ts";
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

/** Where a refusal is read: the root's language, and the user's approval marker where the Claude Code hooks are installed (else null). */
export interface Readers {
  lang: Lang;
  approve: string | null;
}

/**
 * `error` as the root's people read it: the message in their language (src/core/messages/), a
 * gate refusal followed by the way a person grants writes in this setup. `code` and `data` stay
 * as they are.
 */
export function localized(error: ErrorObject, readers: Readers): ErrorObject {
  let message = protocolText(error, readers.lang);
  if (error.data?.kind === "write_gate_violation") {
    message += readers.approve === null ? say("grant.person", readers.lang) : say("hook.approve_line", readers.lang, { marker: readers.approve });
  }
  return message === error.message ? error : { ...error, message };
}

/** The HTTP status for an error kind (used by the HTTP front end's problem+json answers); 500 for a kind it does not know. */
export function httpStatusOf(kind: string): number {
  return WIRE_ERRORS.get(kind)?.http ?? 500;
}

/** Whether an error kind is the server's trouble, not the caller's (the HTTP server logs each one). */
export function isServerFault(kind: string): boolean {
  return WIRE_ERRORS.get(kind)?.serverFault ?? false;
}

/** The kind of a JSON-RPC error code; `internal` for a code no table has. */
export function kindOfCode(code: number): string {
  for (const [kind, e] of Object.entries(ERRORS)) if (e.code === code) return kind;
  for (const [kind, e] of Object.entries(PROTOCOL_ERRORS)) if (e.code === code) return kind;
  return "internal";
}
