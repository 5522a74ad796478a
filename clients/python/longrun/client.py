"""The threaded clients: ``LongrunClient`` (a ``longrun serve`` child over pipes) and
``LongrunHttpClient`` (``longrun http``), with every method of the protocol (``ContractMethods``)
and ``effect``, a context manager for a receipt."""
from __future__ import annotations

import collections
import itertools
import json
import logging
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from types import TracebackType
from typing import IO, Any, Callable, Deque, Dict, List, Mapping, Optional, Type, Union, cast

from . import _http_env
from ._binary import find_binary, serve_target
from ._compat import check_describe
from ._methods import UNSET, ContractMethods
from .errors import (
    ClientClosed,
    LongrunError,
    ProtocolError,
    RequestTimeout,
    ServerExited,
    ServerUnreachable,
    error_from_wire,
)
from .types import CheckpointLang, DescribeResult, Receipt, ReceiptKind

log = logging.getLogger("longrun")
#: The child's stderr (its logs), one record per line, with ``longrun_root`` and ``longrun_pid``.
server_log = logging.getLogger("longrun.server")

#: How many of the child's last stderr lines an error message quotes (all of them go to logging).
STDERR_TAIL_LINES = 20
#: An error text sent with a failed receipt is cut to this many characters (the protocol's long-text limit).
ERROR_TEXT_CHARS = 65_536


def _json_default(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError("%s is not JSON" % type(value).__name__)


def encode_request(rid: Union[int, str], method: str, params: Mapping[str, Any]) -> bytes:
    """One JSON-RPC request line, UTF-8, newline-terminated."""
    return (json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params},
                       ensure_ascii=False, separators=(",", ":"), default=_json_default) + "\n").encode("utf-8")


def result_of(answer: Mapping[str, Any]) -> Any:
    """The result of a JSON-RPC answer, or its error raised as the matching exception."""
    if "error" in answer:
        err = answer["error"]
        raise error_from_wire(err if isinstance(err, dict) else {"message": str(err)})
    return answer.get("result")


def with_defaults(method: str, params: Dict[str, Any], lang: Optional[str]) -> Dict[str, Any]:
    """The client's default ``lang`` on a checkpoint that names none."""
    if lang is not None and method == "task.checkpoint" and "lang" not in params:
        return {**params, "lang": lang}
    return params


class RestartPolicy:
    """At most ``restarts`` new children within any ``window`` seconds (0: never restart by itself)."""

    def __init__(self, restarts: int, window: float) -> None:
        self.restarts = restarts
        self.window = window
        self._at: Deque[float] = collections.deque()

    def allow(self) -> bool:
        now = time.monotonic()
        while self._at and now - self._at[0] > self.window:
            self._at.popleft()
        if len(self._at) >= self.restarts:
            return False
        self._at.append(now)
        return True


class _Slot:
    __slots__ = ("event", "answer")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.answer: Union[None, Dict[str, Any], LongrunError] = None


class _Child:
    """One ``longrun serve`` process, its reader threads and its requests in flight."""

    def __init__(self, binary: str, root: str, args: List[str], stderr_level: int) -> None:
        self.root = root
        self.stderr_level = stderr_level
        self.lock = threading.Lock()  # guards pending, dead and writes to stdin
        self.pending: Dict[int, _Slot] = {}
        self.ids = itertools.count(1)
        self.dead: Optional[LongrunError] = None
        self.tail: Deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self.dropped = 0  # answers that came after their caller stopped waiting (timeout)
        self.process = subprocess.Popen(
            [binary, "serve", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.err_thread = threading.Thread(target=self._drain_stderr, name="longrun-stderr", daemon=True)
        self.out_thread = threading.Thread(target=self._read_stdout, name="longrun-reader", daemon=True)
        self.err_thread.start()
        self.out_thread.start()

    @property
    def stdin(self) -> IO[bytes]:
        assert self.process.stdin is not None
        return self.process.stdin

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in iter(self.process.stderr.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.tail.append(line)
            server_log.log(self.stderr_level, "%s", line, extra={"longrun_root": self.root, "longrun_pid": self.process.pid})

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for raw in iter(self.process.stdout.readline, b""):
            try:
                msg = json.loads(raw)
            except ValueError:
                continue  # stdout carries protocol only; ignore anything else
            for one in msg if isinstance(msg, list) else [msg]:
                if isinstance(one, dict):
                    self._deliver(one)
        # End of output: the child exited (or is about to). Fail everything still waiting.
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        self.err_thread.join(timeout=1)
        self.fail_all(self.death("longrun exited"))

    def _deliver(self, msg: Dict[str, Any]) -> None:
        with self.lock:
            slot = self.pending.get(msg["id"]) if isinstance(msg.get("id"), int) else None
            if slot is None and msg.get("id") is None and len(self.pending) == 1:
                slot = next(iter(self.pending.values()))  # an id-less error (a bad line) answers the only caller
            if slot is None:
                self.dropped += 1
                log.debug("dropped an answer nobody waits for any more (id %r): its request timed out", msg.get("id"))
                return
            slot.answer = msg
            slot.event.set()

    def stderr_tail(self) -> str:
        return "\n".join(self.tail).strip()

    def death(self, what: str) -> ServerExited:
        rc = self.process.poll()
        tail = self.stderr_tail()
        msg = "%s (exit code %s)" % (what, rc) + ("; stderr:\n" + tail if tail else "")
        return ServerExited(msg, None, {"kind": "child_exited", "returncode": rc, "stderr": tail})

    def fail_all(self, exc: LongrunError) -> None:
        with self.lock:
            if self.dead is None:
                self.dead = exc
            for slot in self.pending.values():
                if slot.answer is None:
                    slot.answer = self.dead
                slot.event.set()

    def request(self, method: str, params: Mapping[str, Any], timeout: Optional[float]) -> Any:
        slot = _Slot()
        with self.lock:
            if self.dead is not None:
                raise self.dead.copy()
            rid = next(self.ids)
            line = encode_request(rid, method, params)
            self.pending[rid] = slot
            try:
                self.stdin.write(line)
                self.stdin.flush()
                sent = True
            except (OSError, ValueError):  # broken pipe, or stdin already closed
                del self.pending[rid]
                sent = False
        if not sent:  # the child is gone; let the reader collect its exit code and stderr first
            self.out_thread.join(timeout=3)
            raise (self.dead or self.death("longrun is not running")).copy()
        try:
            if not slot.event.wait(timeout):
                raise RequestTimeout(
                    "no answer to %s within %s s; the server goes on with it (the protocol cannot cancel a request): "
                    "a change it makes still commits; look (status, list_receipts) before retrying" % (method, timeout),
                    None, {"kind": "timeout", "method": method, "id": rid},
                )
        finally:
            with self.lock:
                self.pending.pop(rid, None)
        answer = slot.answer
        if isinstance(answer, LongrunError):
            raise answer.copy()
        assert answer is not None
        return result_of(answer)

    def close(self, timeout: float) -> Optional[int]:
        with self.lock:
            if self.dead is None:
                self.dead = ClientClosed("the client is closed", None, {"kind": "closed"})
            try:
                self.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.out_thread.join(timeout=3)
        self.err_thread.join(timeout=3)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return self.process.returncode


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


class LongrunClient(_EffectMixin, ContractMethods):
    """One ``longrun serve --root ROOT`` child over pipes. Thread-safe: calls from several threads are
    matched by id.

    ``binary``: the executable (default: the one this package carries, ``$LONGRUN_BIN``, PATH).
    ``timeout``: seconds to wait for each answer (None: no limit; see ``RequestTimeout``).
    ``check``: call ``system.describe`` at start and raise ``IncompatibleServer`` on a mismatch.
    ``restarts``/``restart_window``: when the child dies, its in-flight calls raise ``ServerExited``
    and are never re-sent; the next call starts a new child if fewer than ``restarts`` were started
    by the policy in the last ``restart_window`` seconds (default 0: it raises ``ServerExited``
    until you call ``restart()``). A new child serves the same root and the same task: a restart is
    not a new turn, so a lease of the current turn still stands.
    ``lang``: default language of checkpoint text (``en``, ``zh``, ``ko``; else the root's setting).
    The child's stderr goes to the ``longrun.server`` logger at ``stderr_level``.
    """

    def __init__(self, root: Optional[str] = None, binary: Optional[str] = None, timeout: Optional[float] = 30.0, *,
                 check: bool = True, restarts: int = 0, restart_window: float = 60.0,
                 lang: Optional[CheckpointLang] = None, stderr_level: int = logging.WARNING,
                 store: Optional[str] = None, project: Optional[str] = None) -> None:
        self.root, self._serve_args = serve_target(root, store, project)
        self.binary = find_binary(binary)
        self.timeout = timeout
        self.check = check
        self.lang = lang
        self.stderr_level = stderr_level
        self.restart_policy = RestartPolicy(restarts, restart_window)
        self.restart_count = 0
        self.described: Optional[DescribeResult] = None
        self._lock = threading.Lock()  # guards _child and _closed
        self._closed = False
        self._child = self._spawn()

    def _spawn(self) -> _Child:
        child = _Child(self.binary, self.root, self._serve_args, self.stderr_level)
        if self.check:
            try:
                described = cast(DescribeResult, child.request("system.describe", {}, self.timeout))
                check_describe(described, "%s (root %s)" % (self.binary, self.root))
            except LongrunError:
                child.close(timeout=5)
                raise
            self.described = described
        return child

    # -- plumbing -----------------------------------------------------------------------------

    @property
    def process(self) -> "subprocess.Popen[bytes]":
        """The current child process."""
        return self._child.process

    def stderr_tail(self) -> str:
        """The current child's last stderr lines (its logs; all of them also went to ``longrun.server``)."""
        return self._child.stderr_tail()

    def _running(self) -> _Child:
        with self._lock:
            if self._closed:
                raise ClientClosed("the client is closed", None, {"kind": "closed"})
            child = self._child
            if child.dead is None and child.process.poll() is None:
                return child
            if child.dead is None:  # exited, and the reader has not noticed yet
                child.out_thread.join(timeout=3)
            if not self.restart_policy.allow():
                raise (child.dead or child.death("longrun exited")).copy()
            log.warning("longrun serve for %s exited (code %s); starting a new one (restart policy)", self.root, child.process.returncode)
            child.close(timeout=1)
            self._child = self._spawn()
            self.restart_count += 1
            return self._child

    def restart(self) -> None:
        """Stops the current child (if it runs) and starts a new one on the same root."""
        with self._lock:
            if self._closed:
                raise ClientClosed("the client is closed", None, {"kind": "closed"})
            self._child.close(timeout=10)
            self._child = self._spawn()
            self.restart_count += 1

    def _request(self, method: str, params: Dict[str, Any]) -> Any:
        return self._running().request(method, with_defaults(method, params, self.lang), self.timeout)

    def call(self, method: str, **params: Any) -> Any:
        """Calls any ``method`` with ``params`` (None values dropped) and returns its result."""
        return self._request(method, {k: v for k, v in params.items() if v is not None})

    def close(self, timeout: float = 10.0) -> Optional[int]:
        """Closes stdin (the server finishes in-flight requests and exits), waits, then terminates. Idempotent."""
        with self._lock:
            self._closed = True
            child = self._child
        return child.close(timeout)

    def __enter__(self) -> "LongrunClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LongrunHttpClient(_http_env.HttpFactories, _EffectMixin, ContractMethods):
    """The same methods over ``longrun http``: ``POST {url}/rpc`` with a bearer token.

    The token decides the side: the host token may grant leases, the agent token may not (calls
    from the wrong side raise ``Unauthorized``). ``root`` (optional) is sent with every call; it
    must be inside the server's allowed roots. Tokens live in ``<root>/.longrun/http.json``.
    With ``check``, the first call first checks ``system.describe``. Thread-safe (one HTTP request
    per call); a timed-out request goes on in the server, as over stdio.
    """

    def __init__(self, url: str, token: str, root: Optional[str] = None, timeout: Optional[float] = 30.0, *,
                 check: bool = True, lang: Optional[CheckpointLang] = None) -> None:
        self.url = url.rstrip("/") + "/rpc"
        self.token = token
        self.root = root
        self.timeout = timeout
        self.check = check
        self.lang = lang
        self.described: Optional[DescribeResult] = None
        self._ids = itertools.count(1)
        self._checked = threading.Lock()

    def _post(self, method: str, params: Dict[str, Any]) -> Any:
        if self.root is not None and "root" not in params:
            params = {**params, "root": self.root}
        body = encode_request(next(self._ids), method, params)
        req = urllib.request.Request(self.url, data=body, method="POST", headers={
            "content-type": "application/json", "authorization": "Bearer " + self.token})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:  # 401 carries a JSON-RPC error, 413/403 a problem+json
            raw = e.read()
            try:
                doc = json.loads(raw)
            except ValueError:
                raise ProtocolError("HTTP %s from %s" % (e.code, self.url), e.code, {"kind": "http", "status": e.code}) from None
            if isinstance(doc, dict) and "error" in doc:
                return result_of(doc)
            detail = doc.get("detail", "HTTP %s" % e.code) if isinstance(doc, dict) else "HTTP %s" % e.code
            raise error_from_wire({"code": None, "message": detail, "data": doc if isinstance(doc, dict) else {}}) from None
        except urllib.error.URLError as e:
            raise ServerUnreachable("cannot reach %s: %s" % (self.url, e.reason), None, {"kind": "unreachable"}) from None
        except (socket.timeout, TimeoutError):
            raise RequestTimeout(
                "no answer to %s from %s within %s s; the server goes on with it: look before retrying a write" % (method, self.url, self.timeout),
                None, {"kind": "timeout", "method": method},
            ) from None
        return result_of(json.loads(raw))

    def _request(self, method: str, params: Dict[str, Any]) -> Any:
        if self.check and self.described is None:
            with self._checked:
                if self.described is None:
                    described = cast(DescribeResult, self._post("system.describe", {}))
                    check_describe(described, self.url)
                    self.described = described
        return self._post(method, with_defaults(method, params, self.lang))

    def call(self, method: str, **params: Any) -> Any:
        """Calls any ``method`` with ``params`` (None values dropped) and returns its result."""
        return self._request(method, {k: v for k, v in params.items() if v is not None})

    def close(self) -> None:
        """Nothing to release (one HTTP request per call); here so both clients close alike."""

    def __enter__(self) -> "LongrunHttpClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["LongrunClient", "LongrunHttpClient", "Effect", "RestartPolicy", "UNSET", "server_log"]
