/**
 * Checkpoint text for people in English, Chinese or Korean: per root (`.longrun/settings.json`) or
 * per request (`lang`). The machine line is never translated, so parsing and recovery are the same
 * in every language.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, test } from "node:test";
import { CHECKPOINT_LANGS, type CheckpointLang, MACHINE_LINE_PREFIX, parseMachineLine, renderCheckpoint } from "../../src/core/checkpoint.ts";
import { STATE_FORMAT, type TaskState } from "../../src/core/task.ts";
import { loseTask } from "../support/state.ts";
import { type Fixture, openFixture } from "./setup.ts";

const state: TaskState = {
  format: STATE_FORMAT,
  task_id: "T_20261130_100000_abcd",
  description: "Adapt the supplier interface",
  keywords: [],
  status: "paused",
  access_mode: "read_only",
  turn_index: 4,
  write_lease_turn: null,
  lease: null,
  phase: "接口适配",
  next_step: "接入第二个供应商",
  created_at: "2026-11-30T10:00:00.000Z",
  updated_at: "2026-11-30T10:00:00.000Z",
  version: 9,
  last_checkpoint: null,
  history: [],
  lease_log: [],
};

/** What each language must show, line by line (the human part), for `state`. */
const EXPECTED: Record<CheckpointLang, string[]> = {
  en: [
    "[LongRun Checkpoint]",
    "task: T_20261130_100000_abcd · Adapt the supplier interface",
    "status: paused · gate: read_only · turn: 4",
    "phase: 接口适配",
    "next step: 接入第二个供应商",
    "summary: adapters done",
    "kind: manual · saved: 2026-11-30T11:00:00.000Z",
  ],
  zh: [
    "[LongRun Checkpoint]",
    "任务：T_20261130_100000_abcd · Adapt the supplier interface",
    "状态：已暂停 (paused) · 读写门禁：只读 (read_only) · 对话轮次：4",
    "阶段：接口适配",
    "下一步：接入第二个供应商",
    "摘要：adapters done",
    "类型：manual · 保存于：2026-11-30T11:00:00.000Z",
  ],
  ko: [
    "[LongRun Checkpoint]",
    "작업: T_20261130_100000_abcd · Adapt the supplier interface",
    "상태: 일시 중지 (paused) · 쓰기 게이트: 읽기 전용 (read_only) · 대화 턴: 4",
    "단계: 接口适配",
    "다음 단계: 接入第二个供应商",
    "요약: adapters done",
    "종류: manual · 저장 시각: 2026-11-30T11:00:00.000Z",
  ],
};

describe("checkpoint text in three languages, one machine line", () => {
  const machineLines = new Set<string>();
  for (const lang of CHECKPOINT_LANGS) {
    test(`${lang}: the labels are in ${lang}, the machine line is last and parses to the same state`, () => {
      const text = renderCheckpoint(state, { summary: "adapters done", kind: "manual", lang, data: { step: 3 } }, "cp-1", "2026-11-30T11:00:00.000Z");
      const lines = text.split("\n");
      assert.deepEqual(lines.slice(0, -1), EXPECTED[lang]);
      assert.ok(lines.at(-1)!.startsWith(MACHINE_LINE_PREFIX));
      machineLines.add(lines.at(-1)!);
      const m = parseMachineLine(text)!;
      assert.equal(m.status, "paused");
      assert.equal(m.access_mode, "read_only");
      assert.equal(m.turn_index, 4);
      assert.equal(m.next_step, "接入第二个供应商");
      assert.deepEqual(m.data, { step: 3 });
    });
  }
  test("the machine line is byte for byte the same in every language", () => {
    assert.equal(machineLines.size, 1);
  });
  test("without a lang the text is English", () => {
    assert.deepEqual(renderCheckpoint(state, { summary: "adapters done", kind: "manual" }, "cp-1", "2026-11-30T11:00:00.000Z").split("\n").slice(0, -1), EXPECTED.en);
  });
});

describe("the language is the root's setting, or the request's", () => {
  let fx: Fixture;
  beforeEach(async () => (fx = await openFixture({ searchInWorker: false })));
  afterEach(() => fx.close());

  const settings = (body: string) => writeFileSync(fx.root.paths.settings, body);

  test("a root set to Chinese writes Chinese checkpoints; a request's lang wins", async () => {
    settings(JSON.stringify({ lang: "zh" }));
    const c = fx.root.contract;
    await c.startTask("接口适配");
    const zh = await c.checkpoint({ summary: "完成", next_step: "下一个", phase: "一" });
    assert.match(zh.text, /^阶段：一$/m);
    assert.match(zh.text, /^状态：已暂停 \(paused\)/m);
    await c.resume();
    const ko = await c.checkpoint({ summary: "s", next_step: "n", lang: "ko" });
    assert.match(ko.text, /^다음 단계: n$/m);
    await c.resume();
    const en = await c.checkpoint({ summary: "s", next_step: "n", lang: "en" });
    assert.match(en.text, /^next step: n$/m);
  });

  test("a root set to Korean writes Korean checkpoints, progress ones too, and recovery reads them", async () => {
    settings(JSON.stringify({ lang: "ko" }));
    const c = fx.root.contract;
    await c.startTask("공급업체 인터페이스");
    const out = await c.checkpoint({ summary: "절반", next_step: "두 번째 공급업체", kind: "progress", data: { step: 2 } });
    assert.match(out.text, /^상태: 진행 중 \(in_progress\) · 쓰기 게이트: 읽기 전용 \(read_only\) · 대화 턴: 1$/m);
    await loseTask(fx.dir);
    const r = await c.recoverFromMemory();
    assert.equal(r.task?.next_step, "두 번째 공급업체");
    assert.deepEqual(r.data, { step: 2 });
  });

  for (const bad of ["{not json", JSON.stringify({ lang: "fr" }), JSON.stringify(["zh"])]) {
    test(`an unreadable setting (${bad}) never stops a checkpoint: the text is English`, async () => {
      settings(bad);
      const c = fx.root.contract;
      await c.startTask("t");
      const out = await c.checkpoint({ summary: "s", next_step: "n" });
      assert.match(out.text, /^next step: n$/m);
      assert.equal((await fx.root.memory.get(out.memory_id))?.content, out.text);
    });
  }

  test("no settings file: English", async () => {
    const c = fx.root.contract;
    await c.startTask("t");
    assert.match((await c.checkpoint({ summary: "s", next_step: "n" })).text, /^status: paused · gate: read_only · turn: 1$/m);
  });
});
