/**
 * Which Bash commands count as read-only for the write gate. A command is read-only when every
 * part of it (split on `;`, `&&`, `||`, `|`) starts with a listed read-only command, and it has no
 * output redirection, command substitution or backgrounding. Anything else is a write. Pure.
 */

export const DEFAULT_READ_ONLY = [
  "ls", "cat", "head", "tail", "less", "grep", "rg", "find", "fd", "tree", "wc", "pwd", "echo", "which", "stat",
  "file", "du", "df", "date", "env", "printenv", "whoami", "uname", "sort", "uniq", "cut", "diff", "jq",
  "git status", "git diff", "git log", "git show", "git branch", "git blame", "git rev-parse", "git ls-files",
  "longrun status", "longrun --version", "longrun --help",
];

const WRITE_FLAGS = /(^|\s)(-delete|-exec|-execdir|-ok|-fprint\S*|--output(=|\s))/;

export function isReadOnlyBash(command: string, readOnly: readonly string[] = DEFAULT_READ_ONLY): boolean {
  if (/[>`]|\$\(|<\(|&\s*$|\n/.test(command.replace(/2>&1/g, ""))) return false;
  const parts = command.split(/\|\||&&|;|\|/).map((p) => p.trim()).filter(Boolean);
  if (parts.length === 0) return false;
  return parts.every((part) => {
    if (WRITE_FLAGS.test(part)) return false;
    const words = part.split(/\s+/);
    return readOnly.some((prefix) => {
      const p = prefix.split(/\s+/);
      return p.every((w, i) => words[i] === w);
    });
  });
}
