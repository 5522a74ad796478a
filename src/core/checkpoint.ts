/**
 * Checkpoint text: a part for people and one machine line for programs, in the same record.
 * Recovery never guesses the status from prose; it parses the machine line.
 *
 * The part for people is written in English, Chinese or Korean (the root's setting, or the
 * request's `lang`); the machine line is the same in every language, so parsing never depends on it.
 */
import { isLang, type Lang, LANGS } from "./messages/lang.ts";
import type { TaskStatus } from "./status.ts";
import { isTaskStatus } from "./status.ts";
import type { AccessMode, TaskState } from "./task.ts";

/** Languages a checkpoint's text can be written in: those of every message (src/core/messages/lang.ts). */
export const CHECKPOINT_LANGS = LANGS;
export type CheckpointLang = Lang;
export const isCheckpointLang = isLang;

/** A host's own state saved with a checkpoint: a JSON object, given back on resume and recover. */
export type CheckpointData = Record<string, unknown>;

interface Labels {
  task: string;
  status: string;
  gate: string;
  turn: string;
  phase: string;
  next_step: string;
  summary: string;
  kind: string;
  saved: string;
  /** Between a label and its value. */
  colon: string;
  statuses: Record<TaskStatus, string> | null;
  modes: Record<AccessMode, string> | null;
}

/** The labels of the human part, per language. Status and gate values keep their protocol word beside the translation. */
const LABELS: Record<CheckpointLang, Labels> = {
  en: {
    task: "task",
    status: "status",
    gate: "gate",
    turn: "turn",
    phase: "phase",
    next_step: "next step",
    summary: "summary",
    kind: "kind",
    saved: "saved",
    colon: ": ",
    statuses: null,
    modes: null,
  },
  zh: {
    task: "任务",
    status: "状态",
    gate: "读写门禁",
    turn: "对话轮次",
    phase: "阶段",
    next_step: "下一步",
    summary: "摘要",
    kind: "类型",
    saved: "保存于",
    colon: "：",
    statuses: {
      pending: "待开始",
      in_progress: "进行中",
      paused: "已暂停",
      blocked: "受阻",
      waiting_verification: "待验收",
      completed: "已完成",
      failed: "已失败",
    },
    modes: { read_only: "只读", writable: "可写" },
  },
  ko: {
    task: "작업",
    status: "상태",
    gate: "쓰기 게이트",
    turn: "대화 턴",
    phase: "단계",
    next_step: "다음 단계",
    summary: "요약",
    kind: "종류",
    saved: "저장 시각",
    colon: ": ",
    statuses: {
      pending: "대기",
      in_progress: "진행 중",
      paused: "일시 중지",
      blocked: "막힘",
      waiting_verification: "검수 대기",
      completed: "완료",
      failed: "실패",
    },
    modes: { read_only: "읽기 전용", writable: "쓰기 가능" },
  },
};

/** A translated value with its protocol word: `已暂停 (paused)`; English shows the word alone. */
function word(translated: string | undefined, raw: string): string {
  return translated === undefined ? raw : `${translated} (${raw})`;
}

export const MACHINE_LINE_PREFIX = "<!-- longrun-state: ";
const MACHINE_LINE_SUFFIX = " -->";

/** What the machine line carries: enough to rebuild the task without the state file. */
export interface MachineState {
  task_id: string;
  description: string;
  keywords: string[];
  status: TaskStatus;
  access_mode: "read_only";
  turn_index: number;
  phase: string;
  next_step: string;
  version: number;
  checkpoint_id: string;
  saved_at: string;
  created_at: string;
  /** The checkpoint's kind (`manual`, `progress`, `stop`, …; `outcome` for a finished task's record). */
  kind: string;
  /** The host's own state saved with the checkpoint (`{}` when it gave none, or in an older line). */
  data: CheckpointData;
}

/** JSON that can sit inside an HTML comment: `<`, `>` and `&` are written as \u escapes. */
function commentSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

export function machineLine(state: TaskState, checkpointId: string, savedAt: string, extra: { kind?: string; data?: CheckpointData } = {}): string {
  const m: MachineState = {
    task_id: state.task_id,
    description: state.description,
    keywords: state.keywords,
    status: state.status,
    access_mode: "read_only",
    turn_index: state.turn_index,
    phase: state.phase,
    next_step: state.next_step,
    version: state.version,
    checkpoint_id: checkpointId,
    saved_at: savedAt,
    created_at: state.created_at,
    kind: extra.kind ?? "manual",
    data: extra.data ?? {},
  };
  return MACHINE_LINE_PREFIX + commentSafeJson(m) + MACHINE_LINE_SUFFIX;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

export interface CheckpointContent {
  summary: string;
  kind: string;
  /** The host's own state, carried in the machine line (not in the part for people). */
  data?: CheckpointData;
  /** The language of the part for people (default English). */
  lang?: CheckpointLang;
}

/**
 * Renders the checkpoint record: human lines (in `content.lang`), then the machine line last.
 * The first line, `[LongRun Checkpoint]`, and the machine line are the same in every language.
 */
export function renderCheckpoint(state: TaskState, content: CheckpointContent, checkpointId: string, savedAt: string): string {
  const l = LABELS[content.lang ?? "en"];
  const f = (label: string, value: string | number) => `${label}${l.colon}${value}`;
  const lines = [
    "[LongRun Checkpoint]",
    f(l.task, `${state.task_id} · ${oneLine(state.description, 120)}`),
    [
      f(l.status, word(l.statuses?.[state.status], state.status)),
      f(l.gate, word(l.modes?.[state.access_mode], state.access_mode)),
      f(l.turn, state.turn_index),
    ].join(" · "),
    f(l.phase, state.phase || "-"),
    f(l.next_step, state.next_step || "-"),
    f(l.summary, content.summary),
    `${f(l.kind, content.kind)} · ${f(l.saved, savedAt)}`,
    machineLine(state, checkpointId, savedAt, { kind: content.kind, data: content.data }),
  ];
  return lines.join("\n");
}

/** The newest machine line in `text`, or null when there is none or it does not parse. */
export function parseMachineLine(text: string): MachineState | null {
  const start = text.lastIndexOf(MACHINE_LINE_PREFIX);
  if (start < 0) return null;
  const end = text.indexOf(MACHINE_LINE_SUFFIX, start + MACHINE_LINE_PREFIX.length);
  if (end < 0) return null;
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start + MACHINE_LINE_PREFIX.length, end));
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  const str = (k: string) => (typeof v[k] === "string" ? (v[k] as string) : null);
  const taskId = str("task_id");
  const checkpointId = str("checkpoint_id");
  if (!taskId || !checkpointId || !isTaskStatus(v.status)) return null;
  if (typeof v.turn_index !== "number" || !Number.isInteger(v.turn_index) || v.turn_index < 0) return null;
  return {
    task_id: taskId,
    description: str("description") ?? "",
    keywords: Array.isArray(v.keywords) ? v.keywords.filter((k): k is string => typeof k === "string") : [],
    status: v.status,
    access_mode: "read_only",
    turn_index: v.turn_index,
    phase: str("phase") ?? "",
    next_step: str("next_step") ?? "",
    version: typeof v.version === "number" ? v.version : 0,
    checkpoint_id: checkpointId,
    saved_at: str("saved_at") ?? "",
    created_at: str("created_at") ?? str("saved_at") ?? "",
    kind: str("kind") ?? "manual",
    data: isPlainObject(v.data) ? v.data : {},
  };
}

function isPlainObject(value: unknown): value is CheckpointData {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
