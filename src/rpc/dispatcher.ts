/**
 * The JSON-RPC 2.0 dispatcher every front end shares: envelope checks, batches, notifications,
 * side checks, params validation, per-root lanes, and one error mapping. It never throws: every
 * request gets an answer (or, for a notification, deliberately none).
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import { ERROR_CODES, LimitExceededError, UnauthorizedError } from "../core/errors.ts";
import { LIMITS } from "../core/limits.ts";
import { classifyStorage } from "../db/fault.ts";
import type { RootRegistry } from "../root/registry.ts";
import type { Root } from "../root/root.ts";
import { PROTOCOL_VERSION, VERSION } from "../version.ts";
import { type ErrorObject, INVALID_REQUEST, localized, METHOD_NOT_FOUND, PARSE_ERROR, RpcError, toErrorObject } from "./errors.ts";
import { jsonDepth } from "./framing.ts";
import { readersFor } from "./readers.ts";
import type { Caller, Method } from "./method.ts";
import { ROOT_UNAVAILABLE } from "./root_unavailable.ts";
import { IDEMPOTENCY_WINDOW_MS, once } from "../store/idempotency.ts";
import { idempotencyKeyOf, parseParams } from "./validate.ts";

export type Id = string | number | null;

export type Response =
  | { jsonrpc: "2.0"; id: Id; result: unknown }
  | { jsonrpc: "2.0"; id: Id; error: ErrorObject };

export function errorResponse(id: Id, error: ErrorObject): Response {
  return { jsonrpc: "2.0", id, error };
}

/** Tells the caller's observer (if any) of a message refused before it named a method. */
function observed(caller: Caller, error: ErrorObject): ErrorObject {
  if (caller.observe) {
    try {
      caller.observe(null, error, 0, undefined);
    } catch {
      // an observer's failure is not the caller's
    }
  }
  return error;
}

function isId(v: unknown): v is Id {
  // an integer id beyond ±(2^53-1) has already lost digits in JSON.parse: echoing it would answer another id
  return v === null || typeof v === "string" || (typeof v === "number" && Number.isFinite(v) && (!Number.isInteger(v) || Number.isSafeInteger(v)));
}

/** The root a request's params name, if any (what its refusal is worded for). */
function rootNamed(params: unknown): string | undefined {
  const root = (params as { root?: unknown } | undefined)?.root;
  return typeof root === "string" ? root : undefined;
}

/** What the observer is told of a call, filled in as it goes. */
type Seen = { root?: string; t0: number };

/** A call past its checks: the method, its parsed params and idempotency key, the root it names. */
interface Prepared {
  name: string;
  m: Method;
  idemKey: string | null;
  params: Record<string, unknown>;
  rootName: string | undefined;
}

export interface DispatcherOptions {
  methods: Method[];
  roots: RootRegistry;
  /** Methods a front end does not offer at all (unknown to its callers), e.g. host methods over MCP. */
  hidden?: (m: Method) => boolean;
}

export class Dispatcher {
  readonly #methods = new Map<string, Method>();
  readonly #roots: RootRegistry;
  /** Per root, the tail of each writing lane. */
  readonly #lanes = new Map<string, { state: Promise<unknown>; memory: Promise<unknown> }>();
  #inFlight = 0;
  #idle: (() => void)[] = [];
  /** Calls on their way to a lane (waiting for their root): while any is, no call answers at once (it could overtake one). */
  #joining = 0;

  constructor(options: DispatcherOptions) {
    for (const m of options.methods) {
      if (this.#methods.has(m.name)) throw new Error(`method ${m.name} defined twice`);
      this.#methods.set(m.name, m);
    }
    this.#roots = options.roots;
  }

  get roots(): RootRegistry {
    return this.#roots;
  }

  methods(): Method[] {
    return [...this.#methods.values()];
  }

  /** Resolves when no request is in flight. */
  drained(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }

  /** One line (or body) of JSON text in; the serialized answer out, or null when none is due. */
  async handleText(text: string, caller: Caller): Promise<string | null> {
    const depth = jsonDepth(text, LIMITS.json_depth);
    if (depth > LIMITS.json_depth) {
      const e = new LimitExceededError("json_depth", LIMITS.json_depth, depth, "levels");
      return JSON.stringify(errorResponse(null, observed(caller, toErrorObject(e))));
    }
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch (e) {
      return JSON.stringify(
        errorResponse(null, observed(caller, {
          code: PARSE_ERROR,
          message: `Parse error: the message is not valid JSON (${(e as Error).message}); send one JSON object per line`,
          data: { kind: "parse_error" },
        })),
      );
    }
    const out = Array.isArray(msg) ? await this.handleMessage(msg, caller) : await this.#handleOne(msg, caller);
    return out === null ? null : JSON.stringify(out);
  }

  /** A parsed message (single request or batch) in; the answer out, or null for notifications only. */
  async handleMessage(msg: unknown, caller: Caller): Promise<Response | Response[] | null> {
    if (!Array.isArray(msg)) return this.#handleOne(msg, caller);
    if (msg.length === 0) {
      return errorResponse(null, observed(caller, {
        code: INVALID_REQUEST,
        message: "Invalid Request: an empty batch; send at least one request",
        data: { kind: "invalid_request" },
      }));
    }
    if (msg.length > LIMITS.batch_size) {
      return errorResponse(null, observed(caller, toErrorObject(new LimitExceededError("batch", LIMITS.batch_size, msg.length, "requests"))));
    }
    const answers = await Promise.all(msg.map((m) => this.#handleOne(m, caller)));
    const present = answers.filter((a): a is Response => a !== null);
    return present.length ? present : null;
  }

  /** One request's answer: at once when its method answers without waiting (`Method.now`), else a promise of it. */
  #handleOne(req: unknown, caller: Caller): Response | null | Promise<Response | null> {
    if (typeof req !== "object" || req === null || Array.isArray(req)) {
      return errorResponse(null, observed(caller, {
        code: INVALID_REQUEST,
        message: "Invalid Request: each request must be a JSON object with jsonrpc, method and (for an answer) id",
        data: { kind: "invalid_request" },
      }));
    }
    const r = req as Record<string, unknown>;
    const hasId = Object.prototype.hasOwnProperty.call(r, "id");
    const id: Id = hasId && isId(r.id) ? r.id : null;
    if (r.jsonrpc !== "2.0" || typeof r.method !== "string" || (hasId && !isId(r.id)) || ("params" in r && (typeof r.params !== "object" || r.params === null))) {
      return errorResponse(id, observed(caller, {
        code: INVALID_REQUEST,
        message: 'Invalid Request: need "jsonrpc": "2.0", a string "method", object "params" and a string, number or null "id" (a numeric id within ±(2^53-1): larger ones lose digits in JSON, send them as strings)',
        data: { kind: "invalid_request" },
      }));
    }
    const method = r.method;
    const observe = caller.observe;
    // what the observer is told: the time taken and the root touched (only when someone asks)
    const seen: Seen | undefined = observe ? { t0: performance.now() } : undefined;
    const answer = (result: unknown, error: ErrorObject | null): Response | null => {
      if (seen) {
        try {
          observe!(method, error, performance.now() - seen.t0, seen.root);
        } catch {
          // an observer's failure is not the caller's
        }
      }
      if (!hasId) return null;
      // the caller reads it in the root's language and grant path; the observer's log keeps the English
      return error ? errorResponse(id, localized(error, readersFor(this.#roots, rootNamed(r.params)))) : { jsonrpc: "2.0", id, result };
    };
    let call: Prepared;
    try {
      if (method === "system.describe") return answer(this.describe(caller), null);
      call = this.#prepare(method, r.params, caller);
      const now = this.#now(call, caller, seen);
      if (now) return answer(now.result, null);
    } catch (e) {
      return answer(undefined, toErrorObject(e));
    }
    return this.#later(call, caller, seen, answer);
  }

  async #later(call: Prepared, caller: Caller, seen: Seen | undefined, answer: (result: unknown, error: ErrorObject | null) => Response | null): Promise<Response | null> {
    this.#inFlight++;
    let result: unknown;
    let error: ErrorObject | null = null;
    try {
      result = await this.#call(call, caller, seen);
    } catch (e) {
      error = toErrorObject(e);
    } finally {
      if (--this.#inFlight === 0) for (const r of this.#idle.splice(0)) r();
    }
    return answer(result, error);
  }

  /** A call checked and its params parsed (whatever is refused here is refused before anything is touched). */
  #prepare(name: string, rawParams: unknown, caller: Caller): Prepared {
    const m = this.#methods.get(name);
    if (!m) {
      throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${JSON.stringify(name)}; system.describe lists the methods`, {
        kind: "method_not_found",
        method: name,
      });
    }
    if (m.side === "host" && caller.side !== "host") {
      throw new UnauthorizedError(
        `Refused: ${name} is a host-side method and this caller is the agent (${caller.via}); ` +
          `only the host (the user's side) may call it` + (name === "writes.enable" ? "; use writes.request to ask for a lease" : ""),
        { method: name, side_required: "host", side: caller.side },
      );
    }
    const { key: idemKey, params: ownParams } = idempotencyKeyOf(name, m.readOnly, m.params, rawParams);
    const params = parseParams(name, m.params, ownParams) as Record<string, unknown>;
    const rootName = typeof params.root === "string" ? params.root : undefined;
    return { name, m, idemKey, params, rootName };
  }

  /**
   * The call answered at once by its method's `now`, when it has one, nothing could be overtaken
   * (no call of this dispatcher on its way to a lane, none in a lane of that root) and the root is
   * open; undefined to take the usual way (`#call`), which then answers as the handler does.
   */
  #now(call: Prepared, caller: Caller, seen: Seen | undefined): { result: unknown } | undefined {
    const { m, idemKey, params, rootName } = call;
    if (!m.now || idemKey !== null || this.#joining > 0) return undefined;
    let root: Root | undefined;
    try {
      root = this.#roots.readyNow(rootName);
    } catch {
      return undefined; // refused on the usual way, with its usual error
    }
    if (!root || this.#lanes.has(root.dir)) return undefined;
    let result: unknown;
    try {
      result = m.now({ root, caller }, params);
    } catch (e) {
      if (seen) seen.root = root.dir;
      throw classifyStorage(e, root.paths.memoryDb) ?? e;
    }
    if (result === undefined) return undefined;
    if (seen) seen.root = root.dir;
    return { result };
  }

  async #call(prepared: Prepared, caller: Caller, seen?: { root?: string }): Promise<unknown> {
    const { name, m, idemKey, params, rootName } = prepared;
    // held until the call is done: a root in use is never closed to make room for another
    this.#joining++;
    let held: { root: Root; release: () => void };
    try {
      held = await this.#roots.acquire(rootName).catch((e: unknown) => {
        throw ROOT_UNAVAILABLE[name]?.(this.#roots.pendingPath(rootName), e) ?? e;
      });
    } finally {
      this.#joining--;
    }
    const { root, release } = held;
    if (seen) seen.root = root.dir;
    const done = <T>(p: Promise<T>): Promise<T> => (p.then(release, release), p);
    // a driver or file-system failure leaves as a kind the caller can act on, naming the database
    const call = () => m.handler({ root, caller }, params);
    // a kept answer is also about the task current when it ran (task.delete drops the answers about a task)
    const current = () => {
      const id = root.state.lastKnown()?.task_id;
      return id ? [id] : [];
    };
    const run = () => (idemKey === null ? call() : once(root.db, idemKey, name, params, call, Date.now(), current)).catch((e: unknown) => {
      throw classifyStorage(e, root.paths.memoryDb) ?? e;
    });
    const key = root.dir;
    const lanes = this.#lanes.get(key) ?? { state: Promise.resolve(), memory: Promise.resolve() };
    if (m.lane === "read") return done(Promise.all([lanes.state, lanes.memory]).then(run, run));
    const lane = m.lane;
    const next = lanes[lane].then(run, run);
    const tail = next.then(() => {}, () => {});
    const updated = { ...lanes, [lane]: tail };
    this.#lanes.set(key, updated);
    tail.then(() => {
      const now = this.#lanes.get(key);
      if (now && now.state === updated.state && now.memory === updated.memory) this.#lanes.delete(key);
    });
    return done(next);
  }

  /** What a host needs to check compatibility: versions, methods with side and param schema, limits, errors. */
  describe(caller: Caller) {
    return {
      name: "longrun",
      version: VERSION,
      protocol_version: PROTOCOL_VERSION,
      caller_side: caller.side,
      default_root: this.#roots.defaultRoot,
      methods: [
        {
          name: "system.describe",
          side: "agent",
          summary: "Versions, methods with their side and param schema, limits and error codes",
          read_only: true,
          params: { type: "object", properties: { root: { type: "string" } }, additionalProperties: false },
        },
        ...this.methods().map((m) => ({
          name: m.name,
          side: m.side,
          summary: m.summary,
          read_only: m.readOnly,
          params: toJsonSchema(m.params, { errorMode: "ignore" }),
        })),
      ],
      limits: LIMITS,
      // every method with read_only false also takes it (not in its params schema)
      idempotency: { param: "idempotency_key", window_seconds: IDEMPOTENCY_WINDOW_MS / 1000, max_chars: LIMITS.list_item_chars },
      errors: Object.entries(ERROR_CODES).map(([kind, code]) => ({ code, kind })),
    };
  }
}
