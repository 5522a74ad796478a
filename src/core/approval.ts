/**
 * The user's approval inside a prompt: a line that starts with the marker (default `/approve`).
 * The human typed it into their own message; the model cannot put words there.
 *
 *   /approve refactor the parser                      -> a lease for this turn, reason as written
 *   /approve scope=src/**,tests/** ttl=10m uses=3 fix  -> with scope patterns, a time to live, a use count
 *
 * Options come first (`scope=`, `ttl=` in s/m/h, `uses=`); the rest of the line is the reason.
 * Pure, and in the core because two edges read it: the Claude Code hook parses the line, the MCP
 * server names the default marker.
 */

export interface Approval {
  reason: string;
  scope: string[] | null;
  ttl_seconds: number | null;
  max_uses: number | null;
}

export const DEFAULT_MARKER = "/approve";

function seconds(v: string): number | null {
  const m = /^(\d+)([smh]?)$/.exec(v);
  if (!m || Number(m[1]) === 0) return null;
  return Number(m[1]) * (m[2] === "h" ? 3600 : m[2] === "m" ? 60 : 1);
}

/** The first approval line in `prompt`, or null. A malformed option makes the whole line not an approval. */
export function parseApproval(prompt: string, marker = DEFAULT_MARKER): Approval | null {
  for (const raw of prompt.split(/\r?\n/)) {
    const line = raw.trim();
    if (line !== marker && !line.startsWith(marker + " ")) continue;
    if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(line)) return null;
    const words = line.slice(marker.length).trim().split(/\s+/).filter(Boolean);
    const out: Approval = { reason: "", scope: null, ttl_seconds: null, max_uses: null };
    while (words.length && /^(scope|ttl|uses)=/.test(words[0]!)) {
      const [key, value = ""] = words.shift()!.split(/=(.*)/s);
      if (key === "scope") out.scope = value.split(",").map((s) => s.trim()).filter(Boolean);
      else if (key === "ttl") out.ttl_seconds = seconds(value);
      else out.max_uses = /^\d+$/.test(value) && Number(value) > 0 ? Number(value) : null;
      if ((key === "ttl" && out.ttl_seconds === null) || (key === "uses" && out.max_uses === null) || (key === "scope" && !out.scope?.length)) {
        return null;
      }
    }
    out.reason = words.join(" ") || "approved by the user in the prompt";
    return out;
  }
  return null;
}
