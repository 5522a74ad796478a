/**
 * Params validation at the edge, before anything is touched: valibot `safeParse`; a size issue
 * becomes `limit_exceeded` (field, limit, actual, unit), anything else -32602 with the issues.
 */
import * as v from "valibot";
import { LimitExceededError, orList } from "../core/errors.ts";
import { LIMITS } from "../core/limits.ts";
import { invalidParams } from "./errors.ts";

// deno-lint-ignore no-explicit-any
export type AnySchema = v.GenericSchema<any, any>;

const SIZE_ISSUES: Record<string, (input: unknown) => [number, string]> = {
  max_length: (input) => (Array.isArray(input) ? [input.length, "items"] : [String(input).length, "characters"]),
  max_size: (input) => [(input as { size?: number }).size ?? 0, "items"],
  max_value: (input) => [Number(input), "value"],
};

function fieldOf(issue: v.BaseIssue<unknown>): string {
  return issue.path?.map((p) => String(p.key)).join(".") || "params";
}

/**
 * What cannot be stored exactly is refused at the door, never altered on the way: a NUL character
 * (SQLite's text functions and some drivers end a string there), an unpaired UTF-16 surrogate
 * (UTF-8 has no encoding for it: it would come back as U+FFFD), an integer beyond ±(2^53-1)
 * (JSON parsers round it). Returns the first offending field and why, or null.
 */
export function unstorable(value: unknown, path = ""): { field: string; why: string } | null {
  if (typeof value === "string") {
    if (value.includes("\u0000")) return { field: path || "params", why: "contains a NUL character (U+0000); longrun stores text: encode binary data (base64, hex) or remove the NUL" };
    if (!isWellFormed(value)) return { field: path || "params", why: "contains an unpaired UTF-16 surrogate, which UTF-8 cannot store; send well-formed Unicode" };
    return null;
  }
  if (typeof value === "number") {
    return Number.isInteger(value) && !Number.isSafeInteger(value)
      ? { field: path || "params", why: "is an integer beyond ±(2^53-1), which JSON numbers cannot carry exactly; send a smaller number" }
      : null;
  }
  if (typeof value !== "object" || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = unstorable(value[i], path ? `${path}.${i}` : String(i));
      if (bad) return bad;
    }
    return null;
  }
  for (const [k, item] of Object.entries(value)) {
    const field = path ? `${path}.${k}` : k;
    const key = unstorable(k, field);
    if (key) return { field: key.field, why: `(a field name) ${key.why}` };
    const bad = unstorable(item, field);
    if (bad) return bad;
  }
  return null;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function isWellFormed(s: string): boolean {
  const native = (s as { isWellFormed?: () => boolean }).isWellFormed;
  return native ? native.call(s) : !LONE_SURROGATE.test(s);
}

/** The names of a strict object schema's fields (`root` last), or null for another schema. */
function paramNames(schema: AnySchema): string[] | null {
  const entries = (schema as { entries?: Record<string, unknown> }).entries;
  if (!entries) return null;
  const names = Object.keys(entries).filter((k) => k !== "root");
  return [...names, ...("root" in entries ? ["root"] : [])];
}

/**
 * One validation issue as a sentence naming the field, what was wrong and what is accepted
 * (valibot's own "Invalid key: Expected never…" speaks its internals). A schema's custom message
 * is already a sentence and is kept.
 */
function plainIssue(issue: v.BaseIssue<unknown>, method: string, schema: AnySchema): string {
  const field = fieldOf(issue);
  const got = issue.received;
  if (issue.expected === "never") {
    const top = (issue.path?.length ?? 0) <= 1;
    const names = top ? paramNames(schema) : null;
    const key = String(issue.path?.at(-1)?.key ?? field);
    return names
      ? `${JSON.stringify(key)} is not a param of ${method}; it takes ${names.length ? andList(names) : "no params"}`
      : `${JSON.stringify(key)} is not a field of ${issue.path!.slice(0, -1).map((p) => String(p.key)).join(".")}; remove it`;
  }
  if (got === "undefined") return `${field} is missing, and it is required`;
  if (issue.type === "picklist") return `${field} is ${got}, which is not one of the values it takes: ${describeExpected(issue.expected)}`;
  if (issue.message.startsWith("Invalid ")) return `${field} is ${got} and must be ${describeExpected(issue.expected)}`;
  return `${field}: ${issue.message}`;
}

function andList(items: readonly string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** valibot's expected text ("string", '("a" | "b")') in words. */
function describeExpected(expected: string | null): string {
  if (!expected) return "another value";
  const options = expected.replace(/^\(|\)$/g, "").split(" | ");
  if (options.length > 1) return orList(options);
  return /^[a-z]+$/.test(expected) ? `${/^[aeiou]/.test(expected) ? "an" : "a"} ${expected}` : expected;
}

const KEY_CONTROL = /[\u0000-\u001f\u007f]/;

/** A method whose own params have an `idempotency_key` (receipt.begin: the effect's own key) keeps it as its own. */
function ownsKey(schema: AnySchema): boolean {
  return "idempotency_key" in ((schema as { entries?: Record<string, unknown> }).entries ?? {});
}

/** Writes whose answer must never be replayed: the gate check answers for now, every time. */
const NO_KEY: ReadonlySet<string> = new Set(["writes.require"]);

/**
 * A write's optional `idempotency_key`, taken out of its params before they are checked against
 * the method's schema (which knows nothing of it). A read method, and the gate check
 * (writes.require, which answers for the moment it is asked), have none: there the field is an
 * unknown param like any other.
 */
export function idempotencyKeyOf(method: string, readOnly: boolean, schema: AnySchema, params: unknown): { key: string | null; params: unknown } {
  if (readOnly || NO_KEY.has(method) || ownsKey(schema) || !params || typeof params !== "object" || Array.isArray(params) || !("idempotency_key" in params)) return { key: null, params };
  const { idempotency_key: key, ...rest } = params as Record<string, unknown>;
  if (typeof key !== "string" || key.length === 0 || KEY_CONTROL.test(key)) {
    throw invalidParams(`Invalid params for ${method}: idempotency_key is a non-empty string without control characters (a UUID, say), not ${JSON.stringify(key)}`, { method, field: "idempotency_key" });
  }
  if (key.length > LIMITS.list_item_chars) throw new LimitExceededError("idempotency_key", LIMITS.list_item_chars, key.length, "characters");
  return { key, params: rest };
}

export function parseParams<S extends AnySchema>(method: string, schema: S, params: unknown): v.InferOutput<S> {
  if (Array.isArray(params)) {
    throw invalidParams(`Invalid params for ${method}: params must be an object of named fields, not an array`, { method });
  }
  const bad = unstorable(params);
  if (bad) throw invalidParams(`Invalid params for ${method}: ${bad.field} ${bad.why}; nothing was changed`, { method, field: bad.field });
  const parsed = v.safeParse(schema, params ?? {});
  if (parsed.success) return parsed.output;
  const issues = parsed.issues;
  for (const issue of issues) {
    const measure = SIZE_ISSUES[issue.type];
    if (measure && typeof (issue as { requirement?: unknown }).requirement === "number") {
      const [actual, unit] = measure(issue.input);
      const limit = (issue as unknown as { requirement: number }).requirement;
      const field = fieldOf(issue);
      throw new LimitExceededError(field, limit, actual, unit, unit === "value" ? `send a ${field} of at most ${limit}` : undefined);
    }
  }
  const first = issues[0];
  const summary = issues.slice(0, 5).map((i) => plainIssue(i, method, schema)).join("; ");
  throw invalidParams(`Invalid params for ${method}: ${summary}; system.describe gives each method's params`, {
    method,
    field: fieldOf(first),
    issues: issues.map((i) => ({ path: fieldOf(i), message: i.message, expected: i.expected, received: i.received })),
  });
}
