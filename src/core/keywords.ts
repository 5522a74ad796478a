/**
 * Keyword extraction for invariant I1 (search memory before creating a task): a heuristic, not
 * semantics. Latin words of three or more letters minus stop words; Chinese, Japanese and Korean
 * text as overlapping two-character pieces, because those scripts do not separate words with
 * spaces (and Korean attaches particles: `서버를` still yields `서버`).
 */

const STOP_WORDS = new Set(
  (
    "the and for are but not you all any can had her was one our out day get has him his how man new now old see two way who " +
    "boy did its let put say she too use that with have this will your from they know want been good much some time very when " +
    "come here just like long make many more only over such take than them well were what into then also there their about " +
    "would these other could which should after first where while those being under again before please need needs task"
  ).split(" "),
);

const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
const LATIN_WORD = /[\p{L}\p{N}][\p{L}\p{N}_\-.]*[\p{L}\p{N}]|[\p{L}\p{N}]/gu;

export const MAX_KEYWORDS = 16;

function cjkPieces(run: string): string[] {
  const chars = [...run];
  if (chars.length <= 2) return [run];
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  return out;
}

/** Keywords for a memory search, most telling first (in order of appearance), de-duplicated. */
export function extractKeywords(text: string, max = MAX_KEYWORDS): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (k: string) => {
    const key = k.toLowerCase();
    if (!seen.has(key) && out.length < max) {
      seen.add(key);
      out.push(k);
    }
  };
  const withoutCjk = text.replace(CJK_RUN, (run) => {
    for (const piece of cjkPieces(run)) add(piece);
    return " ";
  });
  for (const m of withoutCjk.matchAll(LATIN_WORD)) {
    const word = m[0];
    const lower = word.toLowerCase();
    if (word.length < 3 && !/\d/.test(word)) continue;
    if (STOP_WORDS.has(lower)) continue;
    add(word);
  }
  return out;
}

/** Trims, drops empties and duplicates; returns null when nothing is left (then extract instead). */
export function normalizeKeywords(keywords: readonly string[] | undefined | null): string[] | null {
  if (!keywords) return null;
  const out: string[] = [];
  const seen = new Set<string>();
  for (const k of keywords) {
    const t = k.trim();
    if (t && !seen.has(t.toLowerCase())) {
      seen.add(t.toLowerCase());
      out.push(t);
    }
  }
  return out.length ? out : null;
}
