/**
 * Which tools a server offers: `default` (a coding agent: the task, the write check, checkpoints,
 * memory), `research` (default plus the long-research-run tools), `all` (every agent-side tool),
 * or a comma list mixing set and tool names (`default,task_transition`). Host-side methods are in
 * no table, so no spelling of `--tools` can reach them.
 */
import { INPUT_SCHEMAS } from "./generated/input_schemas.ts";
import type { JsonSchema, ToolDef } from "./tool_def.ts";
import { deliverableTools } from "./tools_deliverables.ts";
import { runTools } from "./tools_runs.ts";
import { memoryTools, taskTools } from "./tools_task.ts";

/** Every MCP tool, in the order tools/list gives them. */
export const TOOLS: readonly ToolDef[] = [...taskTools, ...memoryTools, ...runTools, ...deliverableTools];

export const SET_NAMES = ["default", "research", "all"] as const;
export type ToolSetName = (typeof SET_NAMES)[number];

/** A `--tools` value that names no set and no tool. */
export class ToolSetError extends Error {
  constructor(readonly word: string) {
    super(
      `unknown tool set or tool ${JSON.stringify(word)} in --tools: sets are ${SET_NAMES.join(", ")}; tools are ${TOOLS.map((t) => t.name).join(", ")}`,
    );
    this.name = "ToolSetError";
  }
}

function inSet(set: ToolSetName, t: ToolDef): boolean {
  return set === "all" || t.sets.includes(set);
}

/**
 * The tools a `--tools` value selects, in catalogue order; null or empty is `default`.
 * @example selectTools("default,task_transition").map((t) => t.name)
 */
export function selectTools(spec?: string | null): ToolDef[] {
  const words = (spec ?? "").split(",").map((w) => w.trim()).filter(Boolean);
  const chosen = new Set<string>();
  for (const word of words.length ? words : ["default"]) {
    if ((SET_NAMES as readonly string[]).includes(word)) {
      for (const t of TOOLS) if (inSet(word as ToolSetName, t)) chosen.add(t.name);
    } else if (TOOLS.some((t) => t.name === word)) {
      chosen.add(word);
    } else {
      throw new ToolSetError(word);
    }
  }
  return TOOLS.filter((t) => chosen.has(t.name));
}

/** The `root` argument a server for several roots adds to every tool. */
export const ROOT_PARAM: JsonSchema = {
  type: "string",
  description: 'The project directory (absolute; default: the server\'s root), e.g. "/home/me/project"',
};

export interface ListedTool {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: "object" };
  outputSchema: JsonSchema & { type: "object" };
  annotations: { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint: false };
}

/**
 * A tool as tools/list shows it, its inputSchema from src/mcp/generated/. `withRoot`: the server serves several roots. Kept lean, since a
 * client sends the list with every model request: no display title (the name reads well), no
 * `additionalProperties: false` (an unknown argument is refused by name anyway), and for a
 * read-only tool no destructive or idempotent hint (the spec gives them meaning only when
 * readOnlyHint is false). openWorldHint is always false: longrun reaches nothing outside the project.
 */
export function listed(t: ToolDef, withRoot: boolean): ListedTool {
  const input = INPUT_SCHEMAS[t.name];
  if (!input) throw new Error(`MCP tool ${t.name} has no generated inputSchema: run bun scripts/gen_mcp_schemas.ts`);
  const properties = withRoot ? { ...input.properties, root: ROOT_PARAM } : input.properties;
  return {
    name: t.name,
    description: t.description,
    inputSchema: { type: "object", properties, ...(input.required ? { required: input.required } : {}) },
    outputSchema: t.output as JsonSchema & { type: "object" },
    annotations: t.hints.readOnly
      ? { readOnlyHint: true, openWorldHint: false }
      : { readOnlyHint: false, destructiveHint: t.hints.destructive, idempotentHint: t.hints.idempotent, openWorldHint: false },
  };
}
