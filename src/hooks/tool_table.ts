/**
 * Every Claude Code tool the gate knows, with what it may do in each mode (policy as data). A tool
 * that is not in this table, nor named by the user in `.longrun/hooks.json`, is denied in every
 * mode: a new tool of a new Claude Code is refused until someone has decided what it can do.
 *
 * Built from Claude Code's tools reference and from the tools the real 2.1.328 CLI sends with its
 * requests (tests/claude_code/fixtures/tools-2.1.328.json; tests/hooks/tool_table.test.ts fails
 * when that list names a tool this table does not).
 *
 * Kinds:
 * - `read`: reads files; the named fields are paths (and `globs` are patterns) checked against the
 *   protected paths; passes in every mode.
 * - `inert`: touches no file and runs nothing (a to-do list, a question to the user); passes.
 * - `write`: writes the one file its field names; needs the turn's lease, never a protected path.
 * - `shell`: runs a shell command (field `command`); read by the parser, then run inside the OS
 *   boundary the lease chooses (`longrun sandbox`); `background` ones outlive the call.
 * - `deny`: refused in every mode, with the reason.
 */

export type ToolRule = (
  | { kind: "read"; paths: readonly string[]; required?: string; globs?: readonly string[] }
  | { kind: "inert"; forgeCheck?: boolean }
  | { kind: "write"; path: string }
  | { kind: "shell"; background: boolean }
  | { kind: "deny"; why: string }
) & {
  /** Input fields refused when given (not null), with the reason: a way out of what the row allows. */
  refuse?: Readonly<Record<string, string>>;
};

const WORKTREE = "a worktree moves the work out of this root, where longrun's lease does not reach";

const SCHEDULES = "it schedules a prompt or a run that arrives later as if the user had sent it, and only the user starts a turn";

/** One row a tool, with a call it decides (`example`) to document the row. */
export const TOOLS: Readonly<Record<string, ToolRule & { example?: Record<string, unknown> }>> = {
  Read: { kind: "read", paths: ["file_path"], required: "file_path", example: { file_path: "src/main.ts" } },
  Grep: { kind: "read", paths: ["path"], globs: ["glob"], example: { pattern: "TODO", path: "src" } },
  Glob: { kind: "read", paths: ["path"], globs: ["pattern"], example: { pattern: "src/**/*.ts" } },
  LSP: { kind: "read", paths: ["file_path", "filePath"], example: { operation: "hover", filePath: "src/main.ts", line: 1, character: 1 } },
  NotebookRead: { kind: "read", paths: ["notebook_path"], required: "notebook_path", example: { notebook_path: "a.ipynb" } },
  WebFetch: { kind: "inert", example: { url: "https://example.com", prompt: "summarise" } },
  WebSearch: { kind: "inert", example: { query: "libsql vector" } },
  TodoWrite: { kind: "inert", example: { todos: [] } },
  Agent: { kind: "inert", forgeCheck: true, refuse: { isolation: WORKTREE }, example: { description: "look", prompt: "find the parser" } },
  Task: { kind: "inert", forgeCheck: true, refuse: { isolation: WORKTREE }, example: { description: "look", prompt: "find the parser" } },
  AskUserQuestion: { kind: "inert", example: { questions: [] } },
  EnterPlanMode: { kind: "inert" },
  ExitPlanMode: { kind: "inert", example: { plan: "1. read" } },
  ListMcpResourcesTool: { kind: "inert" },
  // it reads through any MCP server, outside every sandbox: whatever it names is checked like a path
  ReadMcpResourceTool: { kind: "read", paths: [], example: { server: "longrun", uri: "longrun://task/current" } },
  ToolSearch: { kind: "inert", example: { query: "notebook" } },
  ListAgents: { kind: "inert", example: { q: "reviewer" } },
  ReportFindings: { kind: "inert", forgeCheck: true, example: { level: "info", findings: [] } },
  WaitForMcpServers: { kind: "inert" },
  TaskOutput: { kind: "inert", example: { task_id: "b1" } },
  BashOutput: { kind: "inert", example: { bash_id: "b1" } },
  TaskGet: { kind: "inert" },
  TaskList: { kind: "inert" },
  TaskCreate: { kind: "inert", forgeCheck: true, example: { subject: "write tests", description: "" } },
  TaskUpdate: { kind: "inert", forgeCheck: true },
  TaskStop: { kind: "inert", example: { task_id: "b1" } },
  KillShell: { kind: "inert", example: { shell_id: "b1" } },
  CronList: { kind: "inert" },
  CronDelete: { kind: "inert" },
  Skill: { kind: "inert", forgeCheck: true, example: { skill: "pdf" } },
  SlashCommand: { kind: "inert", forgeCheck: true, example: { command: "/review" } },
  Write: { kind: "write", path: "file_path", example: { file_path: "a.txt", content: "x" } },
  Edit: { kind: "write", path: "file_path", example: { file_path: "a.txt", old_string: "x", new_string: "y" } },
  MultiEdit: { kind: "write", path: "file_path", example: { file_path: "a.txt", edits: [] } },
  NotebookEdit: { kind: "write", path: "notebook_path", example: { notebook_path: "a.ipynb", new_source: "1" } },
  Bash: { kind: "shell", background: false, example: { command: "git status" } },
  Monitor: { kind: "shell", background: true, refuse: { ws: "a Monitor on a socket connects to the network, which commands may not" }, example: { command: "cat log.txt" } },
  DeferredToolPlaceholder: { kind: "deny", why: "it stands for tools not loaded yet and is not a tool to call" },
  PowerShell: { kind: "deny", why: "longrun cannot check PowerShell commands; use Bash" },
  CronCreate: { kind: "deny", why: SCHEDULES },
  ScheduleWakeup: { kind: "deny", why: SCHEDULES },
  RemoteTrigger: { kind: "deny", why: SCHEDULES },
  Workflow: { kind: "deny", why: "a workflow runs steps longrun does not see one by one" },
  SendMessage: { kind: "deny", why: "a message to another agent carries words longrun cannot check, and the other agent may hold another lease" },
  TeamCreate: { kind: "deny", why: "a team of agents works outside this turn's lease" },
  TeamDelete: { kind: "deny", why: "a team of agents works outside this turn's lease" },
  EnterWorktree: { kind: "deny", why: WORKTREE },
  ExitWorktree: { kind: "deny", why: WORKTREE },
};

/** longrun's own MCP tools are agent-side calls that longrun itself authorizes. */
export const OWN_MCP_PREFIX = "mcp__longrun__";

/** What happens to a tool the table does not name, unless `.longrun/hooks.json` names it. */
export function unknownToolReason(tool: string): string {
  return `${tool} is a tool longrun does not know, so it is refused in every mode; a user who trusts it adds it to "read_only_tools" (it changes nothing) or "lease_tools" (it writes, so it needs the turn's lease) in .longrun/hooks.json`;
}
