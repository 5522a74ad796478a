/**
 * CJK-aware text for FTS5. SQLite's `unicode61` tokenizer treats a whole run of Chinese, Japanese
 * or Korean characters as one token (so `接口` is never found inside `阶段：接口适配`), and
 * `trigram` cannot match queries shorter than three characters. So the index holds two forms:
 *
 * - words: Latin words as `unicode61` (with the porter stemmer) reads them, and every CJK run as
 *   its overlapping bigrams (`接口适配` -> `接口 口适 适配`; a run of one character stays one
 *   token). A query term of two or more CJK characters is the phrase of its bigrams, which matches
 *   exactly where the term occurs as a substring, and looks up one rare-ish token per position
 *   instead of every document holding each character;
 * - chars: every CJK character alone, for one-character queries (the fallback);
 * - Korean words (`SEGMENTATION` 2): Hangul is written in space-delimited words, so every
 *   substring of `WORD_MIN`..`WORD_MAX` syllables of each Hangul run is also one token, marked
 *   with a leading `h` (`체크포인트를` -> `h체크포 h크포인 … h체크포인트를`), at the end of its
 *   column (after every other token, so no phrase of the words form spans them). A Hangul query
 *   term of that length is then that one token: the same documents as the phrase of its bigrams
 *   (where the term occurs inside a Hangul run, particles and all), found and counted for bm25
 *   with one doclist instead of a position merge of several. Shorter and longer terms stay phrases.
 *   The mark cannot arise otherwise: the words form always spaces a CJK run from what surrounds it.
 *
 * Pure functions.
 */

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
const HAS_WORD = /[\p{L}\p{N}]/u;
const HANGUL_RUN = /\p{Script=Hangul}+/gu;
const ALL_HANGUL = /^\p{Script=Hangul}+$/u;

/** The root_meta key recording how the memory index is segmented, and the current value (reindex.ts rebuilds older roots). */
export const SEGMENTATION_KEY = "memory_segmentation";
export const SEGMENTATION = "2";
/** The lengths (in syllables) of the Hangul substrings indexed as word tokens. */
export const WORD_MIN = 3;
export const WORD_MAX = 8;

function bigrams(run: string): string[] {
  const chars = [...run];
  if (chars.length < 2) return chars;
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  return out;
}

/** The words form of `text`: each CJK run replaced by its bigrams, spaced from what surrounds it. */
export function wordsForIndex(text: string): string {
  return text.replace(CJK_RUN, (run) => ` ${bigrams(run).join(" ")} `);
}

/** The Korean word tokens of `text`: each substring of WORD_MIN..WORD_MAX syllables of each Hangul run, marked. */
export function hangulWordsForIndex(text: string): string {
  const out: string[] = [];
  for (const m of text.matchAll(HANGUL_RUN)) {
    const chars = [...m[0]];
    for (let len = WORD_MIN; len <= Math.min(WORD_MAX, chars.length); len++) {
      for (let i = 0; i + len <= chars.length; i++) out.push("h" + chars.slice(i, i + len).join(""));
    }
  }
  return out.join(" ");
}

/** A text column of the index: the words form, then the Korean word tokens. */
function textForIndex(text: string): string {
  const words = hangulWordsForIndex(text);
  return words ? `${wordsForIndex(text)} ${words}` : wordsForIndex(text);
}

/** The chars form of `text`: its CJK characters, one token each (nothing else). */
export function charsForIndex(text: string): string {
  const out: string[] = [];
  for (const ch of text) if (CJK.test(ch)) out.push(ch);
  return out.join(" ");
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

const phrase = (s: string) => `"${s.replace(/\s+/g, " ").trim().replace(/"/g, '""')}"`;

/** The kind of a query term, for recall measured per class. */
export type TermClass = "latin" | "cjk_one" | "cjk_two" | "cjk_long" | "mixed";

export function termClass(term: string): TermClass {
  const chars = [...term].filter((c) => HAS_WORD.test(c));
  const cjk = chars.filter((c) => CJK.test(c)).length;
  if (cjk === 0) return "latin";
  if (cjk < chars.length) return "mixed";
  return cjk === 1 ? "cjk_one" : cjk === 2 ? "cjk_two" : "cjk_long";
}

/**
 * An FTS5 MATCH expression: each term a phrase, OR'ed together (bm25 ranks documents matching
 * more of them higher). A single CJK character is looked up in the chars column; where the index
 * holds Korean word tokens (`koreanWords`: its root_meta SEGMENTATION_KEY is SEGMENTATION), a
 * Hangul term of WORD_MIN..WORD_MAX syllables as its one word token; anything else as the phrase
 * of its words form in the text columns. Terms with no letter or digit are dropped; null when
 * nothing is left to search for.
 */
export function buildMatchQuery(terms: readonly string[], koreanWords = false): string | null {
  const parts: string[] = [];
  for (const term of terms) {
    if (!HAS_WORD.test(term)) continue;
    if (termClass(term) === "cjk_one") {
      parts.push(`{chars} : ${phrase(charsForIndex(term))}`);
      continue;
    }
    if (koreanWords && ALL_HANGUL.test(term)) {
      const len = [...term].length;
      if (len >= WORD_MIN && len <= WORD_MAX) {
        parts.push(`{title body keywords} : ${phrase("h" + term)}`);
        continue;
      }
    }
    parts.push(`{title body keywords} : ${phrase(wordsForIndex(term))}`);
  }
  return parts.length ? parts.join(" OR ") : null;
}

/** The kind column's token for a memory type (the type filter is a term of the index). */
export function kindToken(type: string): string {
  return `k${[...new TextEncoder().encode(type)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** The values of one memory's row in `memory_index`: title, body, keywords, chars, kind. */
export function indexColumns(m: { title: string; content: string; keywords: readonly string[]; type: string }): [string, string, string, string, string] {
  const keywords = m.keywords.join(" ");
  return [
    textForIndex(m.title),
    textForIndex(m.content),
    textForIndex(keywords),
    charsForIndex(`${m.title} ${m.content} ${keywords}`),
    kindToken(m.type),
  ];
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
