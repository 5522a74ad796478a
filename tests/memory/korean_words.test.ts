/**
 * Korean words as tokens (segmentation 2, src/memory/segment.ts): a Hangul term of 3..8 syllables
 * is looked up as one marked token, beside the bigrams that still answer shorter and longer terms.
 * Recall is the bigram phrase's: the bare word finds it with its particle, a part of a word finds
 * the word, and an older root is rebuilt once to the new segmentation.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildMatchQuery, charsForIndex, hangulWordsForIndex, kindToken, SEGMENTATION, SEGMENTATION_KEY, wordsForIndex } from "../../src/memory/segment.ts";
import { LIST_SLICES_SQL, slicesOf, sliceTable } from "../../src/memory/slices.ts";
import { Root } from "../../src/root/root.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

const ids = (page: { hits: { id: string }[] }) => page.hits.map((h) => h.id).sort();

describe("Korean word tokens (pure)", () => {
  test("every 3..8-syllable substring of a Hangul run is a marked token", () => {
    const tokens = hangulWordsForIndex("체크포인트를 저장").split(" ");
    for (const t of ["h체크포", "h포인트", "h체크포인트", "h체크포인트를", "h크포인트를"]) assert.ok(tokens.includes(t), t);
    assert.ok(!tokens.includes("h저장"), "two syllables stay bigrams only");
    assert.equal(hangulWordsForIndex("接口适配 payment"), "", "nothing for Chinese or Latin text");
    assert.ok(!hangulWordsForIndex("가나다라마바사아자").split(" ").includes("h가나다라마바사아자"), "no token longer than 8 syllables");
  });

  test("a Hangul term of 3..8 syllables is its word token where the index has them, else the phrase of its bigrams", () => {
    assert.equal(buildMatchQuery(["체크포인트"], true), '{title body keywords} : "h체크포인트"');
    assert.equal(buildMatchQuery(["체크포인트"], false), '{title body keywords} : "체크 크포 포인 인트"');
    assert.equal(buildMatchQuery(["서버"], true), '{title body keywords} : "서버"');
    assert.equal(buildMatchQuery(["서"], true), '{chars} : "서"');
    assert.equal(buildMatchQuery(["가나다라마바사아자"], true), '{title body keywords} : "가나 나다 다라 라마 마바 바사 사아 아자"');
    assert.equal(buildMatchQuery(["DB설정"], true), '{title body keywords} : "DB 설정"', "mixed terms stay phrases");
    assert.equal(buildMatchQuery(["检查点"], true), '{title body keywords} : "检查 查点"', "Chinese stays bigrams");
  });
});

describe("Korean word search on a root", () => {
  let dir = "";
  let root: Root;
  const id: Record<string, string> = {};

  before(async () => {
    dir = tempDir();
    root = await Root.open(dir, { searchInWorker: false });
    const save = async (key: string, title: string, content: string) => (id[key] = (await root.memory.save({ type: "note", title, content, keywords: [] })).record.id);
    await save("cp", "작업 기록", "체크포인트를 저장했다. 다음 단계로 넘어간다.");
    await save("cpBare", "체크포인트", "제목에만 있는 단어");
    await save("db", "설정", "데이터베이스의 연결을 확인했다.");
    await save("long", "긴 단어", "가나다라마바사아자차를 썼다.");
    await save("apart", "떨어진 글자", "체크 포인트 사이에 띄어쓰기가 있다.");
    await save("zh", "[LongRun Checkpoint]", "阶段：接口适配\n下一步：接入第二个供应商");
  });
  after(async () => {
    await root.close();
    removeDir(dir);
  });

  test("a new root records the current segmentation", async () => {
    const rows = (await root.db.execute({ sql: "SELECT value FROM root_meta WHERE key = ?", args: [SEGMENTATION_KEY] })).rows;
    assert.equal(rows[0]?.value, SEGMENTATION);
  });

  test("the bare word finds it with its particle, and the word with its particle finds it", async () => {
    assert.deepEqual(ids(await root.memory.search("체크포인트")), [id.cp, id.cpBare].sort());
    assert.deepEqual(ids(await root.memory.search("체크포인트를")), [id.cp]);
    assert.deepEqual(ids(await root.memory.search("데이터베이스")), [id.db]);
    assert.deepEqual(ids(await root.memory.search("데이터베이스의")), [id.db]);
  });

  test("part of a word is found: its middle, its end, two syllables, one syllable", async () => {
    assert.deepEqual(ids(await root.memory.search("포인트")), [id.cp, id.cpBare, id.apart].sort(), "포인트 with a space before it is 포인트 too");
    assert.deepEqual(ids(await root.memory.search("이터베이스")), [id.db]);
    assert.deepEqual(ids(await root.memory.search("베이스의")), [id.db]);
    assert.deepEqual(ids(await root.memory.search("크포")), [id.cp, id.cpBare].sort());
    assert.deepEqual(ids(await root.memory.search("챠")), []);
    assert.ok(ids(await root.memory.search("체")).includes(id.apart!));
  });

  test("a word spaced apart is not the word, and a term longer than the tokens is still found", async () => {
    assert.ok(!ids(await root.memory.search("체크포인트")).includes(id.apart!));
    assert.deepEqual(ids(await root.memory.search("가나다라마바사아자")), [id.long]);
    assert.deepEqual(ids(await root.memory.search("가나다라마바사아자차를")), [id.long]);
  });

  test("Korean words mix with other terms and the type filter", async () => {
    assert.deepEqual(ids(await root.memory.search("체크포인트를 接口")), [id.cp, id.zh].sort());
    assert.deepEqual(ids(await root.memory.search("데이터베이스", { type: "decision" })), []);
    assert.deepEqual(ids(await root.memory.search("데이터베이스", { type: "note" })), [id.db]);
  });
});

describe("a root indexed before Korean word tokens", () => {
  test("is not re-indexed on open: it keeps the phrase of bigrams and finds everything, old records and new", async () => {
    const korean = 20;
    const dir = tempDir();
    try {
      const first = await Root.open(dir, { searchInWorker: false });
      const saved = [];
      for (let i = 0; i < 30; i++) {
        const content = i >= korean ? `plain English record ${i}` : i % 3 ? `체크포인트를 저장 ${i}` : `데이터베이스의 설정 ${i}`;
        saved.push((await first.memory.save({ type: "note", title: i >= korean ? `record ${i}` : `기록 ${i}`, content, keywords: [] })).record);
      }
      const cp = saved.filter((_, i) => i < korean && i % 3).length;
      const db = saved.filter((_, i) => i < korean && !(i % 3)).length;
      // the index as segmentation 1 left it: bigrams and characters, no word tokens, no key
      await first.db.write(async (tx) => {
        for (const slice of slicesOf((await tx.execute(LIST_SLICES_SQL)).rows)) await tx.execute(`DELETE FROM ${sliceTable(slice)}`);
        for (const r of (await tx.execute("SELECT seq, type, title, content FROM memories")).rows) {
          const t = String(r.title);
          const c = String(r.content);
          await tx.execute({
            sql: `INSERT INTO ${sliceTable(0)}(rowid, title, body, keywords, chars, kind) VALUES (?, ?, ?, '', ?, ?)`,
            args: [Number(r.seq), wordsForIndex(t), wordsForIndex(c), charsForIndex(`${t} ${c} `), kindToken(String(r.type))],
          });
        }
        await tx.execute({ sql: "DELETE FROM root_meta WHERE key = ?", args: [SEGMENTATION_KEY] });
      });
      await first.close();

      const again = await Root.open(dir, { searchInWorker: false });
      try {
        const meta = (await again.db.execute({ sql: "SELECT value FROM root_meta WHERE key = ?", args: [SEGMENTATION_KEY] })).rows;
        assert.deepEqual(meta, [], "no segmentation recorded: the root was not re-indexed");
        assert.equal(Number((await again.db.execute(`SELECT count(*) AS n FROM ${sliceTable(0)}`)).rows[0]!.n), 30, "every record indexed once, as before");
        // a record saved now (with word tokens) is found by the same phrase path
        await again.memory.save({ type: "note", title: "새 기록", content: "체크포인트를 다시 저장", keywords: [] });
        assert.equal((await again.memory.search("체크포인트", { limit: 50 })).hits.length, cp + 1);
        assert.equal((await again.memory.search("체크포인트를", { limit: 50 })).hits.length, cp + 1);
        assert.equal((await again.memory.search("데이터베이스", { limit: 50 })).hits.length, db);
        assert.equal((await again.memory.search("저장", { limit: 50 })).hits.length, cp + 1);
        assert.equal((await again.memory.search("plain", { limit: 50 })).hits.length, 30 - korean);
      } finally {
        await again.close();
      }
    } finally {
      removeDir(dir);
    }
  });
});
