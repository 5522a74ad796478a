"""The shapes of runs, receipts and budgets. Part of ``longrun.types``."""
from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

from ._base_types import BudgetDimension, BudgetLimits, JSONObject, ReceiptKind, ReceiptStatus, RunStatus
from ._approval_types import Approval
from ._deliverable_types import Gap
from ._task_types import PendingInfo, Task, TaskBounds


# -- runs, receipts, budgets --------------------------------------------------------------------


class Authorization(TypedDict):
    tools: List[str]
    sources: List[str]
    send: List[str]
    scope: List[str]


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
    child_of: Optional[str]
    status: RunStatus
    owner: str
    epoch: int
    authorization: Authorization
    budget_limits: BudgetLimits
    parked_on: Optional[str]
    parked_for_user: bool
    wake_at: Optional[str]
    answer: Optional[HostAnswer]
    grant: Optional[GrantRecord]
    outcome: Optional[str]
    gaps: List[str]
    created_at: str
    updated_at: str
    ended_at: Optional[str]
    owner_ttl_seconds: Optional[int]
    owner_beat_at: Optional[str]
    stale_owner: bool
    stale_since: Optional[str]


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
    uncertain_children: int
    reserved: Dict[BudgetDimension, float]
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
    #: Methods tried that did not work.
    failed: List[str]
    next_step: str
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
    #: For a model request: the digests of what was sent (``begin_receipt(sent=...)``).
    sent: Optional["SentDigest"]


class SentDigest(TypedDict, total=False):
    """sha256 hex digests of what a model request sent: the whole request (required), its question, each constraint."""
    digest: str
    question: str
    constraints: List[str]


class ChainConstraint(TypedDict):
    index: int
    text: str


class ChainRequest(TypedDict):
    receipt_id: str
    status: ReceiptStatus
    begun_at: str
    digest: Optional[str]
    question: Literal["carried", "differs", "not_recorded"]
    constraints_missing: Optional[List[ChainConstraint]]
    drifted: bool


class RequestChain(TypedDict):
    """Whether the task's question and constraints went into each model request of the run."""
    question_sha256: Optional[str]
    constraints_sha256: List[str]
    requests: List[ChainRequest]
    drifted: int
    not_recorded: int


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
    #: The task's newest 20 approvals, pending and answered.
    approvals: List[Approval]


class TaskStatusResult(_TaskStatusBase, total=False):
    """``run_allowances`` is there for the host only."""

    run_allowances: RunAllowances


class RunResult(TypedDict):
    run: Run


class RunFinishResult(TypedDict):
    run: Run
    #: The gaps it left, with ids (the task's; the same text as an open gap is that gap).
    gaps: List[Gap]


HeartbeatStop = Optional[Literal["cancelled", "budget_exhausted", "deadline", "superseded"]]


class RootEvent(TypedDict):
    """One entry of the root's event log: ``task.created``, ``task.status``, ``task.checkpoint``,
    ``lease.granted``/``revoked``/``requested``, ``run.<kind>`` (``run.stale_owner``, ``run.woken``, …)."""

    id: int
    kind: str
    task_id: Optional[str]
    run_id: Optional[str]
    epoch: Optional[int]
    detail: JSONObject
    at: str


class EventsReadResult(TypedDict):
    events: List[RootEvent]
    last_id: int


class RunHeartbeatResult(TypedDict):
    """What the owner must know now: ``stop`` is None (go on) or why to stop."""

    run: Run
    stop: HeartbeatStop


class ChildRunSummary(TypedDict):
    run_id: str
    status: RunStatus
    owner: str
    stale_owner: bool
    budget_limits: BudgetLimits
    spent: Dict[BudgetDimension, float]
    uncertain: List[BudgetDimension]
    receipt_counts: Dict[ReceiptStatus, int]


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
    children: List[ChildRunSummary]
    request_chain: RequestChain
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
