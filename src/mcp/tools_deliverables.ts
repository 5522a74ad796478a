/**
 * The long-research-run tools of `--tools research`, part two: the user's adjustments, staged
 * deliverables (artifacts) and large results stored outside the context.
 */
import { L } from "../rpc/ledger_schemas.ts";
import { ADDS, ADJUSTMENT, ARTIFACT, INTEGER, listOf, OBJECT, pickParams, READS, SETTLES, shape, STRING, type ToolDef } from "./tool_def.ts";
import { epoch, RESEARCH, runId } from "./tools_runs.ts";

export const deliverableTools: ToolDef[] = [
  {
    name: "adjust_list",
    method: "adjust.list",
    description: "What the user asked to change during the task, verbatim, and for each whether a request carried it and a deliverable addressed it.",
    input: pickParams(L.adjustList, {}),
    output: shape({ adjustments: listOf(ADJUSTMENT) }),
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "adjust_handoff",
    method: "adjust.handoff",
    description: "Record that a model request (recorded with receipt_begin after the adjustment arrived) carried the user's adjustment.",
    input: pickParams(L.adjustHandoff, {
      adjustment_id: 'e.g. "ADJ_0001"',
      run_id: runId,
      epoch,
      request_id: 'The request\'s receipt, e.g. "RC_0009"',
    }),
    output: shape({ adjustment: ADJUSTMENT }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "adjust_satisfy",
    method: "adjust.satisfy",
    description: "Record that a deliverable version saved after the adjustment arrived addresses it (it must have been handed on first).",
    input: pickParams(L.adjustSatisfy, {
      adjustment_id: 'e.g. "ADJ_0001"',
      artifact: 'The deliverable\'s name, e.g. "report"',
      version: "Its version, e.g. 3",
    }),
    output: shape({ adjustment: ADJUSTMENT }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "artifact_put",
    method: "artifact.put",
    description:
      "Save a new version of a deliverable: draft, increment, or full (a full one supersedes earlier versions, which stay readable). Allowed even past the budget. gaps: what it does not yet cover; closes: the gap ids it covers.",
    input: pickParams(L.artifactPut, {
      name: 'e.g. "report"',
      kind: 'e.g. "full"',
      content: 'The text, e.g. "# Findings …"',
      supersedes: "Versions this one replaces, e.g. [1, 2]",
      run_id: 'The run that made it (then epoch too), e.g. "R_0001"',
      epoch: "The run's ownership number, e.g. 1",
      note: 'e.g. "adds section 3"',
      attachments: 'Files with it, each {name, content} or {name, error}, e.g. [{"name": "data.csv", "content": "a,b"}]',
      gaps: 'What this version does not yet cover, e.g. ["fund C\'s fees"]',
      closes: 'Gap ids this version covers (gap_list shows them), e.g. ["G_0001"]',
    }),
    output: shape({ artifact: ARTIFACT }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "artifact_get",
    method: "artifact.get",
    description: "One version of a deliverable with its content (newest by default), or one attachment's content.",
    input: pickParams(L.artifactGet, {
      name: 'e.g. "report"',
      version: "Default: the newest, e.g. 2",
      attachment: 'An attachment\'s name (needs version), e.g. "data.csv"',
    }),
    output: { type: "object", properties: { artifact: ARTIFACT, content: STRING }, anyOf: [{ required: ["artifact"] }, { required: ["attachment", "content"] }] },
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "artifact_list",
    method: "artifact.list",
    description: "The current task's deliverable versions: kind, what supersedes what, marks, attachments.",
    input: pickParams(L.artifactList, { name: 'Only this deliverable, e.g. "report"' }),
    output: shape({ artifacts: listOf(ARTIFACT) }),
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "gap_list",
    method: "gap.list",
    description: "The current task's gaps (what its drafts do not yet cover), oldest first: id, text, open or closed, which run opened it and which version closed it.",
    input: pickParams(L.gapList, { status: 'Only "open" or "closed" ones, e.g. "open"' }),
    output: shape({ gaps: listOf(OBJECT) }),
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "artifact_mark",
    method: "artifact.mark",
    description: "Record that a version was previewed, saved, exported or opened (each a separate fact with its time); ok: false records a failure.",
    input: pickParams(L.artifactMark, {
      name: 'e.g. "report"',
      version: "e.g. 2",
      mark: 'e.g. "exported"',
      ok: "false when it failed (default true), e.g. false",
      detail: 'e.g. "exported to report.pdf"',
    }),
    output: shape({ artifact: ARTIFACT }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "context_put",
    method: "context.put",
    description: "Store a large result (a page, a file) outside your context; returns a ref, its size and sha256. context_read reads exact ranges back.",
    input: pickParams(L.contextPut, {
      label: 'What it is, e.g. "arxiv 2401.01234 full text"',
      content: 'The text, e.g. "Abstract: …"',
      source: 'Where it came from (with run_id: one of the run\'s sources), e.g. "https://arxiv.org/abs/2401.01234"',
      run_id: 'The run that fetched it (then epoch too), e.g. "R_0001"',
      epoch: "The run's ownership number, e.g. 1",
    }),
    output: shape({ ref: STRING, size: INTEGER, sha256: STRING }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "context_read",
    method: "context.read",
    description:
      "Read an exact byte range of a stored result (text when it is whole UTF-8, always base64) and how much of it this run or task has read so far.",
    input: pickParams(L.contextRead, {
      ref: 'From context_put, e.g. "C_0002"',
      offset: "First byte (default 0), e.g. 65536",
      length: "Bytes to read (default and most 262,144), e.g. 65536",
      run_id: 'Count coverage for this run, e.g. "R_0001"',
    }),
    output: shape({ ref: STRING, offset: INTEGER, length: INTEGER, data_base64: STRING, coverage: OBJECT }),
    // records what was read (coverage); reading the same range again adds nothing
    hints: SETTLES,
    sets: RESEARCH,
  },
  {
    name: "context_share",
    method: "context.share",
    description: "Let another task of this project read one of the current task's stored results.",
    input: pickParams(L.contextShare, { ref: 'e.g. "C_0002"', task_id: 'The task to share with, e.g. "T_20261130_120000_ab12"' }),
    output: shape({ ref: STRING, shared_with: listOf(STRING) }),
    hints: SETTLES,
    sets: RESEARCH,
  },
];
