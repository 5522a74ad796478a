/**
 * How a path's segments meet the table of files no agent may touch (src/root/protected.ts): names compare case-insensitively and after Unicode NFKC folding
 * (`.LONGRUN`, fullwidth dots), and a segment that is a pattern meets a name it could match under
 * bash's rules. Pure: what lies on disk is src/hooks/protect.ts's part.
 */
import { type Tok, tokensMatch } from "./shell/words.ts";

export { PROCESS_VIEWS, PROTECTED, type ProtectedRule } from "../root/protected.ts";
import { PROTECTED, type ProtectedRule } from "../root/protected.ts";

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
