/** adjust.*, artifact.* and context.*: what a long run was asked and what it delivers. */
import { LIMITS } from "../../core/limits.ts";
import type { Root } from "../../root/root.ts";
import { L } from "../ledger_schemas.ts";
import { callerName, method } from "../method.ts";
import { invalidParams } from "../errors.ts";
import { currentTaskId } from "./runs.ts";

async function taskOf(root: Root, runId: string | undefined): Promise<string> {
  return runId ? (await root.runs.get(runId)).run.task_id : currentTaskId(root);
}

function runRef(p: { run_id?: string; epoch?: number }, method: string): { run_id: string; epoch: number } | undefined {
  if (p.run_id === undefined) return undefined;
  if (p.epoch === undefined) throw invalidParams(`Invalid params for ${method}: a write for a run carries its epoch`, { field: "epoch" });
  return { run_id: p.run_id, epoch: p.epoch };
}

export const deliverableMethods = [
  method({
    name: "adjust.receive",
    side: "host",
    summary: "Store a user's adjustment verbatim (received), for the current task or a run",
    params: L.adjustReceive,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => ({ adjustment: await root.deliverables.receive(await taskOf(root, p.run_id), p.run_id ?? null, p.text) }),
  }),
  method({
    name: "adjust.handoff",
    side: "agent",
    summary: "Record that a recorded request (a receipt RC_… of the run, begun after the adjustment) carried it, fenced by the run's epoch; appended, never replacing an earlier handoff",
    params: L.adjustHandoff,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => ({ adjustment: await root.deliverables.handoff(p.adjustment_id, p.run_id, p.epoch, p.request_id) }),
  }),
  method({
    name: "adjust.satisfy",
    side: "agent",
    summary: "Record that an artifact version made after the adjustment was received addresses it (it must have been handed); appended",
    params: L.adjustSatisfy,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => ({ adjustment: await root.deliverables.satisfy(p.adjustment_id, p.artifact, p.version) }),
  }),
  method({
    name: "adjust.list",
    side: "agent",
    summary: "The current task's adjustments (or another's, by task_id): verbatim text, the latest handoff and satisfaction, and every stage in history",
    params: L.adjustList,
    lane: "read",
    readOnly: true,
    handler: async ({ root }, p) => ({ adjustments: await root.deliverables.adjustments(p.task_id ?? (await currentTaskId(root))) }),
  }),
  method({
    name: "artifact.put",
    side: "agent",
    summary:
      "Save a deliverable version (draft, increment or full; a full one supersedes earlier versions); allowed even past the budget; gaps: what it does not yet cover (opened with it, or the open gap of the same text); closes: gap ids it covers (closed by it); the version shows the gaps open then and those it closed",
    params: L.artifactPut,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => {
      const artifact = await root.deliverables.put({
        task_id: await taskOf(root, p.run_id),
        name: p.name,
        kind: p.kind,
        content: p.content,
        supersedes: p.supersedes,
        run: runRef(p, "artifact.put"),
        note: p.note,
        attachments: p.attachments,
        gaps: p.gaps,
        closes: p.closes,
        by: callerName(caller),
      });
      return { artifact };
    },
  }),
  method({
    name: "gap.list",
    side: "agent",
    summary: "The current task's gaps (or another's, by task_id), oldest first: gap_id, text, status (open or closed), opened (at, run_id, by), closed (at, run_id, by, artifact {name, version} that covers it, note); status narrows them",
    params: L.gapList,
    lane: "read",
    readOnly: true,
    handler: async ({ root }, p) => ({ gaps: await root.deliverables.gaps(p.task_id ?? (await currentTaskId(root)), p.status) }),
  }),
  method({
    name: "gap.close",
    side: "host",
    summary: "Close a gap without an artifact that covers it (the user decides it does not matter), with a note; a closed gap stays closed",
    params: L.gapClose,
    lane: "state",
    readOnly: false,
    handler: async ({ root, caller }, p) => ({ gap: await root.deliverables.closeGap(p.gap_id, p.note, callerName(caller)) }),
  }),
  method({
    name: "artifact.get",
    side: "agent",
    summary: "One version with its content (newest by default; superseded ones stay readable), or one attachment's content",
    params: L.artifactGet,
    lane: "read",
    readOnly: true,
    handler: async ({ root }, p) => {
      const task = await currentTaskId(root);
      if (p.attachment !== undefined) {
        if (p.version === undefined) throw invalidParams("Invalid params for artifact.get: an attachment needs its version", { field: "version" });
        return { name: p.name, version: p.version, attachment: p.attachment, content: await root.deliverables.attachment(task, p.name, p.version, p.attachment) };
      }
      return { artifact: await root.deliverables.get(task, p.name, p.version) };
    },
  }),
  method({
    name: "artifact.list",
    side: "agent",
    summary: "Versions of the current task's artifacts (or another's, by task_id): kind, supersedes / superseded_by, marks, attachments",
    params: L.artifactList,
    lane: "read",
    readOnly: true,
    handler: async ({ root }, p) => ({ artifacts: await root.deliverables.list(p.task_id ?? (await currentTaskId(root)), p.name) }),
  }),
  method({
    name: "artifact.mark",
    side: "agent",
    summary: "Mark a version preview, saved, exported or opened (separate states, each with its time; ok: false for a failure)",
    params: L.artifactMark,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => ({ artifact: await root.deliverables.mark(await currentTaskId(root), p.name, p.version, p.mark, p.ok ?? true, p.detail ?? "") }),
  }),
  method({
    name: "context.put",
    side: "agent",
    summary: "Store a large result under raw_data/; returns ref, size and sha256",
    params: L.contextPut,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) =>
      root.deliverables.putContext({ task_id: await taskOf(root, p.run_id), label: p.label, content: p.content, source: p.source, run: runRef(p, "context.put") }),
  }),
  method({
    name: "context.read",
    side: "agent",
    summary: "Exact byte range of a stored result of this task (or shared with it; text when whole UTF-8, always base64) and the coverage read so far by this run (run_id) or task",
    params: L.contextRead,
    lane: "read",
    readOnly: false,
    handler: async ({ root }, p) =>
      root.deliverables.readContext(p.ref, p.offset ?? 0, p.length, LIMITS.context_read_bytes, { task_id: await taskOf(root, p.run_id), run_id: p.run_id }),
  }),
  method({
    name: "context.share",
    side: "agent",
    summary: "Let another task read one of the current task's context refs (a ref belongs to its task)",
    params: L.contextShare,
    lane: "state",
    readOnly: false,
    handler: async ({ root }, p) => root.deliverables.shareContext(p.ref, await currentTaskId(root), p.task_id),
  }),
];
