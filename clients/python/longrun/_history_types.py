"""The shapes of a task's checkpoint history (task.checkpoints, checkpoint.get, task.fork) and of deleting a task (task.delete). Part of ``longrun.types``."""
from __future__ import annotations

from typing import List, Literal, Optional, TypedDict

from ._base_types import JSONObject, TaskStatus
from ._task_types import Task


class CheckpointEntry(TypedDict):
    checkpoint_id: str
    task_id: str
    kind: Literal["pause", "progress"]
    label: str
    summary: str
    summary_truncated: bool
    next_step: str
    phase: str
    status: TaskStatus
    turn_index: int
    saved_at: str
    memory_id: str


class CheckpointFull(CheckpointEntry):
    description: str
    text: str
    data: JSONObject


class CheckpointListResult(TypedDict):
    task_id: str
    checkpoints: List[CheckpointEntry]
    next_cursor: Optional[str]


class CheckpointGetResult(TypedDict):
    checkpoint: CheckpointFull


class ForkResult(TypedDict):
    task: Task
    previous_task: Optional[str]
    data: JSONObject


class DeleteResult(TypedDict):
    """``task.delete``: what went with the task."""
    task_id: str
    deleted: bool
    #: It was deleted before this call; nothing more was done.
    already: bool
    runs: List[str]
    #: Memory records forgotten with it: its checkpoints and outcome (every one with ``memories``).
    memories_forgotten: List[str]
    #: Memories saved under it that stay as project memory.
    memories_kept: int
    artifacts: int
