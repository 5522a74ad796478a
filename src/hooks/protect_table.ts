/**
 * The files no agent may touch, whatever its lease says, as one table (policy as data), and how a
 * path's segments meet it: names compare case-insensitively and after Unicode NFKC folding
 * (`.LONGRUN`, fullwidth dots), and a segment that is a pattern meets a name it could match under
 * bash's rules. Pure: what lies on disk is src/hooks/protect.ts's part.
 */
import { ruleSegments } from "../root/layout.ts";
import { type Tok, tokensMatch } from "./shell/words.ts";

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
}

/** The links under /proc/<pid>/ (and /proc/<pid>/task/<tid>/) that lead into a process's files. */
export const PROCESS_VIEWS = ["cwd", "root", "fd", "fdinfo", "map_files", "exe"];

const SHELL_STARTUP = [".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".envrc"];

/**
 * Every protected location. docs/gate.md renders these rows (scripts/gen_docs.ts). The names of
 * longrun's, Claude Code's and git's files in a root come from the root's layout (src/root/layout.ts).
 */
export const PROTECTED: readonly ProtectedRule[] = [
  { id: "longrun_state", segments: ruleSegments("longrun_state"), where: "anywhere", read: true, what: "longrun's state, lock, settings and tokens (.longrun/)" },
  { id: "longrun_memory", segments: ruleSegments("longrun_memory"), where: "longrun_root", read: true, what: "longrun's memory database (memory.db)" },
  { id: "longrun_raw", segments: ruleSegments("longrun_raw"), where: "longrun_root", read: true, what: "longrun's raw memory bodies (raw_data/)" },
  { id: "claude_settings", segments: ruleSegments("claude_settings"), where: "anywhere", read: false, what: "Claude Code's settings, hooks and commands (.claude/)" },
  { id: "claude_json", segments: ruleSegments("claude_json"), where: "anywhere", read: false, what: "Claude Code's user configuration (~/.claude.json)" },
  { id: "git_config", segments: ruleSegments("git_config"), where: "anywhere", read: false, what: "git configuration and hooks, which make read-only git commands run programs" },
  { id: "git_user_config", segments: [[".gitconfig"]], where: "anywhere", read: false, what: "git configuration (~/.gitconfig)" },
  { id: "git_xdg_config", segments: [[".config"], ["git"]], where: "anywhere", read: false, what: "git configuration (~/.config/git/)" },
  { id: "shell_startup", segments: [SHELL_STARTUP], where: "anywhere", read: false, what: "shell startup files, which define the commands every later Bash call runs" },
  { id: "tool_config", segments: [[".mcp.json", ".vscode", ".idea", ".gitmodules", ".ripgreprc"]], where: "longrun_root", read: false, what: "configuration that starts programs for the user later (.mcp.json's servers, editor tasks, submodules), which Claude Code's own sandbox also keeps read-only" },
  { id: "process_environment", segments: [["proc"], ["*"], ["environ", "mem"]], where: "absolute", read: true, what: "process environments and memory (which may hold tokens)" },
  { id: "process_paths", segments: [["proc"], ["*"], PROCESS_VIEWS], where: "absolute", read: true, what: "another view of a process's files (/proc/*/cwd, root, fd), which can lead anywhere" },
  { id: "thread_environment", segments: [["proc"], ["*"], ["task"], ["*"], ["environ", "mem"]], where: "absolute", read: true, what: "process environments and memory (which may hold tokens)" },
  { id: "thread_paths", segments: [["proc"], ["*"], ["task"], ["*"], PROCESS_VIEWS], where: "absolute", read: true, what: "another view of a process's files (/proc/*/task/*/cwd, root, fd), which can lead anywhere" },
  { id: "network_redirection", segments: [["dev"], ["tcp", "udp"]], where: "absolute", read: true, what: "bash's network redirections (/dev/tcp/…, /dev/udp/…), which open a socket" },
];

export type Access = "read" | "write";

export function fold(s: string): string {
  return s.normalize("NFKC").toLowerCase();
}

export function foldTokens(tokens: readonly Tok[]): Tok[] {
  const out: Tok[] = [];
  for (const t of tokens) {
    if (t.t === "c") for (const ch of fold(t.c)) out.push({ t: "c", c: ch });
    else if (t.t === "class") out.push({ t: "class", neg: t.neg, chars: fold(t.chars) + t.chars.toUpperCase() });
    else out.push(t);
  }
  return out;
}

/** Splits tokens at literal slashes into path segments. */
export function segmentsOf(tokens: readonly Tok[]): { absolute: boolean; segs: Tok[][] } {
  const segs: Tok[][] = [[]];
  for (const t of tokens) {
    if (t.t === "c" && t.c === "/") segs.push([]);
    else segs.at(-1)!.push(t);
  }
  const absolute = tokens[0]?.t === "c" && tokens[0].c === "/";
  return { absolute, segs: segs.filter((s) => s.length > 0) };
}

export const lit = (s: string): Tok[] => [...s].map((c) => ({ t: "c", c }) as Tok);
export const isLit = (seg: readonly Tok[]) => seg.every((t) => t.t === "c");
export const segText = (seg: readonly Tok[]) => seg.map((t) => (t.t === "c" ? t.c : "*")).join("");

export function canMatch(seg: readonly Tok[], names: readonly string[], dotglob: boolean): boolean {
  if (names.includes("*")) return true;
  if (isLit(seg)) return names.includes(segText(seg)); // the common case: no pattern to run
  return names.some((n) => tokensMatch(seg, n, dotglob));
}

/**
 * The rule a list of absolute segments falls under, if any. `inRoot` says whether a directory
 * (given by its segments) is a longrun root; null means "assume it is" (free text).
 */
export function ruleFor(segs: readonly Tok[][], access: Access | ((r: ProtectedRule) => boolean), inRoot: ((dir: string) => boolean) | null, dotglob: boolean): ProtectedRule | null {
  const folded = segs.map(foldTokens);
  // each segment's text once (null for a pattern), so a long path costs one pass per rule
  const texts = folded.map((seg) => (isLit(seg) ? segText(seg) : null));
  const matches = (k: number, names: readonly string[]) => {
    const t = texts[k];
    return names.includes("*") || (t !== null ? names.includes(t!) : names.some((n) => tokensMatch(folded[k]!, n, dotglob)));
  };
  for (const rule of PROTECTED) {
    if (access === "read" ? !rule.read : access !== "write" && !access(rule)) continue;
    const n = rule.segments.length;
    const last = rule.where === "absolute" ? 0 : folded.length - n;
    for (let i = 0; i <= last; i++) {
      if (i + n > folded.length) continue;
      if (!rule.segments.every((names, k) => matches(i + k, names))) continue;
      // the standard streams (/dev/stdout is /proc/self/fd/1) lead nowhere else
      if (rule.id === "process_paths" && segs.length === 4 && isLit(segs[2]!) && segText(segs[2]!) === "fd" && isLit(segs[3]!) && ["0", "1", "2"].includes(segText(segs[3]!))) continue;
      if (rule.where === "longrun_root" && inRoot) {
        const parent = segs.slice(0, i);
        if (parent.every(isLit) && !inRoot("/" + parent.map(segText).join("/"))) continue;
      }
      return rule;
    }
  }
  return null;
}
