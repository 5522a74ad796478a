/**
 * Scope patterns of a write lease. A pattern is a glob over an action string or a path:
 * `*` matches within one path segment, `**` across segments, `?` one character, anything else
 * literally. An action is in scope when the whole action matches a pattern, or when it reads
 * `<verb> <target> [<target>…]` and every target matches some pattern. A target with a `..`
 * segment never matches, so `src/../.env` cannot ride on `src/**`.
 */

export function globToRegExp(pattern: string): RegExp {
  let re = "^";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "*") {
      if (pattern[i + 1] === "*") {
        i++;
        // `**/` also matches zero segments
        if (pattern[i + 1] === "/") {
          i++;
          re += "(?:.*/)?";
        } else {
          re += ".*";
        }
      } else {
        re += "[^/]*";
      }
    } else if (ch === "?") {
      re += "[^/]";
    } else {
      re += ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
    }
  }
  return new RegExp(re + "$", "s");
}

function hasParentSegment(target: string): boolean {
  return target.split(/[\\/\s]+/).includes("..");
}

function matchesAny(target: string, patterns: readonly RegExp[]): boolean {
  if (hasParentSegment(target)) return false;
  const plain = target.startsWith("./") ? target.slice(2) : target;
  return patterns.some((p) => p.test(plain));
}

/** True when `action` is covered by `scope` (see the module comment for the rule). */
export function actionInScope(action: string, scope: readonly string[]): boolean {
  const patterns = scope.map(globToRegExp);
  const whole = action.trim();
  if (matchesAny(whole, patterns)) return true;
  const words = whole.split(/\s+/);
  if (words.length < 2) return false;
  return words.slice(1).every((w) => matchesAny(w, patterns));
}
