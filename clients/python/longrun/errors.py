"""Exceptions: one class per error kind of the protocol, and the client's own (a dead server, a timeout).

Every error longrun answers with has ``data.kind``; ``error_from_wire`` picks the class by it (then
by code). All are ``LongrunError``; ``code``, ``kind``, ``data`` and ``message`` are always set.
"""
from __future__ import annotations

from typing import Any, ClassVar, Dict, List, Mapping, Optional, Tuple, Type


class LongrunError(Exception):
    """A JSON-RPC error from longrun: ``code``, ``kind`` (data.kind), ``data`` and ``message``."""

    #: (data.kind, code) of the errors this class stands for, when it stands for one.
    wire: ClassVar[Optional[Tuple[str, int]]] = None

    def __init__(self, message: str, code: Optional[int] = None, data: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.data: Dict[str, Any] = dict(data or {})
        self.kind: Optional[str] = self.data.get("kind")

    def copy(self) -> "LongrunError":
        """A fresh exception of the same class and fields (one per raise, so tracebacks never pile up)."""
        return type(self)(self.message, self.code, self.data)


class WriteGateViolation(LongrunError):
    """-32001: no lease, a stale lease, or an action out of scope. ``reason``, ``turn``, ``lease_turn``."""

    wire = ("write_gate_violation", -32001)

    @property
    def reason(self) -> Optional[str]:
        return self.data.get("reason")

    @property
    def turn(self) -> Optional[int]:
        return self.data.get("turn")

    @property
    def lease_turn(self) -> Optional[int]:
        return self.data.get("lease_turn")


class TransitionError(LongrunError):
    """-32002: a status change outside the whitelist. ``from_``, ``to``, ``allowed``."""

    wire = ("transition_error", -32002)

    @property
    def from_(self) -> Optional[str]:
        return self.data.get("from")

    @property
    def to(self) -> Optional[str]:
        return self.data.get("to")

    @property
    def allowed(self) -> Optional[List[str]]:
        return self.data.get("allowed")


class CheckpointWriteError(LongrunError):
    """-32003: the memory save failed; no checkpoint text exists; it waits in ``pending_path``."""

    wire = ("checkpoint_write_error", -32003)

    @property
    def pending_path(self) -> Optional[str]:
        return self.data.get("pending_path")


class StateCorruptError(LongrunError):
    """-32004: the task state is unreadable (never treated as "no task"); ``path`` names where it is."""

    wire = ("state_corrupt", -32004)

    @property
    def path(self) -> Optional[str]:
        return self.data.get("path")


class NoActiveTask(LongrunError):
    """-32005: a task method was called with no task in the root."""

    wire = ("no_active_task", -32005)


class StaleEpoch(LongrunError):
    """-32006: a run write carried an old fencing epoch (``data["current_epoch"]``)."""

    wire = ("stale_epoch", -32006)


class BudgetExhausted(LongrunError):
    """-32007: a new effect past a budget limit (``data["exhausted_by"]``)."""

    wire = ("budget_exhausted", -32007)


class Unauthorized(LongrunError):
    """-32008: this caller's side may not call the method."""

    wire = ("unauthorized", -32008)


class LimitExceeded(LongrunError):
    """-32009: a payload over a documented limit. ``field``, ``limit``, ``actual``, ``unit``."""

    wire = ("limit_exceeded", -32009)

    @property
    def field(self) -> Optional[str]:
        return self.data.get("field")

    @property
    def limit(self) -> Optional[int]:
        return self.data.get("limit")

    @property
    def actual(self) -> Optional[int]:
        return self.data.get("actual")

    @property
    def unit(self) -> Optional[str]:
        return self.data.get("unit")


class ConflictError(LongrunError):
    """-32010: state changed underneath, or a task is already active (``data["reason"]``)."""

    wire = ("conflict", -32010)


class NotFound(LongrunError):
    """-32011: an unknown id or ref."""

    wire = ("not_found", -32011)


class StorageError(LongrunError):
    """-32012: the disk is full, the root read-only, an I/O error, or memory.db gone or replaced.

    ``reason`` is ``disk_full``, ``read_only``, ``io`` or ``missing``; ``path`` names the file.
    Nothing was claimed saved; retry once the fault is fixed (no restart needed).
    """

    wire = ("storage_error", -32012)

    @property
    def reason(self) -> Optional[str]:
        return self.data.get("reason")

    @property
    def path(self) -> Optional[str]:
        return self.data.get("path")


class MemoryCorrupt(LongrunError):
    """-32013: memory.db is not a readable database; the message says how to restore or go on."""

    wire = ("memory_corrupt", -32013)

    @property
    def path(self) -> Optional[str]:
        return self.data.get("path")


class ContentMissing(LongrunError):
    """-32014: the stored body of one artifact version, attachment or context is gone or damaged; the
    rest is intact. Restore the file named in ``path``, or put the content again."""

    wire = ("content_missing", -32014)

    @property
    def item(self) -> Optional[str]:
        return self.data.get("item")

    @property
    def path(self) -> Optional[str]:
        return self.data.get("path")

    @property
    def reason(self) -> Optional[str]:
        return self.data.get("reason")


class IdempotencyConflict(LongrunError):
    """-32015: the ``idempotency_key`` was already used for another method or other params; nothing was done."""

    wire = ("idempotency_conflict", -32015)

    @property
    def key(self) -> Optional[str]:
        return self.data.get("key")

    @property
    def first_method(self) -> Optional[str]:
        return self.data.get("first_method")


class InvalidParams(LongrunError):
    """-32602: params failed validation; ``data["issues"]`` lists what was wrong."""

    wire = ("invalid_params", -32602)


class ProtocolError(LongrunError):
    """The conversation with the server failed: a JSON-RPC level error, or the client's own (below)."""


class ParseError(ProtocolError):
    """-32700: the server could not parse a message."""

    wire = ("parse_error", -32700)


class InvalidRequest(ProtocolError):
    """-32600: not a JSON-RPC request."""

    wire = ("invalid_request", -32600)


class MethodNotFound(ProtocolError):
    """-32601: the server has no such method (an older server? see ``IncompatibleServer``)."""

    wire = ("method_not_found", -32601)


class InternalError(ProtocolError):
    """-32603: an unexpected failure in the server; check ``task.status`` before retrying."""

    wire = ("internal", -32603)


class ServerExited(ProtocolError):
    """The ``longrun serve`` child is gone (it exited, crashed or was killed). ``returncode``, ``stderr``.

    A request that was in flight when it died may or may not have been applied (a state change
    commits whole or not at all): look before retrying a write (``status``, ``list_receipts``). The
    client starts a new child on the next call only if its restart policy allows (``restarts=``).
    """

    @property
    def returncode(self) -> Optional[int]:
        return self.data.get("returncode")

    @property
    def stderr(self) -> str:
        return str(self.data.get("stderr") or "")


class ClientClosed(ProtocolError):
    """The client was closed; make a new one."""


class RequestTimeout(ProtocolError):
    """No answer within the client's ``timeout``.

    The protocol has no way to cancel a request, so the server goes on with it: a read is simply
    lost, a state change still commits (whole) or fails on its own. Its late answer is dropped.
    Look before retrying a write (``status``, ``list_receipts``).
    """

    @property
    def method(self) -> Optional[str]:
        return self.data.get("method")


class ServerUnreachable(ProtocolError):
    """The HTTP server could not be reached (refused, no route, a broken connection)."""


class IncompatibleServer(LongrunError):
    """``system.describe`` says the server cannot serve this client: another protocol major version,
    or methods or params this client sends that the server does not know. ``data`` says which."""


_WIRED: List[Type[LongrunError]] = [
    WriteGateViolation, TransitionError, CheckpointWriteError, StateCorruptError, NoActiveTask, StaleEpoch,
    BudgetExhausted, Unauthorized, LimitExceeded, ConflictError, NotFound, StorageError, MemoryCorrupt,
    ContentMissing, IdempotencyConflict, InvalidParams, ParseError, InvalidRequest, MethodNotFound, InternalError,
]
_BY_KIND: Dict[str, Type[LongrunError]] = {c.wire[0]: c for c in _WIRED if c.wire}
_BY_CODE: Dict[int, Type[LongrunError]] = {c.wire[1]: c for c in _WIRED if c.wire}


def error_from_wire(err: Mapping[str, Any]) -> LongrunError:
    """The exception for a JSON-RPC error object: by ``data.kind``, else by ``code``, else ProtocolError."""
    raw = err.get("data")
    data: Dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
    code = err.get("code")
    code_int = code if isinstance(code, int) else None
    cls = _BY_KIND.get(str(data.get("kind"))) or (_BY_CODE.get(code_int) if code_int is not None else None) or ProtocolError
    return cls(str(err.get("message", "unknown error")), code_int, data)
