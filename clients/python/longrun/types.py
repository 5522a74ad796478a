"""The shapes of longrun's params and results, as ``TypedDict``s and ``Literal``s.

They describe what the server sends (snake_case, exactly as on the wire); the clients return the
server's dicts unchanged, so these are for type checkers and readers, not checked at run time.

The shapes live by concept in _base_types.py (literals, budget amounts), _task_types.py,
_run_types.py and _deliverable_types.py; import them from here.
"""
from ._base_types import (  # noqa: F401
    AccessMode, AdjustmentStage, ArtifactKind, ArtifactMark, BudgetAmounts, BudgetDimension,
    BudgetLimits, CheckpointLang, ErrorKind, JSONObject, LeaseEventKind, ReceiptKind,
    ReceiptOutcome, ReceiptStatus, RunEndStatus, RunStatus, Side, TaskStatus,
)
from ._task_types import (  # noqa: F401
    CheckpointRef, CheckpointResult, DescribeResult, ForkedFrom, ErrorCodeInfo, FinishResult, GateResult,
    GrantResult, Lease, LeaseEvent, MemoryGetResult, MemoryHit, MemoryItem, MemoryRecord,
    MemoryForgetResult, MemoryRecordInfo, MemorySaveManyResult, MemorySaveResult, MemorySearchResult, MemoryUpdateResult, MethodInfo,
    PendingInfo, RecoverResult, ReplayInfo, RequestResult, ResumeResult, StatusChange, Task,
    TaskBounds, TaskListResult, TaskResult, TaskStartResult, TaskSummary, TaskTerms,
   
)
from ._history_types import (  # noqa: F401
    CheckpointEntry, CheckpointFull, CheckpointGetResult, CheckpointListResult, DeleteResult, ForkResult,
)
from ._approval_types import (  # noqa: F401
    Approval, ApprovalDecision, ApprovalListResult, ApprovalRequestResult, ApprovalResult, ApprovalStatus,
)
from ._run_types import (  # noqa: F401
    Authorization, BudgetResult, BudgetStatus, ChargeResult, EventsReadResult, GrantRecord, GrantRequest, HeartbeatStop, HostAnswer,
    HostAnswerIn, OpenCharge, Receipt, ReceiptBeginResult, ReceiptListResult, ReceiptResult, Run,
    RunAllowance, RunAllowances, RunCheckpoint, RunCheckpointResult, RunClaimResult,
    ChildRunSummary, RootEvent, RunContinueResult, RunEvent, RunGetResult, RunHeartbeatResult, RunFinishResult, RunListResult, RunResult, RunSummary, RunTotal,
    SentDigest, ChainConstraint, ChainRequest, RequestChain,
    TaskStatusResult,
)
from ._deliverable_types import (  # noqa: F401
    Adjustment, AdjustmentEvent, AdjustmentHandoff, AdjustmentListResult, AdjustmentResult,
    AdjustmentSatisfaction, ArtifactAttachment, ArtifactContent, ArtifactGetResult,
    ArtifactListResult, ArtifactMarkInfo, ArtifactResult, ArtifactVersion, AttachmentInput,
    ContextPutResult, ContextReadResult, ContextShareResult, Coverage,
    Gap, GapArtifact, GapClosed, GapListResult, GapOpened, GapResult, GapStatus, VersionGaps,
)

__all__ = [
    "JSONObject", "TaskStatus", "AccessMode", "Side", "CheckpointLang", "LeaseEventKind",
    "RunStatus", "RunEndStatus", "ReceiptStatus", "ReceiptOutcome", "ReceiptKind",
    "BudgetDimension", "ArtifactKind", "ArtifactMark", "AdjustmentStage", "ErrorKind",
    "BudgetAmounts", "BudgetLimits", "Lease", "LeaseEvent", "StatusChange",
    "CheckpointRef", "Task", "TaskSummary", "PendingInfo",
    "ReplayInfo", "MemoryHit", "MemoryRecordInfo", "MemoryRecord", "MemoryItem",
    "TaskResult", "TaskBounds", "TaskTerms", "TaskStartResult", "TaskListResult",
    "CheckpointResult", "ResumeResult", "RecoverResult", "FinishResult", "GrantResult",
    "RequestResult", "GateResult", "MemorySaveResult", "MemorySaveManyResult", "MemorySearchResult", "MemoryUpdateResult", "MemoryForgetResult",
    "MemoryGetResult", "MethodInfo", "ErrorCodeInfo", "DescribeResult", "Authorization",
    "GrantRequest", "GrantRecord", "HostAnswerIn", "HostAnswer", "Run", "OpenCharge",
    "BudgetStatus", "RunCheckpoint", "RunSummary", "Receipt", "RunEvent", "RunAllowance",
    "RunAllowances", "TaskStatusResult", "RunResult", "ChildRunSummary", "RunGetResult", "HeartbeatStop", "RunHeartbeatResult",
    "RunClaimResult", "RunContinueResult", "RunTotal", "RunListResult", "RunCheckpointResult",
    "ReceiptBeginResult", "ReceiptResult", "ReceiptListResult", "ChargeResult", "BudgetResult",
    "AdjustmentEvent", "AdjustmentHandoff", "AdjustmentSatisfaction", "Adjustment",
    "AdjustmentResult", "AdjustmentListResult", "AttachmentInput",
    "ArtifactMarkInfo", "ArtifactAttachment", "ArtifactVersion", "ArtifactContent",
    "ArtifactResult", "ArtifactGetResult", "ArtifactListResult", "ContextPutResult", "Coverage",
    "ContextReadResult", "ContextShareResult",
    "Gap", "GapArtifact", "GapClosed", "GapListResult", "GapOpened", "GapResult", "GapStatus", "VersionGaps", "RunFinishResult", "SentDigest", "ChainConstraint", "ChainRequest", "RequestChain",
    "EventsReadResult", "RootEvent", "Approval", "ApprovalDecision", "ApprovalListResult", "ApprovalRequestResult",
    "ApprovalResult", "ApprovalStatus",
    "CheckpointEntry", "CheckpointFull", "CheckpointListResult", "CheckpointGetResult", "ForkedFrom", "ForkResult", "DeleteResult",
]
