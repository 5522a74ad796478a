"""The shapes of approvals (approval.request, approval.answer, approval.get, approval.list). Part of ``longrun.types``."""
from __future__ import annotations

from typing import List, Literal, Optional, TypedDict

from ._base_types import JSONObject

ApprovalStatus = Literal["pending", "approved", "rejected", "edited"]
ApprovalDecision = Literal["approve", "reject", "edit"]


class Approval(TypedDict):
    """The agent's request before one action and the host's answer (``edited``: only ``edited_args``)."""

    approval_id: str
    task_id: str
    run_id: Optional[str]
    action: str
    args_digest: Optional[str]
    reason: str
    status: ApprovalStatus
    requested_by: str
    requested_at: str
    answered_by: Optional[str]
    answered_at: Optional[str]
    note: Optional[str]
    edited_args: Optional[JSONObject]


class ApprovalRequestResult(TypedDict):
    approval: Approval
    created: bool


class ApprovalResult(TypedDict):
    approval: Approval


class ApprovalListResult(TypedDict):
    task_id: Optional[str]
    #: The newest 100 that match, newest first; ``total``: how many match.
    approvals: List[Approval]
    total: int
