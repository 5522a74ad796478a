/**
 * Where a `cd`-like command leads, so the paths after it are checked against the directory they
 * will really be read in, and `$PWD` is what bash would make it. Pure apart from resolving
 * symlinks on the way.
 */
import { resolveExisting } from "../protect.ts";

/**
 * `words` are a command's words as text (null where a word is not plain text); `pwd` is the
 * shell's `$PWD`, the logical directory (symlinks kept as named). Returns the new `$PWD`,
 * "unknown" when it cannot be told (`cd -`, `popd`, an expansion, several operands, a `..` that
 * bash would take lexically to another directory than the one it names on disk), or null when
 * the command does not change directory.
 */
export function cdTarget(words: readonly (string | null)[], pwd: string, home: string): string | "unknown" | null {
  let i = 0;
  while (words[i] === "command" || words[i] === "builtin") i++;
  const name = words[i];
  if (name === "popd") return "unknown";
  if (name !== "cd" && name !== "pushd" && name !== "chdir") return null;
  const rest = words.slice(i + 1);
  const operands: (string | null)[] = [];
  let options = true;
  let physical = false;
  for (const w of rest) {
    if (w === null) return "unknown";
    if (options && w === "--") {
      options = false;
      continue;
    }
    if (options && /^-[LPe@n]+$/.test(w)) {
      for (const ch of w) if (ch === "L" || ch === "P") physical = ch === "P";
      continue;
    }
    if (options && /^[+-]\d+$/.test(w)) return "unknown";
    options = false;
    operands.push(w);
  }
  if (operands.length > 1) return "unknown";
  const target = operands[0];
  if (target === undefined) return name === "pushd" ? "unknown" : home;
  if (target === null || target === "-" || target === "") return "unknown";
  const named = target.startsWith("/") ? target : `${pwd}/${target}`;
  const onDisk = resolveExisting(named);
  if (physical) return onDisk;
  // bash's default (cd -L) takes `..` off the path as text, before symlinks are followed
  const lexical = lexicalPath(named);
  return resolveExisting(lexical) === onDisk ? lexical : "unknown";
}

/** `path` with `.`, empty and `..` segments taken off as text (`/a/link/..` is `/a`). */
export function lexicalPath(path: string): string {
  const out: string[] = [];
  for (const seg of path.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  return "/" + out.join("/");
}

/** A directory a script may be in: `cwd` for the paths read there, `pwd` for `$PWD`, `~+` and `$(pwd)`. */
export interface Place {
  cwd: string;
  pwd: string;
}

/**
 * Every directory a script may be in by each of its commands. A `cd` in a pipeline or a subshell
 * may not stick, so a directory once reached is never dropped: each command is checked once for
 * every directory an earlier `cd` may have led to, with `$PWD` as bash would have it there. Both
 * Bash checks (read-only and lease) walk a script with one of these.
 */
export class Directories {
  readonly #places = new Map<string, Place>();
  readonly #home: string;
  readonly #max: number;

  /** `start` is the starting `$PWD`; `startCwd` the same directory as the checks name it (by default `start`). */
  constructor(start: string, home: string, max: number, startCwd = start) {
    this.#places.set(start, { cwd: startCwd, pwd: start });
    this.#home = home;
    this.#max = max;
  }

  /** Each command with each directory it may run in, in order (directories reached later included). */
  *steps<C>(commands: readonly C[]): Generator<{ command: C; at: number } & Place> {
    for (const [at, command] of commands.entries()) for (const place of [...this.#places.values()]) yield { command, at, ...place };
  }

  /**
   * Follows a command's words (see `cdTarget`) run where `$PWD` is `pwd`: "unknown" when it
   * changes to a directory that cannot be told, "too_many" when the script may now be in more
   * than `max` directories, else null.
   */
  follow(words: readonly (string | null)[], pwd: string): "unknown" | "too_many" | null {
    const next = cdTarget(words, pwd, this.#home);
    if (next === "unknown") return "unknown";
    if (next !== null && !this.#places.has(next)) this.#places.set(next, { cwd: resolveExisting(next), pwd: next });
    return this.#places.size > this.#max ? "too_many" : null;
  }
}
