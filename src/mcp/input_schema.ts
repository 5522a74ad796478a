/**
 * A tool's inputSchema as the model reads it, derived from the valibot params that validate the
 * call (@valibot/to-json-schema), then made lean, since a client sends the tool list with every
 * model request. The rules, one function each, are the whole difference from valibot's output:
 *
 * - Kept: `type`, `enum` (a list of strings says `type: "string"` first), `items`, `properties`,
 *   `required`, and `minimum` on a parameter itself (whether a count starts at 0 or 1 is what a
 *   model gets wrong). Dropped: lengths, patterns, formats, maxima, nested minima and
 *   `additionalProperties: false`: the protocol checks them on every call, and an unknown argument
 *   is refused by name anyway (src/mcp/args.ts).
 * - Each parameter gets its description (written for the model, with an example) last.
 * - Where a parameter's `ParamText` gives `shown`, that schema is shown instead, for the reason it
 *   gives (a shape valibot cannot say leanly, such as a union, or a value space offered narrower
 *   than the protocol's).
 *
 * Only scripts/gen_mcp_schemas.ts and its drift test call this; the server reads the generated file.
 */
import { type JsonSchema as ValibotJsonSchema, toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import type { JsonSchema, ParamText, ToolDef } from "./tool_def.ts";

/** The inputSchema of a tool, without the `root` a server for several roots adds. */
export interface InputSchema {
  type: "object";
  properties: Record<string, JsonSchema>;
  required?: string[];
}

/** The keys kept, in the order the model reads them. */
const KEPT = ["type", "minimum", "enum", "items", "properties", "required"] as const;

function lean(schema: ValibotJsonSchema, where: string, top: boolean): JsonSchema {
  const s = schema as Record<string, unknown>;
  if (s.anyOf || s.oneOf || s.allOf || (s.type === undefined && s.enum === undefined)) {
    throw new Error(`${where}: no lean JSON Schema for ${JSON.stringify(schema)}; give the parameter a shown schema (src/mcp/tool_def.ts ParamText)`);
  }
  const out: JsonSchema = {};
  for (const key of KEPT) {
    if (key === "type" && s.type === undefined && Array.isArray(s.enum) && s.enum.every((x) => typeof x === "string")) out.type = "string";
    if (s[key] === undefined || (key === "minimum" && !top)) continue;
    if (key === "items") out.items = lean(s.items as ValibotJsonSchema, `${where}[]`, false);
    else if (key === "properties") {
      out.properties = Object.fromEntries(Object.entries(s.properties as Record<string, ValibotJsonSchema>).map(([k, p]) => [k, lean(p, `${where}.${k}`, false)]));
    } else if (key === "required" && (s.required as string[]).length === 0) continue;
    else out[key] = s[key];
  }
  return out;
}

function described(text: ParamText, derived: () => JsonSchema): JsonSchema {
  return typeof text === "string" ? { ...derived(), description: text } : { ...text.shown, description: text.description };
}

/** The tool's params with `alsoRequired` made required, as valibot's `v.required` would. */
function modelParams(t: ToolDef) {
  const entries = { ...t.input.schema.entries };
  for (const k of t.input.alsoRequired) {
    const entry = entries[k];
    if (!entry || entry.type !== "optional") throw new Error(`${t.name}: alsoRequired ${k} is not an optional param of ${t.method}`);
    entries[k] = (entry as v.OptionalSchema<v.GenericSchema, undefined>).wrapped;
  }
  return v.strictObject(entries);
}

/**
 * The inputSchema the model reads for one tool.
 * @example inputSchemaOf(TOOLS.find((t) => t.name === "writes_require")!).required // ["action"]
 */
export function inputSchemaOf(t: ToolDef): InputSchema {
  const names = Object.keys(t.input.schema.entries);
  const missing = names.filter((n) => !(n in t.input.describe));
  if (missing.length) throw new Error(`${t.name}: no description for ${missing.join(", ")}`);
  const json = toJsonSchema(modelParams(t), { errorMode: "ignore" }) as { properties: Record<string, ValibotJsonSchema>; required?: string[] };
  const properties = Object.fromEntries(names.map((n) => [n, described(t.input.describe[n]!, () => lean(json.properties[n]!, `${t.name}.${n}`, true))]));
  const required = json.required ?? [];
  return { type: "object", properties, ...(required.length ? { required } : {}) };
}
