"""The shapes of longrun's params and results, as ``TypedDict``s and ``Literal``s.

They describe what the server sends (snake_case, exactly as on the wire); the clients return the
server's dicts unchanged, so these are for type checkers and readers, not checked at run time.
"""
from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

JSONObject = Dict[str, Any]

TaskStatus = Literal["pending", "in_progress", "paused", "blocked", "waiting_verification", "completed", "failed"]
AccessMode = Literal["read_only", "writable"]
Side = Literal["host", "agent"]
CheckpointLang = Literal["en", "zh", "ko"]
LeaseEventKind = Literal["granted", "revoked", "requested"]
RunStatus = Literal["requested", "running", "parked", "finished", "cancelled", "failed", "refused"]
RunEndStatus = Literal["finished", "failed"]
ReceiptStatus = Literal["begun", "completed", "failed", "unknown"]
ReceiptOutcome = Literal["completed", "failed"]
#: What a receipt records, and so where it counts: a tool call, a model request (a request), a child run (neither).
ReceiptKind = Literal["tool_call", "model_request", "child_run"]
BudgetDimension = Literal["requests", "input_tokens", "output_tokens", "tool_calls", "cost"]
ArtifactKind = Literal["draft", "increment", "full"]
ArtifactMark = Literal["preview", "saved", "exported", "opened"]
AdjustmentStage = Literal["received", "handed", "satisfied"]
ErrorKind = Literal[
    "parse_error", "invalid_request", "method_not_found", "invalid_params", "internal",
    "write_gate_violation", "transition_error", "checkpoint_write_error", "state_corrupt", "no_active_task",
    "stale_epoch", "budget_exhausted", "unauthorized", "limit_exceeded", "conflict", "not_found",
    "storage_error", "memory_corrupt", "content_missing", "idempotency_conflict",
]

# -- tasks --------------------------------------------------------------------------------------


class Lease(TypedDict):
    turn: int
    reason: str
    granted_by: str
    granted_at: str
    scope: Optional[List[str]]
    expires_at: Optional[str]
    max_uses: Optional[int]
    uses: int


class _LeaseEventBase(TypedDict):
    at: str
    event: LeaseEventKind
    turn: int
    reason: str


class LeaseEvent(_LeaseEventBase, total=False):
    by: str
    scope: Optional[List[str]]


# "from" is a Python keyword: the functional form
StatusChange = TypedDict("StatusChange", {"at": str, "from": Optional[TaskStatus], "to": TaskStatus, "reason": str, "turn": int})


class _CheckpointRefBase(TypedDict):
    checkpoint_id: str
    memory_id: str
    at: str


class CheckpointRef(_CheckpointRefBase, total=False):
    kind: str
    #: The host's own state saved with the checkpoint (absent in states saved by an older longrun).
    data: JSONObject


class Task(TypedDict):
    format: int
    task_id: str
    description: str
    keywords: List[str]
    status: TaskStatus
    access_mode: AccessMode
    turn_index: int
    write_lease_turn: Optional[int]
    lease: Optional[Lease]
    phase: str
    next_step: str
    created_at: str
    updated_at: str
    version: int
    last_checkpoint: Optional[CheckpointRef]
    history: List[StatusChange]
    lease_log: List[LeaseEvent]


class TaskSummary(TypedDict):
    task_id: str
    description: str
    status: TaskStatus
    turn_index: int
    access_mode: AccessMode
    current: bool
    updated_at: str


class _PendingInfoBase(TypedDict):
    path: str
    checkpoint_id: str
    task_id: str
    created_at: str
    error: Optional[str]


class PendingInfo(_PendingInfoBase, total=False):
    lost: bool


class ReplayInfo(TypedDict):
    checkpoint_id: str
    memory_id: str
    created: bool


class MemoryHit(TypedDict):
    id: str
    type: str
    title: str
    snippet: str
    score: float
    task_id: Optional[str]
    created_at: str


class MemoryRecordInfo(TypedDict):
    id: str
    type: str
    title: str
    keywords: List[str]
    task_id: Optional[str]
    created_at: str
    raw_ref: Optional[str]
    sha256: str
    size: int


class MemoryRecord(MemoryRecordInfo):
    content: str


class _MemoryItemBase(TypedDict):
    type: str
    title: str
    content: str


class MemoryItem(_MemoryItemBase, total=False):
    """One record for ``save_memories``."""

    keywords: List[str]


class TaskResult(TypedDict):
    task: Task


class TaskBounds(TypedDict, total=False):
    """What no run of a task may exceed (host-set at task.start): lists and a budget."""

    tools: List[str]
    sources: List[str]
    send: List[str]
    scope: List[str]
    budget: "BudgetLimits"


class TaskTerms(TypedDict):
    """A task's own terms, set by the host: kept verbatim and inherited by its runs."""

    constraints: List[str]
    desired_outcome: Optional[str]
    bounds: Optional[TaskBounds]
    set_by: str


class TaskStartResult(TypedDict):
    task: Task
    memories: List[MemoryHit]
    previous_task: Optional[str]
    terms: Optional[TaskTerms]


class TaskListResult(TypedDict):
    tasks: List[TaskSummary]


class CheckpointResult(TypedDict):
    text: str
    memory_id: str
    task: Task


class ResumeResult(TypedDict):
    task: Task
    memories: List[MemoryHit]
    replayed: Optional[ReplayInfo]
    pending_checkpoint: Optional[PendingInfo]
    #: The last checkpoint's data ({} when it carried none), None when the task has no checkpoint.
    data: Optional[JSONObject]


class RecoverResult(TypedDict):
    task: Optional[Task]
    memory_id: Optional[str]
    quarantined: Optional[str]
    data: Optional[JSONObject]


class FinishResult(TypedDict):
    task: Task
    memory_id: str
    cancelled_runs: List[str]


class GrantResult(TypedDict):
    task: Task
    lease: Lease


class RequestResult(TypedDict):
    requested: bool
    granted: bool
    turn: int
    task: Task


class GateResult(TypedDict):
    ok: bool
    action: str
    turn: int
    lease: Lease


class MemorySaveResult(TypedDict):
    id: str
    created: bool
    record: MemoryRecordInfo


class MemorySaveManyResult(TypedDict):
    ids: List[str]
    count: int


class MemorySearchResult(TypedDict):
    hits: List[MemoryHit]
    next_cursor: Optional[str]


class MemoryGetResult(TypedDict):
    record: MemoryRecord


class MethodInfo(TypedDict):
    name: str
    side: Side
    summary: str
    params: JSONObject
    read_only: bool


class ErrorCodeInfo(TypedDict):
    code: int
    kind: str


class DescribeResult(TypedDict):
    name: str
    version: str
    protocol_version: str
    caller_side: Side
    default_root: str
    limits: Dict[str, int]
    errors: List[ErrorCodeInfo]
    methods: List[MethodInfo]


# -- runs, receipts, budgets --------------------------------------------------------------------


class Authorization(TypedDict):
    tools: List[str]
    sources: List[str]
    send: List[str]
    scope: List[str]


class BudgetAmounts(TypedDict, total=False):
    requests: float
    input_tokens: float
    output_tokens: float
    tool_calls: float
    cost: float


class BudgetLimits(BudgetAmounts, total=False):
    """A run's limits: amounts per dimension, ``unknown_ceiling``, ``deadline`` (ISO 8601), ``wall_seconds``."""

    unknown_ceiling: BudgetAmounts
    deadline: str
    wall_seconds: int


class GrantRequest(TypedDict):
    authorization: Authorization
    budget: "BudgetLimits"


class GrantRecord(TypedDict):
    """Who asked for a run, what was asked, and the host's decision (who, when, why)."""

    state: Literal["requested", "granted", "refused"]
    requested_by: str
    requested_at: str
    request: GrantRequest
    decided_by: Optional[str]
    decided_at: Optional[str]
    reason: Optional[str]
    standing: Optional[str]


class HostAnswerIn(TypedDict, total=False):
    """The host's answer to a run parked for the user: ``text`` (required) and ``data`` (a JSON object)."""

    text: str
    data: Dict[str, Any]


class HostAnswer(TypedDict):
    text: str
    data: Optional[Dict[str, Any]]
    by: str
    at: str


class Run(TypedDict):
    run_id: str
    task_id: str
    parent_run_id: Optional[str]
    status: RunStatus
    owner: str
    epoch: int
    authorization: Authorization
    budget_limits: BudgetLimits
    parked_on: Optional[str]
    parked_for_user: bool
    answer: Optional[HostAnswer]
    grant: Optional[GrantRecord]
    outcome: Optional[str]
    gaps: List[str]
    created_at: str
    updated_at: str
    ended_at: Optional[str]


class OpenCharge(TypedDict):
    """A charge of unknown amount in an earlier run of the chain, not reconciled yet (reconciled on ``run_id``)."""

    charge_id: str
    run_id: str
    unknown: List[BudgetDimension]
    amounts: Dict[BudgetDimension, float]
    note: str
    at: str


class BudgetStatus(TypedDict):
    limits: BudgetLimits
    spent: Dict[BudgetDimension, float]
    unknown_charges: int
    inherited_unknown_charges: int
    effective: Dict[BudgetDimension, float]
    remaining: Dict[BudgetDimension, Optional[float]]
    uncertain: List[BudgetDimension]
    elapsed_seconds: float
    seconds_left: Optional[float]
    exhausted: bool
    exhausted_by: List[str]
    effects_allowed: bool
    policy: str
    unknown_charge_ids: List[str]
    inherited_unknown: List[OpenCharge]


class RunCheckpoint(TypedDict):
    epoch: int
    settled: List[str]
    open: List[str]
    note: str
    at: str


class RunSummary(Run):
    budget: BudgetStatus
    open_items: int
    checkpoint: Optional[RunCheckpoint]


class Receipt(TypedDict):
    receipt_id: str
    run_id: str
    idempotency_key: str
    attempt: int
    tool: str
    kind: ReceiptKind
    args_digest: str
    status: ReceiptStatus
    epoch: int
    result_ref: Optional[str]
    error: Optional[str]
    evidence: Optional[str]
    begun_at: str
    settled_at: Optional[str]
    unknown_at: Optional[str]


class RunEvent(TypedDict):
    kind: str
    epoch: int
    detail: JSONObject
    at: str


class RunAllowance(TaskBounds):
    """A standing allowance of the root's settings (``run_allowances``): a grant made in advance."""

    name: str


class RunAllowances(TypedDict):
    """The standing allowances in force; ``error`` says why none is when the settings cannot be read."""

    allowances: List[RunAllowance]
    error: Optional[str]


class _TaskStatusBase(TypedDict):
    task: Optional[Task]
    pending_checkpoint: Optional[PendingInfo]
    runs: List[RunSummary]


class TaskStatusResult(_TaskStatusBase, total=False):
    """``run_allowances`` is there for the host only."""

    run_allowances: RunAllowances


class RunResult(TypedDict):
    run: Run


class RunGetResult(TypedDict):
    run: Run
    question: str
    constraints: List[str]
    desired_outcome: Optional[str]
    bounds: Optional[TaskBounds]
    budget: BudgetStatus
    receipt_counts: Dict[ReceiptStatus, int]
    receipts_by_kind: Dict[ReceiptKind, int]
    unknown_receipts: List[Receipt]
    open_items: List[Union[Receipt, OpenCharge]]
    checkpoint: Optional[RunCheckpoint]
    events: List[RunEvent]


class RunClaimResult(TypedDict):
    run: Run
    newly_unknown: List[Receipt]
    checkpoint: Optional[RunCheckpoint]


class RunContinueResult(TypedDict):
    run: Run
    open_items: List[Union[Receipt, OpenCharge]]


class RunTotal(TypedDict):
    spent: Dict[BudgetDimension, float]
    unknown_charges: int
    runs: int


class RunListResult(TypedDict):
    task_id: Optional[str]
    runs: List[RunSummary]
    total: RunTotal


class RunCheckpointResult(TypedDict):
    checkpoint: RunCheckpoint


class ReceiptBeginResult(TypedDict):
    receipt: Receipt
    replayed: bool


class ReceiptResult(TypedDict):
    receipt: Receipt


class ReceiptListResult(TypedDict):
    receipts: List[Receipt]


class ChargeResult(TypedDict):
    charge_id: str
    budget: BudgetStatus


class BudgetResult(TypedDict):
    budget: BudgetStatus


# -- adjustments, artifacts, context ------------------------------------------------------------


class AdjustmentEvent(TypedDict):
    kind: AdjustmentStage
    run_id: Optional[str]
    request_id: Optional[str]
    artifact: Optional[str]
    version: Optional[int]
    at: str


class AdjustmentHandoff(TypedDict):
    request_id: str
    run_id: str
    at: str


class AdjustmentSatisfaction(TypedDict):
    artifact: str
    version: int
    at: str


class Adjustment(TypedDict):
    adjustment_id: str
    task_id: str
    run_id: Optional[str]
    text: str
    received_at: str
    handed: Optional[AdjustmentHandoff]
    satisfied: Optional[AdjustmentSatisfaction]
    history: List[AdjustmentEvent]


class AdjustmentResult(TypedDict):
    adjustment: Adjustment


class AdjustmentListResult(TypedDict):
    adjustments: List[Adjustment]


class _AttachmentInputBase(TypedDict):
    name: str


class AttachmentInput(_AttachmentInputBase, total=False):
    """One attachment for ``put_artifact``: its ``content``, or the ``error`` that kept it from being made."""

    content: str
    error: str


class ArtifactMarkInfo(TypedDict):
    mark: ArtifactMark
    ok: bool
    detail: str
    at: str


class ArtifactAttachment(TypedDict):
    name: str
    status: Literal["ok", "failed"]
    ref: Optional[str]
    size: Optional[int]
    sha256: Optional[str]
    error: Optional[str]


class ArtifactVersion(TypedDict):
    task_id: str
    name: str
    version: int
    kind: ArtifactKind
    supersedes: List[int]
    superseded_by: Optional[int]
    run_id: Optional[str]
    ref: str
    size: int
    sha256: str
    note: str
    created_at: str
    marks: List[ArtifactMarkInfo]
    attachments: List[ArtifactAttachment]


class ArtifactContent(ArtifactVersion):
    content: str


class ArtifactResult(TypedDict):
    artifact: ArtifactVersion


class ArtifactGetResult(TypedDict, total=False):
    """``artifact`` (with its content); or, for an attachment, ``name``, ``version``, ``attachment`` and ``content``."""

    artifact: ArtifactContent
    name: str
    version: int
    attachment: str
    content: str


class ArtifactListResult(TypedDict):
    artifacts: List[ArtifactVersion]


class ContextPutResult(TypedDict):
    ref: str
    size: int
    sha256: str
    label: str


class Coverage(TypedDict):
    size: int
    bytes_read: int
    ranges: List[List[int]]
    complete: bool


class ContextReadResult(TypedDict):
    ref: str
    offset: int
    length: int
    #: The slice as text when it is whole UTF-8, else None; ``data_base64`` always.
    text: Optional[str]
    data_base64: str
    coverage: Coverage


class ContextShareResult(TypedDict):
    ref: str
    shared_with: List[str]
