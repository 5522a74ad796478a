/**
 * The checkpoint record field by field: the part for people (labels, values, order, one-line
 * description, translations) and the machine line (what it carries, what parsing refuses, and
 * the round trip parse(render(x)) == x). Complements checkpoint.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  CHECKPOINT_LANGS,
  isCheckpointLang,
  MACHINE_LINE_PREFIX,
  machineLine,
  type MachineState,
  parseMachineLine,
  renderCheckpoint,
} from "../../src/core/checkpoint.ts";
import { TASK_STATUSES } from "../../src/core/status.ts";
import { type AccessMode, newTaskState, type TaskState } from "../../src/core/task.ts";

const CREATED = "2026-11-29T10:00:00.000Z";
const SAVED = "2026-11-29T11:00:00.000Z";

function task(over: Partial<TaskState> = {}): TaskState {
  return newTaskState(
    {
      task_id: "T_20261129_100000_abcd",
      description: "Fix the payment adapter",
      keywords: ["payment", "adapter"],
      status: "in_progress",
      turn_index: 4,
      version: 7,
      phase: "adapters",
      next_step: "add the second provider",
      ...over,
    },
    CREATED,
  );
}

/** The JSON inside a machine line, as written (before any defaulting by the parser). */
function rawMachineJson(line: string): Record<string, unknown> {
  assert.ok(line.startsWith(MACHINE_LINE_PREFIX) && line.endsWith(" -->"), line);
  return JSON.parse(line.slice(MACHINE_LINE_PREFIX.length, -" -->".length));
}

/** A machine line around arbitrary JSON, to test what parsing accepts. */
const line = (json: unknown) => `${MACHINE_LINE_PREFIX}${JSON.stringify(json)} -->`;
const MINIMAL = { task_id: "T_1", checkpoint_id: "cp-1", status: "paused", turn_index: 2 };

describe("checkpoint text for people", () => {
  test("English: every field on its line, in order, with the machine line last", () => {
    const s = task({ access_mode: "writable" });
    const text = renderCheckpoint(s, { summary: "adapters done", kind: "progress", data: { step: 3 } }, "cp-9", SAVED);
    assert.equal(
      text,
      [
        "[LongRun Checkpoint]",
        "task: T_20261129_100000_abcd · Fix the payment adapter",
        "status: in_progress · gate: writable · turn: 4",
        "phase: adapters",
        "next step: add the second provider",
        "summary: adapters done",
        `kind: progress · saved: ${SAVED}`,
        machineLine(s, "cp-9", SAVED, { kind: "progress", data: { step: 3 } }),
      ].join("\n"),
    );
  });

  test("English is the default language", () => {
    const s = task();
    assert.equal(renderCheckpoint(s, { summary: "s", kind: "manual" }, "c", SAVED), renderCheckpoint(s, { summary: "s", kind: "manual", lang: "en" }, "c", SAVED));
  });

  test("an empty phase and next step show as a dash, not as a blank", () => {
    const lines = renderCheckpoint(task({ phase: "", next_step: "" }), { summary: "s", kind: "manual" }, "c", SAVED).split("\n");
    assert.equal(lines[3], "phase: -");
    assert.equal(lines[4], "next step: -");
  });

  test("the description is shown on one line: white space runs become one space, ends trimmed", () => {
    const text = renderCheckpoint(task({ description: "  Fix\tthe\n\n payment   adapter \r\n" }), { summary: "s", kind: "manual" }, "c", SAVED);
    assert.equal(text.split("\n")[1], "task: T_20261129_100000_abcd · Fix the payment adapter");
  });

  test("a description longer than 120 characters is cut to 119 and an ellipsis; 120 are kept whole", () => {
    const shown = (description: string) => renderCheckpoint(task({ description }), { summary: "s", kind: "manual" }, "c", SAVED).split("\n")[1]!.split(" · ")[1]!;
    const exact = "x".repeat(118) + "yz";
    assert.equal(shown(exact), exact);
    assert.equal(shown(exact + "!"), "x".repeat(118) + "y…");
    assert.equal(shown("a".repeat(300)).length, 120);
    assert.equal(shown("short"), "short");
  });

  test("the machine line keeps the description verbatim, even when the shown one is flattened and cut", () => {
    const description = "line one\n\tline two " + "z".repeat(200);
    const m = parseMachineLine(renderCheckpoint(task({ description }), { summary: "s", kind: "manual" }, "c", SAVED));
    assert.equal(m?.description, description);
  });
});

describe("checkpoint text in every language", () => {
  const SEP = "(?:: |：)"; // between a label and its value: a colon (full-width in Chinese)
  const LABEL = "([^\\s:：·][^:：·]*?)"; // a non-empty label
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  /** A line of `label: value` fields joined by " · "; returns the labels and the captured translations. */
  function fields(text: string, values: string[]): string[] {
    const re = new RegExp("^" + values.map((v) => LABEL + SEP + v).join(" · ") + "$", "u");
    const m = re.exec(text);
    assert.ok(m, `${JSON.stringify(text)} is not "label: value" fields matching ${re}`);
    return m.slice(1);
  }

  const modes: AccessMode[] = ["read_only", "writable"];
  const ENGLISH = ["task", "status", "gate", "turn", "phase", "next step", "summary", "kind", "saved"];

  for (const lang of CHECKPOINT_LANGS) {
    test(`${lang}: labels, values and order; statuses and gates carry their protocol word; same machine line as English`, () => {
      const statusWords = new Map<string, string>();
      const modeWords = new Map<string, string>();
      let labels: string[] = [];
      for (const status of TASK_STATUSES) {
        for (const mode of modes) {
          const s = task({ status, access_mode: mode, phase: "", turn_index: 12 });
          const content = { summary: "half done", kind: "stop", data: { k: 1 } };
          const text = renderCheckpoint(s, { ...content, lang }, "cp-2", SAVED);
          const lines = text.split("\n");
          assert.equal(lines.length, 8);
          assert.equal(lines[0], "[LongRun Checkpoint]");
          // the machine line never depends on the language
          assert.equal(lines[7], machineLine(s, "cp-2", SAVED, { kind: "stop", data: { k: 1 } }));
          assert.equal(lines[7], renderCheckpoint(s, content, "cp-2", SAVED).split("\n")[7]);

          const translated = (raw: string) => (lang === "en" ? esc(raw) : `(\\S[^()]*) \\(${esc(raw)}\\)`);
          const [taskLabel] = fields(lines[1]!, [esc(`${s.task_id} · ${s.description}`)]);
          const line2 = fields(lines[2]!, [translated(status), translated(mode), "12"]);
          const [phaseLabel] = fields(lines[3]!, ["-"]);
          const [nextLabel] = fields(lines[4]!, [esc(s.next_step)]);
          const [summaryLabel] = fields(lines[5]!, ["half done"]);
          const [kindLabel, savedLabel] = fields(lines[6]!, ["stop", esc(SAVED)]);
          let statusLabel: string, gateLabel: string, turnLabel: string;
          if (lang === "en") [statusLabel, gateLabel, turnLabel] = line2 as [string, string, string];
          else {
            let statusWord: string, modeWord: string;
            [statusLabel, statusWord, gateLabel, modeWord, turnLabel] = line2 as [string, string, string, string, string];
            assert.equal(statusWords.get(status) ?? statusWord, statusWord);
            statusWords.set(status, statusWord);
            modeWords.set(mode, modeWord);
          }
          labels = [taskLabel!, statusLabel, gateLabel, turnLabel, phaseLabel!, nextLabel!, summaryLabel!, kindLabel!, savedLabel!];
        }
      }
      // nine different labels, so no two fields can be mistaken for each other
      assert.equal(new Set(labels).size, 9, labels.join(" | "));
      if (lang === "en") assert.deepEqual(labels, ENGLISH);
      else {
        // a translation: no label is left in English, and every status / gate has its own word
        labels.forEach((l, i) => assert.notEqual(l, ENGLISH[i]));
        assert.equal(new Set(statusWords.values()).size, TASK_STATUSES.length);
        assert.equal(new Set(modeWords.values()).size, 2);
      }
    });
  }

  test("isCheckpointLang accepts exactly the listed languages", () => {
    for (const lang of CHECKPOINT_LANGS) assert.equal(isCheckpointLang(lang), true, lang);
    for (const other of ["fr", "EN", "", "en ", 1, null, undefined, ["en"]]) assert.equal(isCheckpointLang(other), false, String(other));
  });
});

describe("the machine line", () => {
  const expected = (s: TaskState, over: Partial<MachineState> = {}): MachineState => ({
    task_id: s.task_id,
    description: s.description,
    keywords: s.keywords,
    status: s.status,
    access_mode: "read_only",
    turn_index: s.turn_index,
    phase: s.phase,
    next_step: s.next_step,
    version: s.version,
    checkpoint_id: "cp-5",
    saved_at: SAVED,
    created_at: s.created_at,
    kind: "manual",
    data: {},
    ...over,
  });

  test("parse(render(x)) gives back every field, for every status, with the kind and the host's data", () => {
    const data = { step: 3, nested: { list: [1, "<b>&</b>", null], flag: true }, text: "-->" };
    for (const status of TASK_STATUSES) {
      const s = task({ status, description: "Fix <it> & --> 接口", keywords: ["接口", "a&b"], phase: "p -->", next_step: "" });
      const m = parseMachineLine(renderCheckpoint(s, { summary: "s", kind: "stop", data }, "cp-5", SAVED));
      assert.deepEqual(m, expected(s, { kind: "stop", data }));
    }
  });

  test("a bare machine line parses (the record may begin with it)", () => {
    const s = task();
    assert.deepEqual(parseMachineLine(machineLine(s, "cp-5", SAVED)), expected(s));
  });

  test("it always records read_only: a task restored from it starts without a write lease", () => {
    const s = task({ access_mode: "writable", write_lease_turn: 4 });
    assert.equal(rawMachineJson(machineLine(s, "c", SAVED)).access_mode, "read_only");
  });

  test("without a kind or data it records kind manual and empty data", () => {
    const raw = rawMachineJson(machineLine(task(), "c", SAVED));
    assert.equal(raw.kind, "manual");
    assert.deepEqual(raw.data, {});
    const given = rawMachineJson(machineLine(task(), "c", SAVED, { kind: "outcome", data: { a: 1 } }));
    assert.equal(given.kind, "outcome");
    assert.deepEqual(given.data, { a: 1 });
  });

  test("an older line without the newer fields parses with their defaults; created_at falls back to saved_at", () => {
    assert.deepEqual(parseMachineLine(line(MINIMAL)), {
      task_id: "T_1",
      description: "",
      keywords: [],
      status: "paused",
      access_mode: "read_only",
      turn_index: 2,
      phase: "",
      next_step: "",
      version: 0,
      checkpoint_id: "cp-1",
      saved_at: "",
      created_at: "",
      kind: "manual",
      data: {},
    });
    assert.equal(parseMachineLine(line({ ...MINIMAL, saved_at: SAVED }))?.created_at, SAVED);
    assert.equal(parseMachineLine(line({ ...MINIMAL, saved_at: SAVED, created_at: CREATED }))?.created_at, CREATED);
  });

  test("optional fields of the wrong type fall back to their defaults instead of leaking through", () => {
    const m = parseMachineLine(
      line({ ...MINIMAL, description: 5, keywords: ["a", 1, null, "b", { x: 1 }], phase: [], next_step: {}, version: "7", saved_at: 1, created_at: false, kind: 3 }),
    );
    assert.deepEqual(m, { ...parseMachineLine(line(MINIMAL))!, keywords: ["a", "b"] });
    assert.deepEqual(parseMachineLine(line({ ...MINIMAL, keywords: "a b" }))?.keywords, []);
    assert.equal(parseMachineLine(line({ ...MINIMAL, version: 7 }))?.version, 7);
  });

  test("data is kept only when it is a JSON object", () => {
    for (const data of [null, [1, 2], "x", 3, true]) assert.deepEqual(parseMachineLine(line({ ...MINIMAL, data }))?.data, {}, JSON.stringify(data));
    assert.deepEqual(parseMachineLine(line({ ...MINIMAL, data: { a: [1], b: null } }))?.data, { a: [1], b: null });
  });

  test("a line without a task id, a checkpoint id or a known status is refused", () => {
    for (const k of ["task_id", "checkpoint_id", "status"] as const) {
      const { [k]: _, ...rest } = MINIMAL;
      assert.equal(parseMachineLine(line(rest)), null, `without ${k}`);
    }
    assert.equal(parseMachineLine(line({ ...MINIMAL, task_id: "" })), null);
    assert.equal(parseMachineLine(line({ ...MINIMAL, checkpoint_id: "" })), null);
    assert.equal(parseMachineLine(line({ ...MINIMAL, task_id: 5 })), null);
    assert.equal(parseMachineLine(line({ ...MINIMAL, checkpoint_id: ["cp-1"] })), null);
    assert.equal(parseMachineLine(line({ ...MINIMAL, status: "done" })), null);
  });

  test("the turn must be a whole number, zero or more", () => {
    for (const turn_index of ["2", 1.5, -1, null, Number.NaN]) assert.equal(parseMachineLine(line({ ...MINIMAL, turn_index })), null, String(turn_index));
    assert.equal(parseMachineLine(line({ ...MINIMAL, turn_index: 0 }))?.turn_index, 0);
  });

  test("JSON that is not an object is refused", () => {
    for (const json of ["null", "[1,2]", '"T_1"', "5", "true"]) assert.equal(parseMachineLine(`${MACHINE_LINE_PREFIX}${json} -->`), null, json);
  });

  test("a comment that is never closed, or whose prefix is not exactly the marker, is not a machine line", () => {
    const json = JSON.stringify(MINIMAL);
    assert.equal(parseMachineLine(`${MACHINE_LINE_PREFIX}${json}\n`), null);
    assert.equal(parseMachineLine(`${MACHINE_LINE_PREFIX}${json}`), null);
    assert.equal(parseMachineLine(`<!-- longrun-state:${json} -->`), null);
    assert.ok(parseMachineLine(`${MACHINE_LINE_PREFIX}${json} -->`));
  });
});
