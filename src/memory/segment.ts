/**
 * CJK-aware text for FTS5. SQLite's `unicode61` tokenizer treats a whole run of Chinese or Korean
 * characters as one token (so `接口` is never found inside `阶段：接口适配`), and `trigram` cannot
 * match queries shorter than three characters. So the index holds a form of the text where every
 * Han, kana and Hangul character stands alone, and a query term becomes a phrase of the same
 * characters: `接口` -> "接 口" matches `接` followed by `口` anywhere; `서버` matches `서버를`.
 * Latin text passes through for `unicode61` (with the porter stemmer) as usual. Pure functions.
 */

const CJK_CHAR = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}])/gu;
const HAS_WORD = /[\p{L}\p{N}]/u;

/** The indexed form of `text`: each CJK character separated by spaces. */
export function segmentForIndex(text: string): string {
  return text.replace(CJK_CHAR, " $1 ");
}

/** Query terms of a search string: white-space separated; quoted "two words" stay one term. */
export function splitQuery(query: string): string[] {
  const terms: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (const m of query.matchAll(re)) {
    const t = (m[1] ?? m[2] ?? "").trim();
    if (t) terms.push(t);
  }
  return terms;
}

/**
 * An FTS5 MATCH expression: each term a quoted phrase of its indexed form, OR'ed together (bm25
 * ranks documents matching more of them higher). Terms with no letter or digit are dropped;
 * null when nothing is left to search for.
 */
export function buildMatchQuery(terms: readonly string[]): string | null {
  const phrases: string[] = [];
  for (const term of terms) {
    if (!HAS_WORD.test(term)) continue;
    const seg = segmentForIndex(term).replace(/\s+/g, " ").trim().replace(/"/g, '""');
    phrases.push(`"${seg}"`);
  }
  return phrases.length ? phrases.join(" OR ") : null;
}

/**
 * A short excerpt of `text` around the first place any term occurs (case-insensitive), or its
 * beginning; at most about `width` characters, with an ellipsis where it was cut.
 */
export function makeSnippet(text: string, terms: readonly string[], width = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const lower = flat.toLowerCase();
  let at = -1;
  for (const t of terms) {
    const i = lower.indexOf(t.toLowerCase());
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  if (flat.length <= width) return flat;
  const start = at < 0 ? 0 : Math.max(0, at - Math.floor(width / 3));
  const end = Math.min(flat.length, start + width);
  return (start > 0 ? "…" : "") + flat.slice(start, end) + (end < flat.length ? "…" : "");
}
