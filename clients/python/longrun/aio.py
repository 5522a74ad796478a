"""The asyncio clients: ``AsyncLongrunClient`` (a ``longrun serve`` child over asyncio subprocess
pipes) and ``AsyncLongrunHttpClient`` (``longrun http``), with the same methods as the threaded ones.

Many requests may be in flight at once on one child: each gets its own id and its answer is
matched by id, in whatever order the server answers.

**Cancellation.** The protocol has no cancel method (``system.describe`` lists none: a state change
commits whole or not at all, and there is no point at which one could be withdrawn). Cancelling
the task that awaits a request therefore only stops the waiting: a request not yet written is
never sent; one already written runs to its end in the server (a read is simply lost, a change
commits or fails on its own), and its late answer is dropped by the client (counted in
``dropped_answers``). A timeout (``timeout=``) behaves the same and raises ``RequestTimeout``.
Look (``status``, ``list_receipts``) before retrying a write that was cancelled or timed out.
"""
from __future__ import annotations

import asyncio
import collections
import itertools
import json
import logging
import os
import subprocess
from types import TracebackType
from typing import Any, AsyncIterator, Callable, Awaitable, Deque, Dict, List, Mapping, Optional, Type, cast

from . import _http_env
from ._binary import find_binary, serve_target
from ._child import STDERR_TAIL_LINES, RestartPolicy
from ._compat import check_describe
from ._effect import Effect
from ._methods import AsyncContractMethods
from ._wire import encode_request, log, result_of, server_log, with_defaults
from .client import LongrunHttpClient
from .errors import ClientClosed, LongrunError, RequestTimeout, ServerExited
from .types import CheckpointLang, DescribeResult, Receipt, ReceiptKind

#: Bytes read from the child's pipes at a time (lines of any length are reassembled).
CHUNK = 1 << 16


async def _lines(stream: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The stream's lines (without their newline), however long; the last one even without a newline."""
    buf = bytearray()
    while True:
        chunk = await stream.read(CHUNK)
        if not chunk:
            if buf:
                yield bytes(buf)
            return
        scan = len(buf)
        buf += chunk
        start = 0
        while True:
            nl = buf.find(b"\n", scan)
            if nl < 0:
                break
            yield bytes(buf[start:nl])
            start = scan = nl + 1
        del buf[:start]


class _AsyncChild:
    """One ``longrun serve`` process, its reader tasks and its requests in flight."""

    def __init__(self, root: str, args: List[str], stderr_level: int) -> None:
        self.root = root
        self.args = args
        self.stderr_level = stderr_level
        self.pending: Dict[int, "asyncio.Future[Dict[str, Any]]"] = {}
        self.ids = itertools.count(1)
        self.dead: Optional[LongrunError] = None
        self.tail: Deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self.dropped = 0
        self.write_lock = asyncio.Lock()

    async def start(self, binary: str) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            binary, "serve", *self.args,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.err_task = asyncio.ensure_future(self._drain_stderr())
        self.reader = asyncio.ensure_future(self._read_stdout())

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        async for raw in _lines(self.proc.stderr):
            line = raw.decode("utf-8", "replace").rstrip("\r")
            self.tail.append(line)
            server_log.log(self.stderr_level, "%s", line, extra={"longrun_root": self.root, "longrun_pid": self.proc.pid})

    async def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        try:
            async for raw in _lines(self.proc.stdout):
                try:
                    msg = json.loads(raw)
                except ValueError:
                    continue  # stdout carries protocol only
                for one in msg if isinstance(msg, list) else [msg]:
                    if isinstance(one, dict):
                        self._deliver(one)
        finally:
            try:
                await asyncio.wait_for(self.proc.wait(), 2)
            except asyncio.TimeoutError:
                pass
            await asyncio.wait({self.err_task}, timeout=1)
            self.fail_all(self.death("longrun exited"))

    def _deliver(self, msg: Dict[str, Any]) -> None:
        rid = msg.get("id")
        fut = self.pending.get(rid) if isinstance(rid, int) else None
        if fut is None and rid is None and len(self.pending) == 1:
            fut = next(iter(self.pending.values()))  # an id-less error (a bad line) answers the only caller
        if fut is None or fut.done():
            self.dropped += 1
            log.debug("dropped an answer nobody waits for any more (id %r): its request was cancelled or timed out", rid)
            return
        fut.set_result(msg)

    def stderr_tail(self) -> str:
        return "\n".join(self.tail).strip()

    def death(self, what: str) -> ServerExited:
        rc = self.proc.returncode
        tail = self.stderr_tail()
        msg = "%s (exit code %s)" % (what, rc) + ("; stderr:\n" + tail if tail else "")
        return ServerExited(msg, None, {"kind": "child_exited", "returncode": rc, "stderr": tail})

    def fail_all(self, exc: LongrunError) -> None:
        if self.dead is None:
            self.dead = exc
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(self.dead.copy())

    def alive(self) -> bool:
        return self.dead is None and self.proc.returncode is None

    async def request(self, method: str, params: Mapping[str, Any], timeout: Optional[float]) -> Any:
        if self.dead is not None:
            raise self.dead.copy()
        rid = next(self.ids)
        line = encode_request(rid, method, params)
        fut: "asyncio.Future[Dict[str, Any]]" = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        try:
            try:
                async with self.write_lock:  # a cancel while waiting here: never sent
                    if self.dead is not None:
                        raise self.dead.copy()
                    assert self.proc.stdin is not None
                    self.proc.stdin.write(line)
                    await self.proc.stdin.drain()
            except (ConnectionError, OSError):
                await asyncio.wait({self.reader}, timeout=3)  # let the reader collect the exit code and stderr
                raise (self.dead or self.death("longrun is not running")).copy() from None
            if timeout is None:
                answer = await fut
            else:
                try:
                    answer = await asyncio.wait_for(fut, timeout)
                except asyncio.TimeoutError:
                    raise RequestTimeout(
                        "no answer to %s within %s s; the server goes on with it (the protocol cannot cancel a request): "
                        "a change it makes still commits; look (status, list_receipts) before retrying" % (method, timeout),
                        None, {"kind": "timeout", "method": method, "id": rid},
                    ) from None
        finally:
            self.pending.pop(rid, None)
        return result_of(answer)

    async def close(self, timeout: float) -> Optional[int]:
        if self.dead is None:
            self.dead = ClientClosed("the client is closed", None, {"kind": "closed"})
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except asyncio.TimeoutError:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 3)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        await asyncio.wait({self.reader, self.err_task}, timeout=3)
        return self.proc.returncode


class AsyncEffect(Effect):
    """``async with lr.effect(run_id, epoch, tool, key, args) as r:``: the same rules as ``Effect``;
    a cancelled task leaves the receipt begun (unknown on the run's next claim)."""

    def __init__(self, begin: Callable[[], Awaitable[Dict[str, Any]]], settle: Callable[..., Awaitable[Any]], what: str) -> None:
        super().__init__(lambda: {}, lambda **kw: None, what)
        self._abegin = begin
        self._asettle = settle

    def __enter__(self) -> "Effect":
        raise TypeError("an asyncio client's effect is entered with `async with`")

    async def __aenter__(self) -> "AsyncEffect":
        self._entered(await self._abegin())
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        outcome = self._outcome(exc)
        if outcome is None:
            return
        try:
            self.settled = cast(Receipt, (await self._asettle(receipt_id=self.receipt_id, **outcome))["receipt"])
        except LongrunError as e:
            if exc is None:
                raise
            log.warning("%s: could not be settled failed (%s); it stays begun", self._what, e)


class _AsyncEffectMixin:
    def effect(self, run_id: str, epoch: int, tool: str, key: str, args: Any = None, *, args_digest: Optional[str] = None, kind: Optional[ReceiptKind] = None) -> AsyncEffect:
        """Begin → (run the effect, set ``r.result_ref``) → settle, under ``async with``; see ``Effect``."""
        me = cast(AsyncContractMethods, self)

        async def begin() -> Dict[str, Any]:
            if args_digest is not None:
                return cast(Dict[str, Any], await me.begin_receipt(run_id, epoch, tool, key, args_digest=args_digest, kind=kind))
            return cast(Dict[str, Any], await me.begin_receipt(run_id, epoch, tool, key, args=args, kind=kind))

        async def settle(**kw: Any) -> Any:
            return await me.settle_receipt(run_id, epoch, **kw)

        return AsyncEffect(begin, settle, "receipt %s/%s" % (tool, key))


class AsyncLongrunClient(_AsyncEffectMixin, AsyncContractMethods):
    """One ``longrun serve --root ROOT`` child over asyncio pipes; many requests at once, matched by id.

    ``async with AsyncLongrunClient(root) as lr:`` (or ``await lr.start()`` … ``await lr.aclose()``).
    Params as for ``LongrunClient``: ``binary``, ``timeout``, ``check``, ``restarts``,
    ``restart_window``, ``lang``, ``stderr_level``. See the module for cancellation.
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
        self._child: Optional[_AsyncChild] = None
        self._lock: Optional[asyncio.Lock] = None  # made in the loop that starts the client
        self._closed = False
        self._dropped_before = 0

    async def _spawn(self) -> _AsyncChild:
        child = _AsyncChild(self.root, self._serve_args, self.stderr_level)
        await child.start(self.binary)
        if self.check:
            try:
                described = cast(DescribeResult, await child.request("system.describe", {}, self.timeout))
                check_describe(described, "%s (root %s)" % (self.binary, self.root))
            except LongrunError:
                await child.close(timeout=5)
                raise
            self.described = described
        return child

    async def start(self) -> "AsyncLongrunClient":
        """Starts the child (and checks ``system.describe``); idempotent."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._closed:
                raise ClientClosed("the client is closed", None, {"kind": "closed"})
            if self._child is None:
                self._child = await self._spawn()
        return self

    @property
    def process(self) -> "asyncio.subprocess.Process":
        """The current child process."""
        if self._child is None:
            raise ClientClosed("the client is not started: use async with, or await start()", None, {"kind": "closed"})
        return self._child.proc

    @property
    def dropped_answers(self) -> int:
        """Answers that came after their caller stopped waiting (cancelled or timed out), dropped."""
        return self._dropped_before + (self._child.dropped if self._child else 0)

    def stderr_tail(self) -> str:
        """The current child's last stderr lines (all of them also went to ``longrun.server``)."""
        return self._child.stderr_tail() if self._child else ""

    async def _running(self) -> _AsyncChild:
        child = self._child
        if child is not None and child.alive() and not self._closed:
            return child  # the common case, without the lock
        await self.start()
        assert self._lock is not None
        async with self._lock:
            if self._closed:
                raise ClientClosed("the client is closed", None, {"kind": "closed"})
            child = self._child
            assert child is not None
            if child.alive():
                return child
            if child.dead is None:
                await asyncio.wait({child.reader}, timeout=3)
            if not self.restart_policy.allow():
                raise (child.dead or child.death("longrun exited")).copy()
            log.warning("longrun serve for %s exited (code %s); starting a new one (restart policy)", self.root, child.proc.returncode)
            await child.close(timeout=1)
            self._dropped_before += child.dropped
            self._child = await self._spawn()
            self.restart_count += 1
            return self._child

    async def restart(self) -> None:
        """Stops the current child (if it runs) and starts a new one on the same root."""
        await self.start()
        assert self._lock is not None
        async with self._lock:
            if self._closed:
                raise ClientClosed("the client is closed", None, {"kind": "closed"})
            if self._child is not None:
                await self._child.close(timeout=10)
                self._dropped_before += self._child.dropped
            self._child = await self._spawn()
            self.restart_count += 1

    async def _request(self, method: str, params: Dict[str, Any]) -> Any:
        child = await self._running()
        return await child.request(method, with_defaults(method, params, self.lang), self.timeout)

    async def call(self, method: str, **params: Any) -> Any:
        """Calls any ``method`` with ``params`` (None values dropped) and returns its result."""
        return await self._request(method, {k: v for k, v in params.items() if v is not None})

    async def aclose(self, timeout: float = 10.0) -> Optional[int]:
        """Closes stdin (the server finishes in-flight requests and exits), waits, then terminates. Idempotent."""
        self._closed = True
        if self._child is None:
            return None
        return await self._child.close(timeout)

    async def __aenter__(self) -> "AsyncLongrunClient":
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class AsyncLongrunHttpClient(_http_env.HttpFactories, _AsyncEffectMixin, AsyncContractMethods):
    """The same methods over ``longrun http``, awaitable: each call runs one HTTP request in a worker
    thread (``asyncio.to_thread``: standard library only). A cancelled call stops waiting; the HTTP
    request itself finishes in its thread and the server goes on with it, as over stdio."""

    def __init__(self, url: str, token: str, root: Optional[str] = None, timeout: Optional[float] = 30.0, *,
                 check: bool = True, lang: Optional[CheckpointLang] = None) -> None:
        self.sync = LongrunHttpClient(url, token, root=root, timeout=timeout, check=check, lang=lang)

    async def _request(self, method: str, params: Dict[str, Any]) -> Any:
        return await asyncio.to_thread(self.sync._request, method, params)

    async def call(self, method: str, **params: Any) -> Any:
        """Calls any ``method`` with ``params`` (None values dropped) and returns its result."""
        return await self._request(method, {k: v for k, v in params.items() if v is not None})

    async def aclose(self) -> None:
        """Nothing to release; here so every client closes alike."""

    async def __aenter__(self) -> "AsyncLongrunHttpClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


__all__ = ["AsyncLongrunClient", "AsyncLongrunHttpClient", "AsyncEffect"]
