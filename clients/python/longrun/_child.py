"""One ``longrun serve`` child over pipes: its reader threads, its requests in flight matched by id,
its death (exit code and stderr tail), and the policy for starting a new one."""
from __future__ import annotations

import collections
import itertools
import json
import subprocess
import threading
import time
from typing import IO, Any, Deque, Dict, List, Mapping, Optional, Union

from ._wire import encode_request, log, result_of, server_log
from .errors import ClientClosed, LongrunError, RequestTimeout, ServerExited

#: How many of the child's last stderr lines an error message quotes (all of them go to logging).
STDERR_TAIL_LINES = 20


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
