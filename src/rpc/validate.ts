/**
 * Params validation at the edge, before anything is touched: valibot `safeParse`; a size issue
 * becomes `limit_exceeded` (field, limit, actual, unit), anything else -32602 with the issues.
 */
import * as v from "valibot";
import { LimitExceededError } from "../core/errors.ts";
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

export function parseParams<S extends AnySchema>(method: string, schema: S, params: unknown): v.InferOutput<S> {
  if (Array.isArray(params)) {
    throw invalidParams(`Invalid params for ${method}: params must be an object of named fields, not an array`, { method });
  }
  const parsed = v.safeParse(schema, params ?? {});
  if (parsed.success) return parsed.output;
  const issues = parsed.issues;
  for (const issue of issues) {
    const measure = SIZE_ISSUES[issue.type];
    if (measure && typeof (issue as { requirement?: unknown }).requirement === "number") {
      const [actual, unit] = measure(issue.input);
      throw new LimitExceededError(fieldOf(issue), (issue as unknown as { requirement: number }).requirement, actual, unit);
    }
  }
  const first = issues[0];
  const summary = issues.slice(0, 5).map((i) => `${fieldOf(i)}: ${i.message}`).join("; ");
  throw invalidParams(`Invalid params for ${method}: ${summary}; see system.describe for this method's schema`, {
    method,
    field: fieldOf(first),
    issues: issues.map((i) => ({ path: fieldOf(i), message: i.message, expected: i.expected, received: i.received })),
  });
}
