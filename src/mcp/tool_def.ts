/**
 * What an MCP tool is here: a definition written for the model that reads it on every request
 * (its own name, description, described parameters and output schema), mapped onto one agent-side
 * protocol method. Its parameters are a pick of that method's valibot params, so the JSON Schema
 * the model reads is derived from the schema that validates the call (scripts/gen_mcp_schemas.ts
 * writes src/mcp/generated/input_schemas.ts); the descriptions are written here, for the model.
 */
import * as v from "valibot";

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

/**
 * One parameter as the model reads it: a description that carries an example, or, where the
 * JSON Schema the model sees is deliberately not the one derived from valibot, that schema too,
 * with the reason (src/mcp/input_schema.ts explains the derivation).
 */
export type ParamText = string | { description: string; shown: JsonSchema; why: string };

// deno-lint-ignore no-explicit-any
type ParamsSchema = v.StrictObjectSchema<v.ObjectEntries, any>;

/** The parameters a tool takes: a pick of its method's params, each described for the model. */
export interface ToolInput {
  /** The method's valibot params, picked to what the model may send (in the order it reads them). */
  schema: ParamsSchema;
  describe: Record<string, ParamText>;
  /** Params the method takes optionally (the host may omit them) that the model must always send. */
  alsoRequired: string[];
}

export interface ToolDef {
  /** The MCP name (letters, digits, `_`). */
  name: string;
  /** The protocol method it calls (agent side only). */
  method: string;
  description: string;
  /** The parameters the model may send. */
  input: ToolInput;
  /** The schema of `structuredContent` on success. */
  output: JsonSchema;
  hints: Hints;
  sets: SetName[];
}

/**
 * A tool's parameters: the entries of the method's `params` named in `describe`, in its order.
 * @example
 * pickParams(S.memorySearch, { query: 'Words to find, e.g. "login timeout"' })
 */
export function pickParams<E extends v.ObjectEntries, K extends keyof E & string>(
  // deno-lint-ignore no-explicit-any
  schema: v.StrictObjectSchema<E, any>,
  describe: Record<K, ParamText>,
  alsoRequired: NoInfer<K>[] = [],
): ToolInput {
  // v.pick's type wants at least one key; a tool may take none of its method's params
  const keys = Object.keys(describe) as unknown as v.ObjectKeys<typeof schema>;
  return { schema: v.pick(schema, keys) as unknown as ParamsSchema, describe, alsoRequired };
}

// Hint presets.
export const READS: Hints = { readOnly: true, destructive: false, idempotent: true };
export const ADDS: Hints = { readOnly: false, destructive: false, idempotent: false };
/** Changes state, but repeating the call changes nothing more. */
export const SETTLES: Hints = { readOnly: false, destructive: false, idempotent: true };
/** Can end a task or a run for good. */
export const ENDS: Hints = { readOnly: false, destructive: true, idempotent: false };

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
