/**
 * The long-research-run tools of `--tools research`, part one: runs and their ownership, tool
 * effects recorded before and after (receipts), budgets. Part two is tools_deliverables.ts.
 */
import { BUDGET_DIMENSIONS } from "../core/run_rules/budget.ts";
import { L } from "../rpc/ledger_schemas.ts";
import {
  ADDS, ARRAY, BOOLEAN, BUDGET, ENDS, INTEGER, listOf, nullable, OBJECT, type ParamText, pickParams, READS, RECEIPT, RUN, SETTLES, shape, STRING,
  type ToolDef,
} from "./tool_def.ts";

export const RESEARCH: ToolDef["sets"] = ["research"];

export const runId = 'The run, e.g. "R_0001"';
export const epoch = "Your ownership number for the run, from run_start or run_claim (a newer owner makes older numbers fail), e.g. 1";
const owner = 'Who runs it: a name for this executor, e.g. "worker-1"';
const ownerTtl = "Seconds you may go without run_heartbeat before the run shows stale_owner (and a standby may take it over), e.g. 120";
export const strings = (what: string, example: string) => `${what}, e.g. ${example}`;

const amounts = {
  requests: "Model requests, e.g. 1",
  input_tokens: "Input tokens, e.g. 1200",
  output_tokens: "Output tokens, e.g. 300",
  tool_calls: "Tool calls, e.g. 2",
  cost: "Cost in your currency unit, e.g. 0.04",
} satisfies Record<(typeof BUDGET_DIMENSIONS)[number], string>;

const budgetParam = (what: string): ParamText => ({
  description: `${what}: limits per dimension (${BUDGET_DIMENSIONS.join(", ")}), optional deadline (ISO time) and wall_seconds; {} means no limits, e.g. {"requests": 50, "cost": 2}`,
  shown: { type: "object" },
  why: "its fields are named in the description; listing them as properties would double the run tools' size",
});

export const runTools: ToolDef[] = [
  {
    name: "run_start",
    method: "run.start",
    description:
      "Ask for a research run of the current task: what it may use and its budget. It is a request (status requested) until the user approves it, maybe narrowed; until then it begins nothing (check with run_get). Ownership number (epoch) 1.",
    input: pickParams(L.runStart, {
      owner,
      tools: strings("Tools the run may use", '["web_search", "fetch"]'),
      sources: strings('Sources it may consult (exact; "*" for any)', '["https://arxiv.org/abs/2401.01234"]'),
      send: strings("Providers it may send data to", '["openai"]'),
      reason: 'Why, for the user, e.g. "compare the two funds"',
      scope: strings("What it covers", '["2020-2025 papers"]'),
      budget: budgetParam("Its budget"),
      constraints: strings("The user's constraints, verbatim", '["no paywalled sources"]'),
      owner_ttl_seconds: ownerTtl,
    }),
    output: shape({ run: RUN }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "run_get",
    method: "run.get",
    description: "Observe a run without touching it (after a reconnect): status, owner, question, budget, effects of unknown outcome, open items, events.",
    input: pickParams(L.runId, { run_id: runId }),
    output: shape({ run: RUN, question: STRING, budget: BUDGET, unknown_receipts: ARRAY, open_items: ARRAY, events: ARRAY }),
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "run_list",
    method: "run.list",
    description: "The runs of the current task (or of every task), with status, owner, budget and open items, and the total spend.",
    input: pickParams(L.runList, {
      task_id: 'Another task\'s runs, e.g. "T_20261130_120000_ab12"',
      all_tasks: "true for the runs of every task, e.g. true",
    }),
    output: shape({ task_id: nullable(STRING), runs: listOf(RUN), total: OBJECT }),
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "run_claim",
    method: "run.claim",
    description:
      "Take over a run after a crash, under a new ownership number: the old owner's writes are refused from now on; effects it began but never settled become unknown (check them, never just redo them).",
    input: pickParams(L.runClaim, { run_id: runId, owner, owner_ttl_seconds: ownerTtl }),
    output: shape({ run: RUN, newly_unknown: listOf(RECEIPT) }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "run_child",
    method: "run.child",
    description:
      "Start a child run of your running run for a sub-agent's work: its own id, owner and receipts, a slice of your budget (a limit for each dimension yours limits, at most what you have left) and your tools, sources and send or fewer. It runs at once; its spend counts in yours; you cannot finish while it is open.",
    input: pickParams(L.runChild, {
      run_id: 'Your run, the parent, e.g. "R_0001"',
      epoch,
      owner: 'Who runs the child, e.g. "subagent-1"',
      budget: budgetParam("Its slice of your budget"),
      tools: strings("Tools it may use (yours or fewer)", '["web_search"]'),
      sources: strings("Sources it may consult (yours or fewer)", '["https://arxiv.org/abs/2401.01234"]'),
      send: strings("Providers it may send data to (yours or fewer)", '["openai"]'),
      scope: strings("What it covers (yours or less)", '["2020-2025 papers"]'),
      owner_ttl_seconds: ownerTtl,
      reason: 'What the child is for, e.g. "survey the 2024 papers"',
    }),
    output: shape({ run: RUN }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "run_heartbeat",
    method: "run.heartbeat",
    description:
      "Say you are still working on the run (keeps it from going stale_owner). The answer's stop tells you to stop now: cancelled, budget_exhausted, deadline, or superseded (someone else owns the run now); null means go on.",
    input: pickParams(L.runHeartbeat, { run_id: runId, epoch }),
    output: shape({ run: RUN, stop: nullable(STRING) }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "approval_request",
    method: "approval.request",
    description:
      "Ask the user before one action you are unsure of (sending mail, deleting, paying): it waits for their answer. Call approval_get later, or this again with the same action and args_digest, to read it: approved, rejected, or edited (then only edited_args are allowed).",
    input: pickParams(L.approvalRequest, {
      action: 'What you want to do, e.g. "email.send"',
      args_digest: 'A digest of the arguments, so the answer is about exactly these, e.g. "sha256:9f86d081884c7d65"',
      reason: 'Why, in a sentence for the user, e.g. "Send the weekly report to the team"',
      run_id: 'The research run it belongs to, e.g. "R_0001"',
    }),
    output: shape({ approval: OBJECT, created: BOOLEAN }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "approval_get",
    method: "approval.get",
    description: "Read one approval you asked for: pending (wait), approved (go ahead), rejected (do not; note says why) or edited (go ahead only with edited_args).",
    input: pickParams(L.approvalGet, { approval_id: 'From approval_request, e.g. "A_0001"' }),
    output: shape({ approval: OBJECT }),
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "approval_list",
    method: "approval.list",
    description: "The approvals of the current task, newest first, with the user's answers; status pending lists those still waiting.",
    input: pickParams(L.approvalList, {
      task_id: 'Another task, e.g. "T_20261130_120000_ab12"; default: the current task',
      all_tasks: "true for every task's approvals, e.g. true",
      status: 'Only these, e.g. "pending"',
    }),
    output: shape({ task_id: nullable(STRING), approvals: ARRAY, total: INTEGER }),
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "events_read",
    method: "events.read",
    description:
      "What happened in this project since an event id, oldest first: checkpoints saved, writes requested or granted, runs granted, parked, woken, stale, out of budget. Pass after: last_id of your previous read; wait_ms waits for the next one.",
    input: pickParams(L.eventsRead, {
      after: "The last event id you saw (last_id of the previous read), e.g. 42; 0 or absent: from the start",
      limit: "Events per page (default 100, max 500), e.g. 50",
      kinds: 'Only these kinds; one ending in "." is a prefix, e.g. ["run.", "task."]',
      task_id: 'Only this task\'s events, e.g. "T_20261130_120000_ab12"',
      run_id: 'Only this run\'s events, e.g. "R_0001"',
      wait_ms: "Wait up to this long (ms, max 25000) for an event when there is none yet, e.g. 10000",
    }),
    output: shape({ events: ARRAY, last_id: INTEGER }),
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "run_continue",
    method: "run.continue",
    description:
      "Ask to continue an ended run in a new one in the current task: same or narrower permissions, a budget of its own, the parent's unknown effects as open items. A request until the user approves it.",
    input: pickParams(L.runContinue, {
      parent_run_id: 'The run to continue, e.g. "R_0001"',
      owner,
      budget: budgetParam("The new run's budget (required; the parent's spend is not inherited)"),
      tools: strings("Narrower tool list (default: the parent's)", '["fetch"]'),
      sources: strings("Narrower source list (default: the parent's)", '["https://arxiv.org/abs/2401.01234"]'),
      send: strings("Narrower list of providers to send data to (default: the parent's)", '["openai"]'),
      scope: strings("Narrower scope (default: the parent's)", '["2024 papers"]'),
      reason: 'Why more is needed, for the user, e.g. "two sources left"',
    }),
    output: shape({ run: RUN, open_items: ARRAY }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "run_checkpoint",
    method: "run.checkpoint",
    description: "Save the run's working summary: what is settled, what is still open, the methods that failed and the next step. run_get and run_claim return the newest.",
    input: pickParams(L.runCheckpoint, {
      run_id: runId,
      epoch,
      settled: strings("Facts established", '["3 of 5 sources read"]'),
      open: strings("Questions still open", '["compare with the 2023 survey"]'),
      failed: strings("Methods tried that did not work, so nobody tries them again", '["the archive search returns nothing before 2020"]'),
      next_step: 'What to do next, e.g. "read the 2023 survey"',
      note: 'Anything else, e.g. "source 4 was down"',
    }),
    output: shape({ checkpoint: shape({ epoch: INTEGER, settled: ARRAY, open: ARRAY, failed: ARRAY, next_step: STRING }) }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "run_park",
    method: "run.park",
    description: "Set a running run aside while it waits for something outside. run_wake wakes it, or longrun itself at wake_at.",
    input: pickParams(L.runPark, {
      run_id: runId,
      epoch,
      waiting_for: 'What it waits for, e.g. "the user\'s API key"',
      for_user: "true when it waits for the user: then only the user wakes it, with the answer, e.g. true",
      wake_at: 'When longrun wakes it by itself (ISO time), e.g. "2026-12-01T18:00:00Z"',
    }),
    output: shape({ run: RUN }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "run_wake",
    method: "run.wake",
    description: "Wake a parked run; it keeps its identity, recorded effects and budget. A run parked for the user is woken by the user only (the answer is then on run_get).",
    // the host may wake a run without the epoch; the model always names its ownership
    input: pickParams(L.runWake, { run_id: runId, epoch, reason: 'What changed, e.g. "key received"' }, ["epoch"]),
    output: shape({ run: RUN }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "run_yield",
    method: "run.yield",
    description: "Record that the current model request was stopped so the next one takes in the user's adjustment. The run keeps running (this is not a cancel).",
    input: pickParams(L.runYield, {
      run_id: runId,
      epoch,
      reason: 'Why, e.g. "the user narrowed the question"',
      request_id: 'The stopped request\'s receipt, e.g. "RC_0007"',
      adjustment_id: 'The adjustment it yields to, e.g. "ADJ_0001"',
    }),
    output: shape({ run: RUN }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "run_cancel",
    method: "run.cancel",
    description: "Stop the whole run because the user asked to (recorded as a cancel, not a yield). It cannot be resumed.",
    input: pickParams(L.runCancel, { run_id: runId, epoch, reason: 'The user\'s reason, e.g. "no longer needed"' }, ["epoch"]),
    output: shape({ run: RUN }),
    hints: ENDS,
    sets: RESEARCH,
  },
  {
    name: "run_finish",
    method: "run.finish",
    description: "End a run with its outcome and the gaps still open (finishing never claims the gaps are closed); each gap gets an id, the same text as an open gap is that gap.",
    input: pickParams(L.runFinish, {
      run_id: runId,
      epoch,
      outcome: 'What the run produced, e.g. "report v2 saved"',
      gaps: strings("What is still missing", '["no data for 2025"]'),
      status: 'How it ended (default "finished"), e.g. "failed"',
    }),
    output: shape({ run: RUN, gaps: ARRAY }),
    hints: ENDS,
    sets: RESEARCH,
  },
  {
    name: "receipt_begin",
    method: "receipt.begin",
    description:
      "Record a tool call (or a model request, or a child run: kind) before you make it (give args or args_digest). If the same idempotency_key already completed, its recorded result comes back with replayed: true: do not run it again.",
    input: pickParams(L.receiptBegin, {
      run_id: runId,
      epoch,
      tool: 'The tool you will call, e.g. "fetch"',
      kind: 'What it is (default "tool_call"; a model request counts as a request), e.g. "model_request"',
      idempotency_key: 'Stable across retries of the same effect, e.g. "fetch:https://example.org/a"',
      args: {
        description: 'The call\'s arguments (hashed here), e.g. {"url": "https://example.org/a"}',
        shown: { type: "object" },
        why: "the protocol hashes any JSON value; valibot's unknown has no type to show, and a tool's arguments are an object",
      },
      args_digest: 'Or the sha256 hex of them, e.g. "9f86d081884c7d65…"',
      source: 'The source it reads, if any (must be in the run\'s sources), e.g. "https://example.org/a"',
      send_to: 'The provider it sends data to, if any (must be in the run\'s send), e.g. "openai"',
      sent: 'For a model request: sha256 hex digests of what you send, {digest, question, constraints}, e.g. {"digest": "9f86…", "question": "2c26…", "constraints": ["fcde…"]}',
    }),
    output: shape({ receipt: RECEIPT, replayed: BOOLEAN }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "receipt_settle",
    method: "receipt.settle",
    description: "Record how a recorded tool call ended: completed (with where its result is) or failed (with the error). An unknown one needs evidence.",
    input: pickParams(L.receiptSettle, {
      run_id: runId,
      epoch,
      receipt_id: 'From receipt_begin, e.g. "RC_0003"',
      outcome: 'e.g. "completed"',
      result_ref: 'Where the result is (needed for completed), e.g. "C_0002"',
      error: 'What went wrong (for failed), e.g. "HTTP 503"',
      evidence: 'How you know, for an effect whose outcome was unknown, e.g. "the page exists at …"',
    }),
    output: shape({ receipt: RECEIPT }),
    hints: SETTLES,
    sets: RESEARCH,
  },
  {
    name: "receipt_list",
    method: "receipt.list",
    description: "A run's recorded tool calls, optionally only those with one status (unknown ones stay until settled with evidence).",
    input: pickParams(L.receiptList, { run_id: runId, status: 'e.g. "unknown"' }),
    output: shape({ receipts: listOf(RECEIPT) }),
    hints: READS,
    sets: RESEARCH,
  },
  {
    name: "budget_charge",
    method: "budget.charge",
    description:
      "Record what was spent (always, also past a limit). An amount you do not know: unknown: true (or a list of dimensions); it counts as unknown, never zero, until budget_reconcile.",
    input: pickParams(L.budgetCharge, {
      run_id: runId,
      epoch,
      ...amounts,
      unknown: {
        description: 'true, or the dimensions whose amount is unknown, e.g. ["cost"]',
        shown: { type: ["boolean", "array"], items: { type: "string" } },
        why: "valibot's union of true-or-list is an anyOf; one type list says it in fewer tokens (the dimensions are in the description)",
      },
      note: 'What it was for, e.g. "search round 3"',
    }),
    output: shape({ charge_id: STRING, budget: BUDGET }),
    hints: ADDS,
    sets: RESEARCH,
  },
  {
    name: "budget_reconcile",
    method: "budget.reconcile",
    description: "Record what a charge of unknown amount really cost, with evidence; the original record is kept.",
    input: pickParams(L.budgetReconcile, {
      run_id: runId,
      epoch,
      charge_id: 'The unknown charge, e.g. "CH_0004"',
      ...amounts,
      evidence: 'Where the amount comes from, e.g. "provider invoice line 12"',
    }),
    output: shape({ budget: BUDGET }),
    hints: SETTLES,
    sets: RESEARCH,
  },
  {
    name: "budget_status",
    method: "budget.status",
    description: "A run's limits, spend, unknown charges, what remains (null where uncertain), time left, and whether new effects are allowed.",
    input: pickParams(L.runId, { run_id: runId }),
    output: shape({ budget: BUDGET }),
    hints: READS,
    sets: RESEARCH,
  },
];
