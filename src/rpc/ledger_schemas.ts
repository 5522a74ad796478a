/** Param schemas of the run ledger methods (seed 003): runs, receipts, budgets, adjustments, artifacts, context. */
import * as v from "valibot";
import { BUDGET_DIMENSIONS } from "../core/run_rules/budget.ts";
import { RECEIPT_KINDS } from "../core/run_rules/receipts.ts";
import { LIMITS } from "../core/limits.ts";
import { jsonObject, longText, params, positiveInt, shortText, stringList, taskId, taskIdField } from "./schemas.ts";

const runId = v.pipe(v.string(), v.regex(/^R_\d{1,15}$/, "a run id looks like R_0001"));
const approvalId = v.pipe(v.string(), v.regex(/^A_\d{1,15}$/, "an approval id looks like A_0001 (approval.list shows them)"));
const sha256Hex = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "a sha256 hex digest (64 lower-case hex digits)"));
const gapId = v.pipe(v.string(), v.regex(/^G_\d{1,15}$/, "a gap id looks like G_0001 (gap.list shows them)"));
const epoch = v.pipe(v.number(), v.integer(), v.minValue(1));
const ownerTtl = v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(LIMITS.owner_ttl_seconds)));
const amount = v.pipe(v.number(), v.minValue(0), v.maxValue(1e15));
const amounts = v.strictObject(Object.fromEntries(BUDGET_DIMENSIONS.map((d) => [d, v.optional(amount)])) as Record<(typeof BUDGET_DIMENSIONS)[number], v.OptionalSchema<typeof amount, undefined>>);
export const budget = v.strictObject({
  ...amounts.entries,
  unknown_ceiling: v.optional(amounts),
  deadline: v.optional(v.pipe(v.string(), v.isoTimestamp("deadline is an ISO 8601 instant such as 2026-12-01T18:00:00Z"))),
  wall_seconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(366 * 24 * 3600))),
});
const name = v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._ -]{0,119}$/, "a name of letters, digits, dot, dash, underscore or space (1-120)"));
const version = v.pipe(v.number(), v.integer(), v.minValue(1));
const content = v.pipe(v.string(), v.maxLength(LIMITS.memory_content_chars));
const contextRef = v.pipe(v.string(), v.regex(/^C_\d{1,15}$/, "a context ref looks like C_0001"));

/** A run's grant lists (tools, sources, the providers it may send data to, scope), each optional. */
const narrowing = {
  tools: v.optional(stringList()),
  sources: v.optional(stringList()),
  send: v.optional(stringList()),
  scope: v.optional(stringList()),
};
const bounds = v.strictObject({ ...narrowing, budget: v.optional(budget) });

export const L = {
  approvalRequest: params({
    action: shortText(),
    args_digest: v.optional(v.pipe(v.string(), v.regex(/^[0-9A-Za-z:_.+/=-]{1,128}$/, "args_digest is a digest of the action's arguments such as sha256:9f86d0…, at most 128 characters"))),
    reason: shortText(),
    run_id: v.optional(runId),
  }),
  approvalAnswer: params({
    approval_id: approvalId,
    decision: v.picklist(["approve", "reject", "edit"], 'decision is "approve", "reject" or "edit"'),
    note: v.optional(shortText()),
    edited_args: v.optional(jsonObject()),
  }),
  approvalGet: params({ approval_id: approvalId }),
  approvalList: params({
    task_id: taskIdField(),
    all_tasks: v.optional(v.boolean()),
    status: v.optional(v.picklist(["pending", "approved", "rejected", "edited"], 'status is "pending", "approved", "rejected" or "edited"')),
  }),
  eventsRead: params({
    after: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER))),
    limit: v.optional(positiveInt(LIMITS.events_page)),
    kinds: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[a-z][a-z_]*(\.([a-z_]+)?)?$/, 'a kind looks like "run.stale_owner", or "run." for every run event'))), v.minLength(1), v.maxLength(20))),
    task_id: taskIdField(),
    run_id: v.optional(runId),
    wait_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(LIMITS.events_wait_ms))),
  }),
  // the user task's own terms (host only): constraints and desired outcome verbatim, bounds on its runs
  taskStart: params({
    description: longText(),
    keywords: v.optional(stringList()),
    constraints: v.optional(v.pipe(v.array(longText()), v.maxLength(LIMITS.list_items))),
    desired_outcome: v.optional(longText()),
    bounds: v.optional(bounds),
  }),
  runStart: params({
    owner: shortText(),
    tools: v.optional(stringList()),
    sources: v.optional(stringList()),
    // the providers (or places) the run may send data to; checked at receipt.begin (send_to)
    send: v.optional(stringList()),
    scope: v.optional(stringList()),
    reason: v.optional(shortText()),
    budget: v.optional(budget),
    constraints: v.optional(v.pipe(v.array(longText()), v.maxLength(LIMITS.list_items))),
    // seconds the owner may go without a beat (run.heartbeat) before the run shows stale_owner
    owner_ttl_seconds: ownerTtl,
  }),
  runId: params({ run_id: runId }),
  runClaim: params({ run_id: runId, owner: shortText(), owner_ttl_seconds: ownerTtl }),
  runHeartbeat: params({ run_id: runId, epoch }),
  runContinue: params({
    parent_run_id: runId,
    owner: shortText(),
    // explicit: a continuation never takes the parent's allowance by default ({} is no limits)
    budget,
    ...narrowing,
    reason: v.optional(shortText()),
  }),
  // a child of a running run (its owner, fenced by the parent's epoch): a slice of its budget, a subset of its grant
  runChild: params({
    run_id: runId,
    epoch,
    owner: shortText(),
    budget,
    ...narrowing,
    owner_ttl_seconds: ownerTtl,
    reason: v.optional(shortText()),
  }),
  // the host's decision on a requested run: as asked (lists and budget omitted) or narrowed
  runGrant: params({
    run_id: runId,
    ...narrowing,
    budget: v.optional(budget),
    deadline: v.optional(v.pipe(v.string(), v.isoTimestamp("deadline is an ISO 8601 instant such as 2026-12-01T18:00:00Z"))),
    reason: shortText(),
  }),
  runRefuse: params({ run_id: runId, reason: shortText() }),
  runList: params({ task_id: taskIdField(), all_tasks: v.optional(v.boolean()) }),
  runCheckpoint: params({
    run_id: runId,
    epoch,
    settled: v.pipe(v.array(longText()), v.maxLength(LIMITS.list_items)),
    open: v.pipe(v.array(longText()), v.maxLength(LIMITS.list_items)),
    // methods tried that did not work, so whoever goes on does not try them again
    failed: v.optional(v.pipe(v.array(longText()), v.maxLength(LIMITS.list_items))),
    next_step: v.optional(longText(0)),
    note: v.optional(longText(0)),
  }),
  budgetReconcile: params({
    run_id: runId,
    epoch,
    charge_id: v.pipe(v.string(), v.regex(/^CH_\d{1,15}$/, "a charge id looks like CH_0001")),
    ...amounts.entries,
    evidence: longText(),
  }),
  runPark: params({
    run_id: runId,
    epoch,
    waiting_for: shortText(),
    for_user: v.optional(v.boolean()),
    // a running longrun process wakes it then (bounded: LIMITS.wake_at_days ahead)
    wake_at: v.optional(v.pipe(v.string(), v.isoTimestamp("wake_at is an ISO 8601 instant such as 2026-12-01T18:00:00Z"))),
  }),
  // the host may omit the epoch; answer (the user's, through the host) is the host's to give
  runWake: params({
    run_id: runId,
    epoch: v.optional(epoch),
    reason: v.optional(shortText()),
    answer: v.optional(v.strictObject({ text: longText(), data: v.optional(jsonObject()) })),
  }),
  runYield: params({ run_id: runId, epoch, reason: shortText(), request_id: v.optional(shortText()), adjustment_id: v.optional(shortText()) }),
  runCancel: params({ run_id: runId, epoch: v.optional(epoch), reason: shortText() }),
  runFinish: params({
    run_id: runId,
    epoch,
    outcome: longText(),
    gaps: v.optional(v.pipe(v.array(longText()), v.maxLength(LIMITS.list_items))),
    status: v.optional(v.picklist(["finished", "failed"])),
  }),
  receiptBegin: params({
    run_id: runId,
    epoch,
    tool: shortText(),
    kind: v.optional(v.picklist(RECEIPT_KINDS)),
    idempotency_key: shortText(),
    args: v.optional(v.unknown()),
    args_digest: v.optional(sha256Hex),
    source: v.optional(shortText()),
    send_to: v.optional(shortText()),
    // a model request: the host's digests of what it sent, so run.get shows the question and constraints went into it
    sent: v.optional(
      v.strictObject({
        digest: sha256Hex,
        question: v.optional(sha256Hex),
        constraints: v.optional(v.pipe(v.array(sha256Hex), v.maxLength(LIMITS.list_items))),
      }),
    ),
  }),
  receiptSettle: params({
    run_id: runId,
    epoch,
    receipt_id: v.pipe(v.string(), v.regex(/^RC_\d{1,15}$/, "a receipt id looks like RC_0001")),
    outcome: v.picklist(["completed", "failed"]),
    result_ref: v.optional(shortText()),
    error: v.optional(longText()),
    evidence: v.optional(longText()),
  }),
  receiptList: params({ run_id: runId, status: v.optional(v.picklist(["begun", "completed", "failed", "unknown"])) }),
  budgetCharge: params({
    run_id: runId,
    epoch,
    ...amounts.entries,
    // true: every dimension given no amount here is unknown; a list: exactly those
    unknown: v.optional(v.union([v.boolean(), v.pipe(v.array(v.picklist(BUDGET_DIMENSIONS)), v.maxLength(BUDGET_DIMENSIONS.length))])),
    note: v.optional(shortText()),
  }),
  adjustReceive: params({ text: longText(), run_id: v.optional(runId) }),
  adjustHandoff: params({ adjustment_id: shortText(), run_id: runId, epoch, request_id: shortText() }),
  adjustSatisfy: params({ adjustment_id: shortText(), artifact: name, version }),
  adjustList: params({ task_id: taskIdField() }),
  artifactPut: params({
    name,
    kind: v.picklist(["draft", "increment", "full"]),
    content,
    supersedes: v.optional(v.pipe(v.array(version), v.maxLength(1000))),
    run_id: v.optional(runId),
    epoch: v.optional(epoch),
    note: v.optional(shortText(0)),
    attachments: v.optional(
      v.pipe(
        v.array(v.strictObject({ name, content: v.optional(content), error: v.optional(shortText()) })),
        v.maxLength(LIMITS.list_items),
        v.check((list) => new Set(list.map((a) => a.name)).size === list.length, "attachment names must differ: each name once per version"),
      ),
    ),
    // what this version does not yet cover (gaps opened with it), and the gaps it covers (closed by it)
    gaps: v.optional(v.pipe(v.array(longText()), v.maxLength(LIMITS.list_items))),
    closes: v.optional(v.pipe(v.array(gapId), v.maxLength(LIMITS.list_items))),
  }),
  gapList: params({ task_id: taskIdField(), status: v.optional(v.picklist(["open", "closed"], 'status is "open" or "closed"')) }),
  gapClose: params({ gap_id: gapId, note: shortText() }),
  artifactGet: params({ name, version: v.optional(version), attachment: v.optional(name) }),
  artifactList: params({ name: v.optional(name), task_id: taskIdField() }),
  artifactMark: params({ name, version, mark: v.picklist(["preview", "saved", "exported", "opened"]), ok: v.optional(v.boolean()), detail: v.optional(shortText(0)) }),
  contextPut: params({ label: shortText(), content, source: v.optional(shortText()), run_id: v.optional(runId), epoch: v.optional(epoch) }),
  contextShare: params({ ref: contextRef, task_id: taskId() }),
  contextRead: params({
    ref: contextRef,
    run_id: v.optional(runId),
    offset: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
    length: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(LIMITS.context_read_bytes))),
  }),
};
