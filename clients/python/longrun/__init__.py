"""longrun's Python host: a runtime contract for long-running AI agents, driven from Python.

    from longrun import LongrunClient, WriteGateViolation

    with LongrunClient("/abs/project/root") as lr:        # starts `longrun serve` (the bundled executable)
        lr.start_task("Adapt the supplier interface")     # memory is searched first; read-only, turn 1
        lr.enable_writes("plan approved")                 # the host grants a lease for this turn only
        lr.require_writable("edit adapters/xometry.py")   # ok (WriteGateViolation without a lease)
        lr.progress("adapter 1 done", "adapter 2", data={"step": 1})   # saved; still running, still writable

``AsyncLongrunClient`` is the same over asyncio; ``LongrunHttpClient`` / ``AsyncLongrunHttpClient``
speak to ``longrun http``. Results are the server's dicts (typed in ``longrun.types``); errors are
``LongrunError`` subclasses named after their kind. Standard library only, Python 3.9+.
"""
from ._binary import bundled_binary, find_binary
from ._compat import PROTOCOL_MAJOR, check_describe
from ._methods import UNSET, AsyncContractMethods, ContractMethods
from ._version import __version__
from .aio import AsyncEffect, AsyncLongrunClient, AsyncLongrunHttpClient
from .client import Effect, LongrunClient, LongrunHttpClient, RestartPolicy
from .errors import (
    BudgetExhausted,
    CheckpointWriteError,
    ClientClosed,
    ConflictError,
    ContentMissing,
    IdempotencyConflict,
    IncompatibleServer,
    InternalError,
    InvalidParams,
    InvalidRequest,
    LimitExceeded,
    LongrunError,
    MemoryCorrupt,
    MethodNotFound,
    NoActiveTask,
    NotFound,
    ParseError,
    ProtocolError,
    RequestTimeout,
    ServerExited,
    ServerUnreachable,
    StaleEpoch,
    StateCorruptError,
    StorageError,
    TransitionError,
    Unauthorized,
    WriteGateViolation,
    error_from_wire,
)

__all__ = [
    "__version__", "PROTOCOL_MAJOR", "UNSET",
    "LongrunClient", "LongrunHttpClient", "AsyncLongrunClient", "AsyncLongrunHttpClient",
    "ContractMethods", "AsyncContractMethods", "Effect", "AsyncEffect", "RestartPolicy",
    "bundled_binary", "find_binary", "check_describe", "error_from_wire",
    "LongrunError", "WriteGateViolation", "TransitionError", "CheckpointWriteError", "StateCorruptError",
    "NoActiveTask", "StaleEpoch", "BudgetExhausted", "Unauthorized", "LimitExceeded", "ConflictError",
    "NotFound", "StorageError", "MemoryCorrupt", "ContentMissing", "IdempotencyConflict", "InvalidParams", "ProtocolError", "ParseError",
    "InvalidRequest", "MethodNotFound", "InternalError", "ServerExited", "ClientClosed", "RequestTimeout",
    "ServerUnreachable", "IncompatibleServer",
]
