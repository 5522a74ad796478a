"""The shapes of tasks, turns and the write lease, memory and ``system.describe``. Part of ``longrun.types``."""
from __future__ import annotations

from typing import Dict, List, Optional, TypedDict

from ._approval_types import Approval
from ._base_types import AccessMode, BudgetLimits, JSONObject, LeaseEventKind, Side, TaskStatus


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


class ForkedFrom(TypedDict):
    """The checkpoint a forked task began at (``task.fork``)."""

    task_id: str
    checkpoint_id: str


class _TaskBase(TypedDict):
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


class Task(_TaskBase, total=False):
    """``forked_from``: present on a task ``task.fork`` made."""

    forked_from: Optional[ForkedFrom]


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
    #: The task's newest 20 approvals, with the host's answers.
    approvals: List[Approval]


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


class _MemorySaveBase(TypedDict):
    id: str
    created: bool


class MemorySaveResult(_MemorySaveBase, total=False):
    """``record``: the saved record (without its body); absent, and ``forgotten`` true, when the call
    replays one whose record the host has since forgotten (``memory.forget``): it stays forgotten."""

    record: MemoryRecordInfo
    forgotten: bool


class MemoryUpdateResult(TypedDict):
    id: str
    created: bool
    supersedes: str
    record: MemoryRecordInfo


class MemoryForgetResult(TypedDict, total=False):
    forgotten: List[str]
    already: List[str]
    skipped: List[str]
    #: with ``query``: the ids search found (at most 1,000), and whether more match
    matched: List[str]
    more: bool


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
