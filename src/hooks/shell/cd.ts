/**
 * Where a `cd`-like command leads, so the paths after it are checked against the directory they
 * will really be read in. Pure apart from resolving symlinks on the way.
 */
import { resolveExisting } from "../protect.ts";

/**
 * `words` are a command's words as text (null where a word is not plain text). Returns the new
 * directory, "unknown" when it cannot be told (`cd -`, `popd`, an expansion, several operands),
 * or null when the command does not change directory.
 */
export function cdTarget(words: readonly (string | null)[], cwd: string, home: string): string | "unknown" | null {
  let i = 0;
  while (words[i] === "command" || words[i] === "builtin") i++;
  const name = words[i];
  if (name === "popd") return "unknown";
  if (name !== "cd" && name !== "pushd" && name !== "chdir") return null;
  const rest = words.slice(i + 1);
  const operands: (string | null)[] = [];
  let options = true;
  for (const w of rest) {
    if (w === null) return "unknown";
    if (options && w === "--") {
      options = false;
      continue;
    }
    if (options && /^-[LPe@n]+$/.test(w)) continue;
    if (options && /^[+-]\d+$/.test(w)) return "unknown";
    options = false;
    operands.push(w);
  }
  if (operands.length > 1) return "unknown";
  const target = operands[0];
  if (target === undefined) return name === "pushd" ? "unknown" : home;
  if (target === null || target === "-" || target === "") return "unknown";
  return resolveExisting(target.startsWith("/") ? target : `${cwd}/${target}`);
}

/**
 * Every directory a script may be in by each of its commands. A `cd` in a pipeline or a subshell
 * may not stick, so a directory once reached is never dropped: each command is checked once for
 * every directory an earlier `cd` may have led to. Both Bash checks (read-only and lease) walk a
 * script with one of these.
 */
export class Directories {
  readonly #dirs: Set<string>;
  readonly #home: string;
  readonly #max: number;

  constructor(start: string, home: string, max: number) {
    this.#dirs = new Set([start]);
    this.#home = home;
    this.#max = max;
  }

  /** Each command with each directory it may run in, in order (directories reached later included). */
  *steps<C>(commands: readonly C[]): Generator<{ command: C; at: number; cwd: string }> {
    for (const [at, command] of commands.entries()) for (const cwd of [...this.#dirs]) yield { command, at, cwd };
  }

  /**
   * Follows a command's words (see `cdTarget`) run in `cwd`: "unknown" when it changes to a
   * directory that cannot be told, "too_many" when the script may now be in more than `max`
   * directories, else null.
   */
  follow(words: readonly (string | null)[], cwd: string): "unknown" | "too_many" | null {
    const next = cdTarget(words, cwd, this.#home);
    if (next === "unknown") return "unknown";
    if (next !== null) this.#dirs.add(next);
    return this.#dirs.size > this.#max ? "too_many" : null;
  }
}
