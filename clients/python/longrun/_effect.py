"""``effect``: one tool effect under a receipt, as a context manager (the threaded clients; the
asyncio ones build on it in aio.py)."""
from __future__ import annotations

from types import TracebackType
from typing import Any, Callable, Dict, Mapping, Optional, Type, cast

from ._methods import ContractMethods
from ._wire import log
from .errors import ClientClosed, LongrunError, RequestTimeout, ServerExited
from .types import Receipt, ReceiptKind

#: An error text sent with a failed receipt is cut to this many characters (the protocol's long-text limit).
ERROR_TEXT_CHARS = 65_536


class Effect:
    """One tool effect under a receipt: ``with lr.effect(run_id, epoch, tool, key, args) as r:``.

    On entry the receipt is begun (committed before the effect runs). If the key already completed,
    ``r.replayed`` is True and ``r.result_ref`` is the recorded result: skip the effect. Otherwise run
    it and set ``r.result_ref``; on leaving the block the receipt is settled ``completed``. An
    exception in the block settles it ``failed`` (the error's text recorded) and goes on up;
    ``r.fail(reason)`` does the same without an exception. Left begun, never settled: when the
    process dies in the block, when the block is interrupted (KeyboardInterrupt, a cancelled asyncio
    task, SystemExit), when the server dies or times out, or when the block ends with neither
    ``result_ref`` nor ``fail`` (then ValueError): such a receipt becomes ``unknown`` on the run's
    next claim, and is never run again by longrun until a caller settles it with evidence.
    """

    def __init__(self, begin: Callable[[], Dict[str, Any]], settle: Callable[..., Any], what: str) -> None:
        self._begin = begin
        self._settle = settle
        self._what = what
        self.receipt: Optional[Receipt] = None
        self.replayed = False
        self.result_ref: Optional[str] = None
        self.settled: Optional[Receipt] = None
        self._fail_reason: Optional[str] = None

    @property
    def receipt_id(self) -> str:
        assert self.receipt is not None, "the effect has not begun"
        return self.receipt["receipt_id"]

    def fail(self, reason: str) -> None:
        """Settle the receipt ``failed`` with ``reason`` when the block ends (without raising)."""
        self._fail_reason = reason

    def _entered(self, begun: Mapping[str, Any]) -> None:
        self.receipt = cast(Receipt, begun["receipt"])
        self.replayed = bool(begun.get("replayed"))
        if self.replayed:
            self.result_ref = self.receipt.get("result_ref")

    def _outcome(self, exc: Optional[BaseException]) -> Optional[Dict[str, Any]]:
        """The settle params for how the block ended, or None to leave the receipt begun."""
        if self.replayed:
            return None
        if exc is not None:
            if not isinstance(exc, Exception) or isinstance(exc, (ServerExited, ClientClosed, RequestTimeout)):
                log.warning("%s: left begun (%s); it becomes unknown when the run is next claimed", self._what, type(exc).__name__)
                return None
            return {"outcome": "failed", "error": ("%s: %s" % (type(exc).__name__, exc))[:ERROR_TEXT_CHARS]}
        if self._fail_reason is not None:
            return {"outcome": "failed", "error": self._fail_reason[:ERROR_TEXT_CHARS]}
        if self.result_ref is None:
            raise ValueError(
                "%s: the block ended without r.result_ref (completed) or r.fail(reason); the receipt stays begun "
                "and becomes unknown when the run is next claimed" % self._what
            )
        return {"outcome": "completed", "result_ref": self.result_ref}

    def __enter__(self) -> "Effect":
        self._entered(self._begin())
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        outcome = self._outcome(exc)
        if outcome is None:
            return
        try:
            self.settled = cast(Receipt, self._settle(receipt_id=self.receipt_id, **outcome)["receipt"])
        except LongrunError as e:
            if exc is None:
                raise
            log.warning("%s: could not be settled failed (%s); it stays begun", self._what, e)


class _EffectMixin:
    """``effect``: a receipt as a context manager, over the client's begin_receipt / settle_receipt."""

    def effect(self, run_id: str, epoch: int, tool: str, key: str, args: Any = None, *, args_digest: Optional[str] = None, kind: Optional[ReceiptKind] = None) -> Effect:
        """Begin → (run the effect, set ``r.result_ref``) → settle; see ``Effect``. ``args`` None is sent as null."""
        me = cast(ContractMethods, self)

        def begin() -> Dict[str, Any]:
            if args_digest is not None:
                return cast(Dict[str, Any], me.begin_receipt(run_id, epoch, tool, key, args_digest=args_digest, kind=kind))
            return cast(Dict[str, Any], me.begin_receipt(run_id, epoch, tool, key, args=args, kind=kind))

        def settle(**kw: Any) -> Any:
            return me.settle_receipt(run_id, epoch, **kw)

        return Effect(begin, settle, "receipt %s/%s" % (tool, key))
