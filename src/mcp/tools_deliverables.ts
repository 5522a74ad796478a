/**
 * The long-research-run tools of `--tools research`, part two: the user's adjustments, staged
 * deliverables (artifacts) and large results stored outside the context.
 */
import { ADDS, ADJUSTMENT, ARTIFACT, bool, INTEGER, int, list, listOf, OBJECT, object, oneOf, READS, STRING, SETTLES, shape, str, type ToolDef } from "./tool_def.ts";
import { epoch, RESEARCH, runId } from "./tools_runs.ts";

export const deliverableTools: ToolDef[] = [
  {
    name: "adjust_list",
    method: "adjust.list",
    description: "What the user asked to change during the task, verbatim, and for each whether a request carried it and a deliverable addressed it.",
    params: {},
    output: shape({ adjustments: listOf(ADJUSTMENT) }),
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "adjust_handoff",
    method: "adjust.handoff",
    description: "Record that a model request (recorded with receipt_begin after the adjustment arrived) carried the user's adjustment.",
    params: {
      adjustment_id: str('e.g. "ADJ_0001"'),
      run_id: runId,
      epoch,
      request_id: str('The request\'s receipt, e.g. "RC_0009"'),
    },
    required: ["adjustment_id", "run_id", "epoch", "request_id"],
    output: shape({ adjustment: ADJUSTMENT }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "adjust_satisfy",
    method: "adjust.satisfy",
    description: "Record that a deliverable version saved after the adjustment arrived addresses it (it must have been handed on first).",
    params: {
      adjustment_id: str('e.g. "ADJ_0001"'),
      artifact: str('The deliverable\'s name, e.g. "report"'),
      version: int("Its version, e.g. 3"),
    },
    required: ["adjustment_id", "artifact", "version"],
    output: shape({ adjustment: ADJUSTMENT }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "artifact_put",
    method: "artifact.put",
    description:
      "Save a new version of a deliverable: draft, increment, or full (a full one supersedes earlier versions, which stay readable). Allowed even past the budget.",
    params: {
      name: str('e.g. "report"'),
      kind: oneOf(["draft", "increment", "full"], 'e.g. "full"'),
      content: str('The text, e.g. "# Findings …"'),
      supersedes: list("Versions this one replaces, e.g. [1, 2]", { type: "integer" }),
      run_id: str('The run that made it (then epoch too), e.g. "R_0001"'),
      epoch: int("The run's ownership number, e.g. 1"),
      note: str('e.g. "adds section 3"'),
      attachments: list('Files with it, each {name, content} or {name, error}, e.g. [{"name": "data.csv", "content": "a,b"}]', {
        type: "object",
        properties: { name: { type: "string" }, content: { type: "string" }, error: { type: "string" } },
        required: ["name"],
      }),
    },
    required: ["name", "kind", "content"],
    output: shape({ artifact: ARTIFACT }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "artifact_get",
    method: "artifact.get",
    description: "One version of a deliverable with its content (newest by default), or one attachment's content.",
    params: {
      name: str('e.g. "report"'),
      version: int("Default: the newest, e.g. 2"),
      attachment: str('An attachment\'s name (needs version), e.g. "data.csv"'),
    },
    required: ["name"],
    output: { type: "object", properties: { artifact: ARTIFACT, content: STRING }, anyOf: [{ required: ["artifact"] }, { required: ["attachment", "content"] }] },
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "artifact_list",
    method: "artifact.list",
    description: "The current task's deliverable versions: kind, what supersedes what, marks, attachments.",
    params: { name: str('Only this deliverable, e.g. "report"') },
    output: shape({ artifacts: listOf(ARTIFACT) }),
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "artifact_mark",
    method: "artifact.mark",
    description: "Record that a version was previewed, saved, exported or opened (each a separate fact with its time); ok: false records a failure.",
    params: {
      name: str('e.g. "report"'),
      version: int("e.g. 2"),
      mark: oneOf(["preview", "saved", "exported", "opened"], 'e.g. "exported"'),
      ok: bool("false when it failed (default true), e.g. false"),
      detail: str('e.g. "exported to report.pdf"'),
    },
    required: ["name", "version", "mark"],
    output: shape({ artifact: ARTIFACT }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "context_put",
    method: "context.put",
    description: "Store a large result (a page, a file) outside your context; returns a ref, its size and sha256. context_read reads exact ranges back.",
    params: {
      label: str('What it is, e.g. "arxiv 2401.01234 full text"'),
      content: str('The text, e.g. "Abstract: …"'),
      source: str('Where it came from (with run_id: one of the run\'s sources), e.g. "https://arxiv.org/abs/2401.01234"'),
      run_id: str('The run that fetched it (then epoch too), e.g. "R_0001"'),
      epoch: int("The run's ownership number, e.g. 1"),
    },
    required: ["label", "content"],
    output: shape({ ref: STRING, size: INTEGER, sha256: STRING }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "context_read",
    method: "context.read",
    description:
      "Read an exact byte range of a stored result (text when it is whole UTF-8, always base64) and how much of it this run or task has read so far.",
    params: {
      ref: str('From context_put, e.g. "C_0002"'),
      offset: int("First byte (default 0), e.g. 65536", 0),
      length: int("Bytes to read (default and most 262,144), e.g. 65536", 0),
      run_id: str('Count coverage for this run, e.g. "R_0001"'),
    },
    required: ["ref"],
    output: shape({ ref: STRING, offset: INTEGER, length: INTEGER, data_base64: STRING, coverage: OBJECT }),
    // records what was read (coverage); reading the same range again adds nothing
    hints: SETTLES,
    sets: RESEARCH,
  },
  {
    name: "context_share",
    method: "context.share",
    description: "Let another task of this project read one of the current task's stored results.",
    params: { ref: str('e.g. "C_0002"'), task_id: str('The task to share with, e.g. "T_20261130_120000_ab12"') },
    required: ["ref", "task_id"],
    output: shape({ ref: STRING, shared_with: listOf(STRING) }),
    hints: SETTLES,
    sets: RESEARCH,
  },
];
