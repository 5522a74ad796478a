/**
 * Invalid tool calls become JSON-RPC -32602 with one short sentence a model can act on: which
 * argument, what it must be, what came. The shape (an object of known argument names) is checked
 * here against the tool's definition; values are checked by the protocol's own valibot schemas,
 * whose issues are rewritten here.
 */
import type { ErrorObject } from "../rpc/errors.ts";
import { INVALID_PARAMS } from "../rpc/errors.ts";

/** An error the SDK sends as a JSON-RPC error object as it is (code, message, data). */
export class McpProtocolError extends Error {
  constructor(readonly code: number, message: string, readonly data: Record<string, unknown>) {
    super(message);
    this.name = "McpProtocolError";
  }
}

export function invalidArguments(tool: string, detail: string, field?: string): McpProtocolError {
  return new McpProtocolError(INVALID_PARAMS, `Invalid arguments for ${tool}: ${detail}`, { kind: "invalid_params", tool, ...(field ? { field } : {}) });
}

function kindOf(x: unknown): string {
  if (x === null) return "null";
  if (Array.isArray(x)) return "an array";
  return `a ${typeof x}`;
}

/**
 * The call's arguments as an object with only the names the tool takes. Absent or null is `{}`;
 * an array, a string or any other value, or an unknown name, is -32602.
 */
export function checkArguments(tool: string, args: unknown, names: readonly string[]): Record<string, unknown> {
  if (args === undefined || args === null) return {};
  if (typeof args !== "object" || Array.isArray(args)) {
    throw invalidArguments(tool, `arguments must be an object of named values, not ${kindOf(args)}`);
  }
  const takes = names.length ? `it takes ${names.join(", ")}` : "it takes no arguments";
  for (const key of Object.keys(args)) {
    if (!names.includes(key)) throw invalidArguments(tool, `unknown argument ${JSON.stringify(key)}; ${takes}`, key);
  }
  return args as Record<string, unknown>;
}

const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  number: "a number",
  boolean: "true or false",
  Array: "a list",
  Object: "an object",
};

interface Issue {
  path?: string;
  message?: string;
  expected?: string | null;
  received?: string;
}

/** One issue as a short clause: `"action" is required`, `"limit" must be a number, got "5"`. */
function clause(issue: Issue): string {
  const field = JSON.stringify(issue.path ?? "arguments");
  if (issue.received === "undefined") return `${field} is required`;
  const message = issue.message ?? "is not valid";
  if (message.startsWith("Invalid type") && issue.expected) {
    const expected = TYPE_WORDS[issue.expected] ?? (issue.expected.startsWith("(") ? `one of ${issue.expected.slice(1, -1).replace(/ \| /g, ", ")}` : issue.expected);
    return `${field} must be ${expected}, got ${issue.received}`;
  }
  return `${field}: ${message}`;
}

/** A protocol -32602 (valibot issues in `data`) as the tool's -32602, without method names. */
export function rewriteInvalidParams(tool: string, error: ErrorObject): McpProtocolError {
  const data = error.data ?? {};
  const issues = Array.isArray(data.issues) ? (data.issues as Issue[]) : [];
  const field = typeof data.field === "string" ? data.field : undefined;
  if (issues.length) return invalidArguments(tool, issues.slice(0, 3).map(clause).join("; "), field);
  // a rule the handler checks itself ("give exactly one of args or args_digest"): its own words, minus the method
  const detail = error.message.replace(/^Invalid params for [a-z_.]+: /, "").replace(/; see system\.describe.*$/, "");
  return invalidArguments(tool, detail, field);
}
