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
