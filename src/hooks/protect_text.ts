/**
 * The checks that need no disk: a search glob (Grep's `glob`, Glob's `pattern`) that could name a
 * protected place, and free text (inline code, heredoc bodies, a tool's string arguments) that
 * names one, or a longrun host command. A name is enough: nothing is resolved.
 */
import { basename } from "node:path";
import { type Access, canMatch, fold, foldTokens, lit, PROTECTED, type ProtectedRule, ruleFor, segmentsOf } from "./protect_table.ts";
import type { Tok } from "./shell/words.ts";

/**
 * A search glob (Grep's `glob`, Glob's `pattern`: matched at any depth) that names a protected
 * place: one of its segments, not a bare `*` or `**`, could be a protected name (`{.lo,x}ngrun`,
 * `raw_dat?`, `.*`).
 */
export function globNamesHit(tokens: readonly Tok[], access: Access): ProtectedRule | null {
  const { absolute, segs: raw } = segmentsOf(tokens);
  const segs = raw.map(foldTokens);
  for (const rule of PROTECTED) {
    if (access === "read" && !rule.read) continue;
    // an absolute pattern (`/proc/*/cwd/*`) meets the absolute rules at its start
    if (rule.where === "absolute" && !absolute) continue;
    const last = rule.where === "absolute" ? 0 : segs.length - rule.segments.length;
    for (let i = 0; i <= last && i + rule.segments.length <= segs.length; i++) {
      const window = segs.slice(i, i + rule.segments.length);
      if (!window.some((seg) => seg.some((t) => t.t === "c"))) continue; // only wildcards: too broad to mean it
      if (rule.segments.every((names, k) => canMatch(window[k]!, names, true))) return rule;
    }
  }
  return null;
}

/** Subcommands of longrun that an agent may run: they read, or print help. */
export const AGENT_SUBCOMMANDS = new Set(["status", "--version", "-v", "version", "--help", "-h", "help"]);

/** Text splits into path-like words at anything that is not a letter, digit, `.`, `_`, `-`, `/` or `~`. */
const TEXT_SPLIT = /[^\p{L}\p{N}._\-\/~]+/u;

/**
 * A scan of free text (inline code, heredoc bodies, a tool's string arguments) for protected
 * paths and longrun host commands. Text is not resolved on disk: a name is enough.
 */
export function textHit(text: string, access: Access, ctx: { exeNames: readonly string[] }): string | null {
  const decoded = /%[0-9a-fA-F]{2}/.test(text) ? safeDecode(text) : text;
  if (decoded !== text) {
    const hit = textHit(decoded, access, ctx);
    if (hit) return hit;
  }
  const words = text.split(TEXT_SPLIT).filter(Boolean);
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const segs = segmentsOf(lit(w)).segs;
    const rule = ruleFor(segs, access, null, true);
    if (rule) return `${rule.what}: ${JSON.stringify(w)}`;
    if (access === "write" && ctx.exeNames.includes(fold(basename(w))) && !AGENT_SUBCOMMANDS.has(words[i + 1] ?? "")) {
      return `longrun's host-side commands: ${JSON.stringify(`${w} ${words[i + 1] ?? ""}`.trim())}`;
    }
  }
  return null;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
}
