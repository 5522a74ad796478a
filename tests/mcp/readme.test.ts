/** The MCP docs (docs/mcp.md, where the README's MCP section lives) tell the truth: set-ups for the default and research sets, each set's tools, the measured size. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { encode as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { listed, selectTools } from "../../src/mcp/tool_sets.ts";
import { REPO } from "../support/helpers.ts";

const section = readFileSync(join(REPO, "docs", "mcp.md"), "utf8");

describe("docs/mcp.md", () => {
  test("shows claude mcp add and .mcp.json set-ups for the default and the research set", () => {
    assert.match(section, /claude mcp add longrun -- longrun mcp --root \/abs\/project +#/);
    assert.match(section, /claude mcp add longrun -- longrun mcp --root \/abs\/project --tools research/);
    const configs = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as { mcpServers: { longrun: { command: string; args: string[] } } });
    const args = configs.map((c) => c.mcpServers.longrun.args.join(" "));
    assert.deepEqual(args, ["mcp --root /abs/project", "mcp --root /abs/project --tools research"]);
  });

  test("lists each set's tools as the code selects them", () => {
    const row = (set: string) => section.split("\n").find((l) => l.startsWith(`| \`${set}\``))!;
    const named = (line: string) => [...line.split("|")[2]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    const def = selectTools("default").map((t) => t.name);
    assert.deepEqual(named(row("default")), def);
    assert.deepEqual(named(row("research")), selectTools("research").map((t) => t.name).filter((n) => !def.includes(n)));
    assert.deepEqual(named(row("all")), selectTools("all").map((t) => t.name).filter((n) => !selectTools("research").some((t) => t.name === n)));
  });

  test("states the default set's measured size", () => {
    const tokens = (set: string) => o200k(JSON.stringify({ tools: selectTools(set).map((t) => listed(t, false)) })).length;
    const fmt = (n: number) => n.toLocaleString("en-US");
    assert.ok(section.includes(`default ${fmt(tokens("default"))} tokens`), `docs/mcp.md says default ${fmt(tokens("default"))} tokens`);
    assert.ok(section.includes(`research ${fmt(tokens("research"))}`), `docs/mcp.md says research ${fmt(tokens("research"))}`);
    assert.ok(section.includes(`all ${fmt(tokens("all"))}`), `docs/mcp.md says all ${fmt(tokens("all"))}`);
  });
});
