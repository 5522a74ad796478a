/**
 * Search recall on a mixed-language memory (Chinese, Korean, English, and terms that mix them),
 * per query class, against the truth computed from the text itself: a CJK query is found wherever
 * it occurs as a substring, a Latin query wherever it occurs as a word. Recall must be at least
 * 0.99 in every class; every page is read, so ranking does not hide a hit.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { termClass, type TermClass } from "../../src/memory/segment.ts";
import { Root } from "../../src/root/root.ts";
import { EN, KO, MIXED, rng, sentence, ZH } from "../fixtures/mixed_corpus.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

interface Doc {
  id: string;
  text: string;
}

describe("search recall per query class on a mixed-language memory", () => {
  let dir = "";
  let root: Root;
  const docs: Doc[] = [];
  const r = rng(20261130);

  before(async () => {
    dir = tempDir();
    root = await Root.open(dir, { searchInWorker: false });
    for (let i = 0; i < 1500; i++) {
      const title = sentence(r).slice(0, 40);
      const content = Array.from({ length: 1 + Math.floor(r() * 4) }, () => sentence(r)).join(" ");
      const saved = await root.memory.save({ type: "note", title, content, keywords: [] });
      docs.push({ id: saved.record.id, text: `${title}\n${content}` });
    }
  });
  after(async () => {
    await root.close();
    removeDir(dir);
  });

  /** Query terms drawn from the corpus itself, per class. */
  function queries(): Map<TermClass, string[]> {
    const out = new Map<TermClass, Set<string>>();
    const add = (q: string) => {
      const c = termClass(q);
      if (!out.has(c)) out.set(c, new Set());
      out.get(c)!.add(q);
    };
    for (const w of EN) add(w);
    for (const w of MIXED) add(w);
    for (const w of [...ZH, ...KO]) {
      add(w);
      const chars = [...w];
      add(chars[0]!);
      add(chars.at(-1)!);
      if (chars.length >= 3) add(chars.slice(1).join(""));
    }
    // substrings that cross word boundaries in the unspaced Chinese text
    for (const d of docs.slice(0, 60)) {
      const run = /[\p{Script=Han}]{4,}/u.exec(d.text)?.[0];
      if (run) add([...run].slice(1, 4).join(""));
    }
    return new Map([...out].map(([k, v]) => [k, [...v]]));
  }

  function truth(q: string): Set<string> {
    const cls = termClass(q);
    const hit = (text: string) => (cls === "latin" ? new RegExp(`\\b${q}\\b`, "i").test(text) : text.toLowerCase().includes(q.toLowerCase()));
    return new Set(docs.filter((d) => hit(d.text)).map((d) => d.id));
  }

  async function found(q: string): Promise<Set<string>> {
    const ids = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await root.memory.search([q], { limit: 50, cursor });
      for (const h of page.hits) ids.add(h.id);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return ids;
  }

  test("every query class finds at least 99% of the records that hold the term", async () => {
    const report: string[] = [];
    for (const [cls, qs] of queries()) {
      let want = 0;
      let got = 0;
      for (const q of qs) {
        const t = truth(q);
        const f = await found(q);
        want += t.size;
        for (const id of t) if (f.has(id)) got++;
      }
      const recall = want ? got / want : 1;
      report.push(`${cls}: ${qs.length} queries, recall ${recall.toFixed(4)} (${got}/${want})`);
      assert.ok(want > 0, `class ${cls} has no truth to check`);
      assert.ok(recall >= 0.99, `${cls}: recall ${recall} < 0.99\n${report.join("\n")}`);
    }
    assert.deepEqual([...queries().keys()].sort(), ["cjk_long", "cjk_one", "cjk_two", "latin", "mixed"]);
  });
});
