"""The shapes of adjustments, artifacts and stored context. Part of ``longrun.types``."""
from __future__ import annotations

from typing import List, Literal, Optional, TypedDict

from ._base_types import AdjustmentStage, ArtifactKind, ArtifactMark


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


GapStatus = Literal["open", "closed"]


class GapOpened(TypedDict):
    at: str
    run_id: Optional[str]
    by: str


class GapArtifact(TypedDict):
    name: str
    version: int


class GapClosed(TypedDict):
    at: str
    run_id: Optional[str]
    by: str
    #: The version that covers it; None when the host closed it (``close_gap``).
    artifact: Optional[GapArtifact]
    note: str


class Gap(TypedDict):
    """What a task's drafts do not yet cover, with an id, open → closed across runs and versions."""
    gap_id: str
    task_id: str
    text: str
    status: GapStatus
    opened: GapOpened
    closed: Optional[GapClosed]


class VersionGaps(TypedDict):
    #: The task's gaps open when the version was saved.
    open: List[Gap]
    #: Those the version closed.
    closed_here: List[Gap]


class GapListResult(TypedDict):
    gaps: List[Gap]


class GapResult(TypedDict):
    gap: Gap


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
    gaps: VersionGaps


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
