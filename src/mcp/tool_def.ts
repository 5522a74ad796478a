/**
 * What an MCP tool is here: a definition written for the model that reads it on every request
 * (its own name, description, described parameters and output schema), mapped onto one agent-side
 * protocol method. The protocol's valibot schemas still validate every call; these JSON Schemas
 * say what the model may send (a subset of the method's params) and what comes back.
 */

/** A JSON Schema object (draft 2020-12, the subset MCP clients read). */
export type JsonSchema = Record<string, unknown>;

/**
 * The hints an MCP client reads (all stated, because the spec's defaults are the unsafe ones:
 * destructive, not idempotent). `destructive`: the call can end something for good (a task, a
 * run); every other longrun tool only adds (records, log lines, versions). `idempotent`: calling
 * again with the same arguments changes nothing more.
 */
export interface Hints {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
}

/** Named sets a tool belongs to; `all` holds every tool and is not listed per tool. */
export type SetName = "default" | "research";

export interface ToolDef {
  /** The MCP name (letters, digits, `_`). */
  name: string;
  /** The protocol method it calls (agent side only). */
  method: string;
  description: string;
  /** The parameters the model may send, each with a description that carries an example. */
  params: Record<string, JsonSchema>;
  required?: string[];
  /** The schema of `structuredContent` on success. */
  output: JsonSchema;
  hints: Hints;
  sets: SetName[];
}

// Hint presets.
export const READS: Hints = { readOnly: true, destructive: false, idempotent: true };
export const ADDS: Hints = { readOnly: false, destructive: false, idempotent: false };
/** Changes state, but repeating the call changes nothing more. */
export const SETTLES: Hints = { readOnly: false, destructive: false, idempotent: true };
/** Can end a task or a run for good. */
export const ENDS: Hints = { readOnly: false, destructive: true, idempotent: false };

// Parameter builders: every parameter has a description, and the description an example.
export const str = (description: string): JsonSchema => ({ type: "string", description });
export const int = (description: string, minimum = 1): JsonSchema => ({ type: "integer", minimum, description });
export const num = (description: string): JsonSchema => ({ type: "number", minimum: 0, description });
export const bool = (description: string): JsonSchema => ({ type: "boolean", description });
export const list = (description: string, items: JsonSchema = { type: "string" }): JsonSchema => ({ type: "array", items, description });
export const oneOf = (values: readonly string[], description: string): JsonSchema => ({ type: "string", enum: [...values], description });
export const object = (description: string): JsonSchema => ({ type: "object", description });

// Output builders: types of what comes back (extra fields are allowed; listed ones are checked).
export const STRING: JsonSchema = { type: "string" };
export const INTEGER: JsonSchema = { type: "integer" };
export const BOOLEAN: JsonSchema = { type: "boolean" };
export const OBJECT: JsonSchema = { type: "object" };
export const ARRAY: JsonSchema = { type: "array" };
export const nullable = (s: JsonSchema): JsonSchema => ({ ...s, type: [s.type as string, "null"] });
export const listOf = (items: JsonSchema): JsonSchema => ({ type: "array", items });

/** An object with these fields, all required. */
export function shape(props: Record<string, JsonSchema>, optional: string[] = []): JsonSchema {
  const required = Object.keys(props).filter((k) => !optional.includes(k));
  return { type: "object", properties: props, ...(required.length ? { required } : {}) };
}

/** A task as results carry it (the fields a model acts on; the object holds more). */
export const TASK = shape({ task_id: STRING, status: STRING });
/** A run as run results carry it. */
export const RUN = shape({ run_id: STRING, status: STRING, epoch: INTEGER });
/** A run's budget: limits, spend, and whether new effects are allowed. */
export const BUDGET = shape({ spent: OBJECT, effects_allowed: BOOLEAN });
export const RECEIPT = shape({ receipt_id: STRING, status: STRING });
export const ARTIFACT = shape({ name: STRING, version: INTEGER, kind: STRING });
export const ADJUSTMENT = shape({ adjustment_id: STRING, text: STRING });
