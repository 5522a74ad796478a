/**
 * Which Bash commands count as read-only for the write gate. The rule is deliberately narrow;
 * anything it does not recognise is a write and needs the lease:
 * - no shell syntax beyond `&&`, `||`, `;` and `|`: no redirection, background `&`, command
 *   substitution, variables, quotes, escapes, globs or braces (they can hide what runs or what is
 *   read: `lon''grun`, `.longru?/…`, `$(…)`);
 * - every part starts with a known read-only command, called by its bare name (no path, no
 *   `VAR=value` prefix), without the flags that make it write (`sort -o`, `find -delete`,
 *   `fd -x`, `tree -o`, `date -s`, `git diff --output`, …) or search recursively through file
 *   contents (`grep -r`), which would read longrun's own files.
 * Pure.
 */

interface Rule {
  /** Flags that make the command write (or read recursively); a short flag also counts inside a cluster like `-nr`. */
  deny?: string[];
  /** When set, only these flags are allowed and no other argument. */
  only?: string[];
}

const ANY: Rule = {};

/** Built-in read-only commands (a command with more words, like `git status`, is matched on all of them). */
export const READ_ONLY_RULES: Record<string, Rule> = {
  ls: ANY,
  cat: ANY,
  head: ANY,
  tail: ANY,
  less: ANY,
  wc: ANY,
  stat: ANY,
  file: ANY,
  du: ANY,
  df: ANY,
  pwd: ANY,
  echo: ANY,
  which: ANY,
  whoami: ANY,
  uname: ANY,
  cut: ANY,
  diff: ANY,
  jq: ANY,
  grep: { deny: ["-r", "-R", "--recursive", "--dereference-recursive", "-d", "--directories"] },
  find: { deny: ["-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"] },
  fd: { deny: ["-x", "-X", "--exec", "--exec-batch"] },
  tree: { deny: ["-o"] },
  sort: { deny: ["-o", "--output"] },
  date: { deny: ["-s", "--set"] },
  "git status": ANY,
  "git diff": { deny: ["--output"] },
  "git log": { deny: ["--output"] },
  "git show": { deny: ["--output"] },
  "git blame": ANY,
  "git rev-parse": ANY,
  "git ls-files": ANY,
  "git branch": { only: ["-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--list", "--show-current"] },
  "longrun status": ANY,
  "longrun --version": { only: [] },
  "longrun --help": { only: [] },
};

export const DEFAULT_READ_ONLY = Object.keys(READ_ONLY_RULES);

const SHELL_SYNTAX = /[<>`$'"\\*?[\]{}!()\n\r]|(^|\s)[~#]|(?<!&)&(?!&)/;

function denied(word: string, deny: readonly string[]): boolean {
  for (const d of deny) {
    if (word === d || (d.startsWith("--") && word.startsWith(d + "="))) return true;
    // a short flag inside a cluster: -nr contains -r
    if (d.length === 2 && d[0] === "-" && /^-[A-Za-z0-9]{2,}$/.test(word) && word.includes(d[1]!)) return true;
  }
  return false;
}

function partIsReadOnly(words: string[], extra: readonly string[]): boolean {
  const name = words[0] ?? "";
  if (name.includes("/") || name.includes("=")) return false;
  for (const [prefix, rule] of Object.entries(READ_ONLY_RULES)) {
    const p = prefix.split(" ");
    if (!p.every((w, i) => words[i] === w)) continue;
    const args = words.slice(p.length);
    if (rule.only) return args.every((a) => rule.only!.includes(a));
    return !args.some((a) => denied(a, rule.deny ?? []));
  }
  // Configured prefixes (.longrun/hooks.json): the user vouches for them, with any arguments.
  return extra.some((prefix) => {
    const p = prefix.split(/\s+/);
    return p.every((w, i) => words[i] === w);
  });
}

/** True when `command` is read-only by the rule above; `extra` adds configured command prefixes. */
export function isReadOnlyBash(command: string, extra: readonly string[] = []): boolean {
  if (SHELL_SYNTAX.test(command)) return false;
  const parts = command.split(/\|\||&&|;|\|/).map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => p === "")) return false;
  return parts.every((part) => partIsReadOnly(part.split(/\s+/), extra));
}

/** The command with quotes and escapes removed, for spotting a name written as `lon''grun`. */
export function unquoted(command: string): string {
  return command.replace(/['"\\]/g, "");
}
