/**
 * What a protocol method is: a name, the side allowed to call it, a valibot params schema, the
 * lane it runs in, and a handler. Every front end (stdio, HTTP, MCP, hooks) calls methods through
 * one dispatcher with these definitions, so they validate and refuse alike.
 */
import type * as v from "valibot";
import type { Root } from "../root/root.ts";
import type { ErrorObject } from "./errors.ts";
import type { AnySchema } from "./validate.ts";

/**
 * `host`: the party that speaks for the user (grants leases, moves turn boundaries, records the
 * user's words). `agent`: everything that reads, checks, requests or records. A host may call
 * agent methods too; an agent may never call host methods.
 */
export type Side = "host" | "agent";

export interface Caller {
  side: Side;
  /** The front end the call came through: stdio, http, mcp, hook, cli. */
  via: string;
  /**
   * A time to live given to leases granted without one. Front ends whose hosts may not see
   * message boundaries (HTTP, MCP) set it, so a lease cannot outlive a forgotten turn.end.
   */
  defaultLeaseTtlSeconds?: number;
  /**
   * Told of every request the dispatcher answers (for logs and metrics): the method (null when
   * the message was not a request), the error or null, the time it took in milliseconds and the
   * real path of the root it touched (undefined when none). Must not throw.
   */
  observe?: (method: string | null, error: ErrorObject | null, ms: number, root: string | undefined) => void;
}

export interface CallContext {
  root: Root;
  caller: Caller;
}

/**
 * `state`: changes the task or a run; such calls on one root run one at a time, in arrival order.
 * `memory`: adds to memory (which no gate check reads); such calls on one root run one at a time,
 * beside the state lane, so a save (its commit, its index merge) never holds up a gate check.
 * `read`: waits for the calls of both lanes that arrived before it (so it sees their effect), then
 * runs alongside whatever comes next: a slow memory search never holds up a later gate check.
 */
export type Lane = "state" | "memory" | "read";

export interface Method<S extends AnySchema = AnySchema> {
  name: string;
  side: Side;
  summary: string;
  params: S;
  lane: Lane;
  /** True when the method changes nothing (MCP's readOnlyHint). */
  readOnly: boolean;
  handler(ctx: CallContext, params: v.InferOutput<S>): Promise<unknown>;
  /**
   * The same answer as `handler`, given synchronously when it needs no wait (no I/O beyond a look
   * that nothing changed, nothing to write); undefined to have `handler` answer. The dispatcher
   * calls it only when the call's lane on that root is idle and the root is open, so the order and
   * effect are the handler's. It must answer (or throw) exactly as `handler` would.
   */
  now?(ctx: CallContext, params: v.InferOutput<S>): unknown;
}

export function method<S extends AnySchema>(m: Method<S>): Method<S> {
  return m;
}

/** The name a grant records for who made it, e.g. `host:stdio`. */
export function callerName(caller: Caller): string {
  return `${caller.side}:${caller.via}`;
}
