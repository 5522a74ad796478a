"""The words the other shapes are built from: the ``Literal`` value sets and the budget amounts (a task's
bounds and a run's limits both count in them). Part of ``longrun.types``."""
from __future__ import annotations

from typing import Any, Dict, Literal, TypedDict


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

# -- budget amounts (a task's bounds and a run's limits) --------------------------------------


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
