/**
 * The MCP tools' inputSchemas are generated from the valibot params that validate each call
 * (scripts/gen_mcp_schemas.ts): the checked-in file is what the script renders now, and the
 * derivation refuses what it cannot show leanly instead of guessing.
 *
 * After a deliberate change to a tool's params, a description or a method's schema: bun scripts/gen_mcp_schemas.ts
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import * as v from "valibot";
import { GENERATED, renderInputSchemas } from "../../scripts/gen_mcp_schemas.ts";
import { inputSchemaOf } from "../../src/mcp/input_schema.ts";
import { pickParams, READS, type ToolDef } from "../../src/mcp/tool_def.ts";
import { TOOLS } from "../../src/mcp/tool_sets.ts";
import { params } from "../../src/rpc/schemas.ts";

function tool(input: ToolDef["input"]): ToolDef {
  return { name: "probe", method: "probe.method", description: "A probe", input, output: { type: "object" }, hints: READS, sets: [] };
}

describe("generated MCP input schemas", () => {
  test("src/mcp/generated/input_schemas.ts is what scripts/gen_mcp_schemas.ts renders from the valibot params", () => {
    assert.equal(readFileSync(GENERATED, "utf8"), renderInputSchemas(), "the generated input schemas drifted: run bun scripts/gen_mcp_schemas.ts and review the diff");
  });

  test("every parameter shown other than valibot derives it says why", () => {
    for (const t of TOOLS) {
      for (const [name, text] of Object.entries(t.input.describe)) {
        if (typeof text !== "string") assert.ok(text.why.length > 20, `${t.name}.${name} gives a reason for its shown schema`);
      }
    }
  });

  test("a lean schema keeps type, enum, items, properties, required and a parameter's own minimum, then the description", () => {
    const schema = params({
      count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50))),
      mode: v.picklist(["a", "b"]),
      tags: v.optional(v.pipe(v.array(v.pipe(v.number(), v.minValue(0))), v.maxLength(5))),
      note: v.pipe(v.string(), v.minLength(1), v.maxLength(10), v.regex(/^x/)),
    });
    const input = inputSchemaOf(tool(pickParams(schema, { count: "How many, e.g. 2", mode: 'e.g. "a"', tags: "e.g. [1]", note: 'e.g. "x"' })));
    assert.equal(
      JSON.stringify(input),
      JSON.stringify({
        type: "object",
        properties: {
          count: { type: "integer", minimum: 1, description: "How many, e.g. 2" },
          mode: { type: "string", enum: ["a", "b"], description: 'e.g. "a"' },
          tags: { type: "array", items: { type: "number" }, description: "e.g. [1]" },
          note: { type: "string", description: 'e.g. "x"' },
        },
        required: ["mode", "note"],
      }),
    );
  });

  test("a union without a shown schema, or alsoRequired naming a required param, is refused when generating", () => {
    const schema = params({ either: v.union([v.boolean(), v.string()]), id: v.string() });
    assert.throws(() => inputSchemaOf(tool(pickParams(schema, { either: "e.g. true" }))), /probe\.either: no lean JSON Schema/);
    assert.throws(() => inputSchemaOf(tool(pickParams(schema, { id: 'e.g. "x"' }, ["id"]))), /alsoRequired id is not an optional param/);
    const shown = { description: "e.g. true", shown: { type: ["boolean", "string"] }, why: "a union is an anyOf; one type list is shorter" };
    assert.deepEqual(inputSchemaOf(tool(pickParams(schema, { either: shown }))).properties.either, { type: ["boolean", "string"], description: "e.g. true" });
  });
});
