/**
 * Scope patterns of a write lease. A pattern is a glob over an action string or a path:
 * `*` matches within one path segment, `**` across segments (a double star followed by a slash
 * also matches no segment at all), `?` one character; anything else is literal. No wildcard ever
 * matches white space, so a path pattern can never stretch over a whole command line (a pattern
 * for Markdown files does not match `rm -rf src && cat README.md`).
 *
 * An action is in scope when the whole action matches a pattern, or when it reads
 * `<verb> <target> [<target>…]` and every target matches some pattern. Scope patterns are
 * relative to the root: a target with a `..` segment, an absolute path or a `~` path never
 * matches, so `src/../.env` cannot ride on `src/**`, and a pattern for Python files never covers
 * `/usr/lib/python3/sitecustomize.py` (hosts send root-relative paths; see the hook adapter).
 *
 * Matching is a dynamic programme over (pattern token, position): linear in the action's length
 * per token, whatever the pattern, so an agent-chosen action cannot make the gate backtrack.
 */

type Token = { t: "lit"; c: string } | { t: "one" } | { t: "star" } | { t: "globstar" } | { t: "globstar_slash" };

const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v";

export function compileGlob(pattern: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "*") {
      if (pattern[i + 1] === "*") {
        i++;
        if (pattern[i + 1] === "/") {
          i++;
          // two double-star-slashes in a row are one
          if (out.at(-1)?.t !== "globstar_slash") out.push({ t: "globstar_slash" });
        } else if (out.at(-1)?.t !== "globstar") out.push({ t: "globstar" });
      } else if (out.at(-1)?.t !== "star") out.push({ t: "star" });
    } else if (ch === "?") out.push({ t: "one" });
    else out.push({ t: "lit", c: ch });
  }
  return out;
}

/** True when the whole of `s` matches the compiled glob. */
export function globMatch(tokens: readonly Token[], s: string): boolean {
  const n = s.length;
  let dp = new Uint8Array(n + 1);
  dp[0] = 1;
  for (const tok of tokens) {
    const next = new Uint8Array(n + 1);
    switch (tok.t) {
      case "lit":
        for (let j = 0; j < n; j++) if (dp[j] && s[j] === tok.c) next[j + 1] = 1;
        break;
      case "one":
        for (let j = 0; j < n; j++) if (dp[j] && s[j] !== "/" && !isSpace(s[j]!)) next[j + 1] = 1;
        break;
      case "star":
      case "globstar": {
        const crossesSlash = tok.t === "globstar";
        for (let j = 0; j <= n; j++) {
          const c = s[j - 1]!;
          next[j] = dp[j] || (j > 0 && next[j - 1] && !isSpace(c) && (crossesSlash || c !== "/")) ? 1 : 0;
        }
        break;
      }
      case "globstar_slash": {
        // r[j]: some start k <= j has dp[k] and no white space in s[k..j). A double star with its
        // slash consumes s[k..j) when that stretch ends with "/", or nothing at all.
        let rPrev = 0;
        for (let j = 0; j <= n; j++) {
          const r = dp[j] || (j > 0 && rPrev && !isSpace(s[j - 1]!)) ? 1 : 0;
          next[j] = dp[j] || (j > 0 && s[j - 1] === "/" && rPrev) ? 1 : 0;
          rPrev = r;
        }
        break;
      }
    }
    dp = next;
  }
  return dp[n] === 1;
}

/** A target that leaves the root: a `..` segment, an absolute path, a home path. */
function leavesRoot(target: string): boolean {
  return target.split(/[\\/\s]+/).includes("..") || /(^|\s)[\/~\\]/.test(target);
}

function matchesAny(target: string, patterns: readonly Token[][]): boolean {
  if (leavesRoot(target)) return false;
  const plain = target.startsWith("./") ? target.slice(2) : target;
  return patterns.some((p) => globMatch(p, plain));
}

/** True when `action` is covered by `scope` (see the module comment for the rule). */
export function actionInScope(action: string, scope: readonly string[]): boolean {
  const patterns = scope.map(compileGlob);
  const whole = action.trim();
  if (matchesAny(whole, patterns)) return true;
  const words = whole.split(/\s+/);
  if (words.length < 2) return false;
  return words.slice(1).every((w) => matchesAny(w, patterns));
}
