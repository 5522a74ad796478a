/**
 * The files no agent may touch, whatever its lease says, as one table (policy as data). Pure data
 * on the root's floor, so the root's placement rules (place.ts), the OS sandbox (src/sandbox/) and
 * the gate (src/hooks/protect*.ts, which matches paths against it) read the same rows. The names
 * of longrun's, Claude Code's and git's files in a root come from the root's layout (layout.ts).
 */
import { ruleSegments } from "./layout.ts";

export interface ProtectedRule {
  id: string;
  /** One set of names per path segment, all lowercase; the rule matches consecutive segments. */
  segments: readonly (readonly string[])[];
  /**
   * `anywhere`: at any depth; `longrun_root`: only directly inside a longrun root (a directory
   * holding `.longrun/`, or the hook's root); `absolute`: only as the path's first segments.
   */
  where: "anywhere" | "longrun_root" | "absolute";
  /** Reading is refused too (secrets, the user's words), not only writing. */
  read: boolean;
  /** What it is, for the refusal. */
  what: string;
  /**
   * Paths this rule must refuse to write (and to read, when `read`) and paths it must let through:
   * relative to a longrun root, `~/` the home directory, or absolute. tests/hooks/protected_examples.test.ts
   * runs them through the gate's path check.
   */
  examples: { refused: readonly string[]; pass: readonly string[] };
}

/** The links under /proc/<pid>/ (and /proc/<pid>/task/<tid>/) that lead into a process's files. */
export const PROCESS_VIEWS = ["cwd", "root", "fd", "fdinfo", "map_files", "exe"];

const SHELL_STARTUP = [".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".envrc"];

/**
 * Every protected location. docs/gate.md renders these rows (scripts/gen_docs.ts). The names of
 * longrun's, Claude Code's and git's files in a root come from the root's layout (src/root/layout.ts).
 */
export const PROTECTED: readonly ProtectedRule[] = [
  { id: "longrun_state", segments: ruleSegments("longrun_state"), where: "anywhere", read: true, what: "longrun's state, lock, settings and tokens (.longrun/)", examples: { refused: [".longrun/state.json", "sub/.LONGRUN/tokens", "/elsewhere/.longrun/settings.json"], pass: ["longrun/state.json", ".longrun_notes.txt"] } },
  { id: "longrun_memory", segments: ruleSegments("longrun_memory"), where: "longrun_root", read: true, what: "longrun's memory database (memory.db)", examples: { refused: ["memory.db", "memory.db-wal"], pass: ["docs/memory.db", "memory.db.txt"] } },
  { id: "longrun_raw", segments: ruleSegments("longrun_raw"), where: "longrun_root", read: true, what: "longrun's raw memory bodies (raw_data/)", examples: { refused: ["raw_data/S_0001.txt"], pass: ["data/raw_data/a.txt", "raw_data.txt"] } },
  { id: "claude_settings", segments: ruleSegments("claude_settings"), where: "anywhere", read: false, what: "Claude Code's settings, hooks and commands (.claude/)", examples: { refused: [".claude/settings.json", "sub/.claude/commands/x.md"], pass: ["claude/settings.json", ".claude.md"] } },
  { id: "claude_json", segments: ruleSegments("claude_json"), where: "anywhere", read: false, what: "Claude Code's user configuration (~/.claude.json)", examples: { refused: ["~/.claude.json"], pass: ["~/.claude.json.bak", "claude.json"] } },
  { id: "git_config", segments: ruleSegments("git_config"), where: "anywhere", read: false, what: "git configuration and hooks, which make read-only git commands run programs", examples: { refused: [".git/config", ".git/hooks/pre-commit"], pass: [".git/HEAD", "src/config"] } },
  { id: "git_user_config", segments: [[".gitconfig"]], where: "anywhere", read: false, what: "git configuration (~/.gitconfig)", examples: { refused: ["~/.gitconfig"], pass: ["gitconfig", "~/.gitconfig.d/x"] } },
  { id: "git_xdg_config", segments: [[".config"], ["git"]], where: "anywhere", read: false, what: "git configuration (~/.config/git/)", examples: { refused: ["~/.config/git/config"], pass: ["~/.config/other/x", "git/config"] } },
  { id: "shell_startup", segments: [SHELL_STARTUP], where: "anywhere", read: false, what: "shell startup files, which define the commands every later Bash call runs", examples: { refused: ["~/.bashrc", ".envrc"], pass: ["bashrc.txt", "~/.bashrc.d/x.sh"] } },
  { id: "tool_config", segments: [[".mcp.json", ".vscode", ".idea", ".gitmodules", ".ripgreprc"]], where: "longrun_root", read: false, what: "configuration that starts programs for the user later (.mcp.json's servers, editor tasks, submodules), which Claude Code's own sandbox also keeps read-only", examples: { refused: [".mcp.json", ".vscode/tasks.json"], pass: ["docs/.mcp.json", "mcp.json"] } },
  { id: "process_environment", segments: [["proc"], ["*"], ["environ", "mem"]], where: "absolute", read: true, what: "process environments and memory (which may hold tokens)", examples: { refused: ["/proc/self/environ", "/proc/1/mem"], pass: ["/proc/self/status", "/proc/cpuinfo"] } },
  { id: "process_paths", segments: [["proc"], ["*"], PROCESS_VIEWS], where: "absolute", read: true, what: "another view of a process's files (/proc/*/cwd, root, fd), which can lead anywhere", examples: { refused: ["/proc/1/cwd/x", "/proc/1/fd/3"], pass: ["/proc/1/comm", "/proc/cpuinfo"] } },
  { id: "thread_environment", segments: [["proc"], ["*"], ["task"], ["*"], ["environ", "mem"]], where: "absolute", read: true, what: "process environments and memory (which may hold tokens)", examples: { refused: ["/proc/1/task/1/environ"], pass: ["/proc/1/task/1/status"] } },
  { id: "thread_paths", segments: [["proc"], ["*"], ["task"], ["*"], PROCESS_VIEWS], where: "absolute", read: true, what: "another view of a process's files (/proc/*/task/*/cwd, root, fd), which can lead anywhere", examples: { refused: ["/proc/1/task/1/cwd", "/proc/1/task/1/root/etc"], pass: ["/proc/1/task/1/comm"] } },
  { id: "network_redirection", segments: [["dev"], ["tcp", "udp"]], where: "absolute", read: true, what: "bash's network redirections (/dev/tcp/…, /dev/udp/…), which open a socket", examples: { refused: ["/dev/tcp/127.0.0.1/80", "/dev/udp/10.0.0.1/53"], pass: ["/dev/null", "/dev/stdin"] } },
];

