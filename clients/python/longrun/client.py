"""The threaded clients: ``LongrunClient`` (a ``longrun serve`` child over pipes) and
``LongrunHttpClient`` (``longrun http``), with every method of the protocol (``ContractMethods``)
and ``effect``, a context manager for a receipt."""

import itertools
import json
import logging
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from typing import Any, Dict, Optional, cast

from . import _http_env
from ._binary import find_binary, serve_target
from ._child import RestartPolicy, _Child
from ._compat import check_describe
from ._effect import Effect, _EffectMixin
from ._methods import UNSET, ContractMethods
from ._wire import encode_request, log, result_of, server_log, with_defaults
from .errors import ClientClosed, LongrunError, ProtocolError, RequestTimeout, ServerExited, ServerUnreachable, error_from_wire
from .types import CheckpointLang, DescribeResult

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
