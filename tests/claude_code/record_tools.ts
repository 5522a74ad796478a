/**
 * Writes fixtures/tools-<version>.json: the tools the pinned Claude Code offers the model, with
 * their input schemas, as the Messages server receives them. Not a test; run it after changing
 * the pinned version:
 *
 *   node_modules/.bin/bun tests/claude_code/record_tools.ts
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { removeDir, tempDir } from "../support/helpers.ts";
import { CLAUDE_VERSION, runClaude, type RunClaudeOptions } from "./claude.ts";

type Tool = { name: string; description?: string; input_schema?: unknown; defer_loading?: boolean };

async function offered(extra: Partial<RunClaudeOptions>): Promise<{ init: string[]; api: Tool[] }> {
  const cwd = tempDir("longrun-cc-tools-");
  const home = tempDir("longrun-cc-home-");
  try {
    const r = await runClaude({ cwd, home, prompt: "hi", steps: [{ text: "hello" }], ...extra });
    if (r.code !== 0) throw new Error(`claude exited ${r.code}: ${r.stderr}`);
    const main = r.requests.find((q) => q.kind === "main");
    return { init: r.initTools, api: (main?.body?.tools as Tool[]) ?? [] };
  } finally {
    removeDir(cwd);
    removeDir(home);
  }
}

const def = await offered({});
const loaded = await offered({ env: { ENABLE_TOOL_SEARCH: "false" } });
const asked = ["Grep", "Glob", "LSP", "TodoWrite", "EnterPlanMode", "ExitPlanMode", "AskUserQuestion", "PowerShell", "BashOutput", "KillShell", "SlashCommand", "NotebookRead"];
const named = await offered({ extraArgs: ["--tools", ["Bash", "Read", ...asked].join(",")] });
const plan = await offered({ permissionMode: "plan" });
const brief = await offered({ extraArgs: ["--brief"] });
const bypass = await offered({ permissionMode: "bypassPermissions" });

const byName = new Map<string, Tool>();
for (const t of [...loaded.api, ...def.api, ...named.api]) if (!byName.has(t.name)) byName.set(t.name, t);
const names = (ts: Tool[]) => ts.map((t) => t.name);
const same = (a: string[], b: string[]) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
const defaultNames = names(def.api);
const deferred = loaded.api.map((t) => t.name).filter((n) => !defaultNames.includes(n));

const fixture = {
  claude_code: CLAUDE_VERSION,
  recorded_with: "tests/claude_code/record_tools.ts: claude -p --output-format stream-json --verbose against tests/claude_code/messages_server.ts, ANTHROPIC_BASE_URL on 127.0.0.1, HOME a fresh temp dir, no settings",
  notes: [
    "default_request: the tools array of the first /v1/messages request in the default mode (ToolSearch on): the schemas sent up front; DeferredToolPlaceholder has defer_loading: true and is not a tool the model calls",
    "deferred: offered by name only (listed in the system prompt, loaded through ToolSearch 'select:<name>'); with ENABLE_TOOL_SEARCH=false they are sent up front, and their schemas here come from that request",
    "init_tools: the names of the stream-json init event; it calls Agent 'Task' (the API name is Agent)",
    "Grep and Glob are not offered by default in this version (Bash's find/grep are the search tools); --tools naming them adds them",
    "not_offered_even_when_named: names passed to --tools that the client dropped silently",
    "plan mode, --brief, acceptEdits, auto, dontAsk, manual and bypassPermissions (as root: IS_SANDBOX=1) offered the same tools as the default",
  ],
  default_request: defaultNames,
  deferred,
  init_tools: def.init,
  only_with_flags: { "--tools Grep,Glob,…": names(named.api).filter((n) => !byName.has(n) || ![...defaultNames, ...deferred].includes(n)).filter((n) => n !== "DeferredToolPlaceholder") },
  not_offered_even_when_named: asked.filter((n) => !names(named.api).includes(n)),
  same_as_default: { "--permission-mode plan": same(names(plan.api), defaultNames), "--brief": same(names(brief.api), defaultNames), "--permission-mode bypassPermissions": same(names(bypass.api), defaultNames) },
  tools: [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)).map((t) => ({
    name: t.name,
    offered: defaultNames.includes(t.name) ? "default" : deferred.includes(t.name) ? "deferred" : "only with --tools",
    input_schema: t.input_schema ?? null,
  })),
};
const file = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "fixtures", `tools-${CLAUDE_VERSION}.json`);
writeFileSync(file, JSON.stringify(fixture, null, 2) + "\n");
console.log(`wrote ${file}: ${fixture.tools.length} tools (${defaultNames.length} in the default request, ${deferred.length} deferred)`);
