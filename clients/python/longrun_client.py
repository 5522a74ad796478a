"""A Python host for longrun: starts ``longrun serve`` and speaks JSON-RPC 2.0 over its pipes.

Standard library only, Python 3.9+. The spawning process is the *host*: it may grant write
leases (``enable_writes``) and move turn boundaries (``begin_turn``/``end_turn``).

    from longrun_client import LongrunClient, WriteGateViolation

    with LongrunClient("/abs/project/root") as lr:         # binary: arg, $LONGRUN_BIN or PATH
        lr.start_task("Adapt the supplier interface")      # in_progress, read-only, turn 1
        try:
            lr.require_writable("edit adapters/xometry.py")
        except WriteGateViolation as e:                    # e.kind, e.code, e.data["reason"]
            print("refused:", e.reason, "turn", e.turn)
        lr.enable_writes("plan approved")                  # lease for this turn only
        lr.require_writable("edit adapters/xometry.py")    # ok
        print(lr.checkpoint("adapter done", "add supplier 2")["text"])

Every method returns the server's result dict unchanged; optional params left as None are not
sent. Errors raise a subclass of ``LongrunError`` chosen by ``error.data.kind``.
"""
import collections
import itertools
import json
import os
import shutil
import subprocess
import threading
import urllib.error
import urllib.request

__all__ = [
    "LongrunClient", "LongrunHttpClient", "ContractMethods", "LongrunError", "WriteGateViolation", "TransitionError", "CheckpointWriteError",
    "StateCorruptError", "NoActiveTask", "StaleEpoch", "BudgetExhausted", "Unauthorized",
    "LimitExceeded", "ConflictError", "NotFound", "StorageError", "MemoryCorrupt", "InvalidParams", "ProtocolError",
]


class LongrunError(Exception):
    """A JSON-RPC error from longrun: ``code``, ``kind`` (data.kind), ``data`` and ``message``."""

    def __init__(self, message, code=None, data=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = dict(data or {})
        self.kind = self.data.get("kind")


class WriteGateViolation(LongrunError):
    """-32001: no lease, a stale lease, or an action out of scope. ``reason``, ``turn``, ``lease_turn``."""
    wire = ("write_gate_violation", -32001)
    reason = property(lambda self: self.data.get("reason"))
    turn = property(lambda self: self.data.get("turn"))
    lease_turn = property(lambda self: self.data.get("lease_turn"))


class TransitionError(LongrunError):
    """-32002: a status change outside the whitelist. ``from_``, ``to``, ``allowed``."""
    wire = ("transition_error", -32002)
    from_ = property(lambda self: self.data.get("from"))
    to = property(lambda self: self.data.get("to"))
    allowed = property(lambda self: self.data.get("allowed"))


class CheckpointWriteError(LongrunError):
    """-32003: the memory save failed; no checkpoint text exists; it waits in ``pending_path``."""
    wire = ("checkpoint_write_error", -32003)
    pending_path = property(lambda self: self.data.get("pending_path"))


class StateCorruptError(LongrunError):
    """-32004: the task state is unreadable (never treated as "no task"); ``path`` names where it is."""
    wire = ("state_corrupt", -32004)
    path = property(lambda self: self.data.get("path"))


class NoActiveTask(LongrunError):
    """-32005: a task method was called with no task in the root."""
    wire = ("no_active_task", -32005)


class StaleEpoch(LongrunError):
    """-32006: a run write carried an old fencing epoch."""
    wire = ("stale_epoch", -32006)


class BudgetExhausted(LongrunError):
    """-32007: a new effect past a budget limit."""
    wire = ("budget_exhausted", -32007)


class Unauthorized(LongrunError):
    """-32008: this caller's side may not call the method."""
    wire = ("unauthorized", -32008)


class LimitExceeded(LongrunError):
    """-32009: a payload over a documented limit. ``field``, ``limit``, ``actual``, ``unit``."""
    wire = ("limit_exceeded", -32009)
    field = property(lambda self: self.data.get("field"))
    limit = property(lambda self: self.data.get("limit"))
    actual = property(lambda self: self.data.get("actual"))
    unit = property(lambda self: self.data.get("unit"))


class ConflictError(LongrunError):
    """-32010: state changed underneath, or a task is already active."""
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
    reason = property(lambda self: self.data.get("reason"))
    path = property(lambda self: self.data.get("path"))


class MemoryCorrupt(LongrunError):
    """-32013: memory.db is not a readable database; the message says how to restore or go on."""
    wire = ("memory_corrupt", -32013)
    path = property(lambda self: self.data.get("path"))


class InvalidParams(LongrunError):
    """-32602: params failed validation; ``data["issues"]`` lists what was wrong."""
    wire = ("invalid_params", -32602)


class ProtocolError(LongrunError):
    """Parse error, invalid request, unknown method, internal error, a timeout, or a dead/closed child."""


_WIRED = [c for c in LongrunError.__subclasses__() if getattr(c, "wire", None)]
_BY_KIND = {c.wire[0]: c for c in _WIRED}
_BY_CODE = {c.wire[1]: c for c in _WIRED}


def error_from_wire(err):
    """The exception for a JSON-RPC error object: by ``data.kind``, else by ``code``, else ProtocolError."""
    data = err.get("data") if isinstance(err.get("data"), dict) else {}
    code = err.get("code")
    cls = _BY_KIND.get(data.get("kind")) or _BY_CODE.get(code) or ProtocolError
    return cls(str(err.get("message", "unknown error")), code, data)


class ContractMethods:
    """The seed's method names over ``call``; shared by the stdio and the HTTP client."""

    def start_task(self, description, keywords=None):
        """I1: search this root's memory, then create a task (in_progress, read-only, turn 1)."""
        return self.call("task.start", description=description, keywords=keywords)

    def status(self):
        return self.call("task.status")

    def begin_turn(self, reason=None):
        """Host: a new user message began; the turn advances and any lease is revoked."""
        return self.call("turn.begin", reason=reason)

    def end_turn(self, reason=None):
        return self.call("turn.end", reason=reason)

    def enable_writes(self, reason, scope=None, ttl_seconds=None, max_uses=None):
        """Host: grant a write lease for the current turn only."""
        return self.call("writes.enable", reason=reason, scope=scope, ttl_seconds=ttl_seconds, max_uses=max_uses)

    def request_writes(self, reason, scope=None):
        return self.call("writes.request", reason=reason, scope=scope)

    def require_writable(self, action):
        """I3 gate check; raises WriteGateViolation unless a lease of this turn covers ``action``."""
        return self.call("writes.require", action=action)

    def transition(self, to, reason):
        return self.call("task.transition", to=to, reason=reason)

    def checkpoint(self, summary, next_step, phase=None, kind=None):
        """I2: saved to memory first; returns text (with its machine line), memory_id and task."""
        return self.call("task.checkpoint", summary=summary, next_step=next_step, phase=phase, kind=kind)

    def resume(self):
        return self.call("task.resume")

    def recover_from_memory(self):
        return self.call("task.recover")

    def finish(self, summary=None):
        return self.call("task.finish", summary=summary)

    def save_memory(self, type, title, content, keywords=None):
        return self.call("memory.save", type=type, title=title, content=content, keywords=keywords)

    def search_memory(self, query, limit=None, type=None, cursor=None):
        return self.call("memory.search", query=query, limit=limit, type=type, cursor=cursor)

    def get_memory(self, id):
        return self.call("memory.get", id=id)

    def describe(self):
        return self.call("system.describe")


class LongrunClient(ContractMethods):
    """One ``longrun serve --root ROOT`` child. Thread-safe: calls from several threads are matched by id."""

    def __init__(self, root=None, binary=None, timeout=30.0):
        self.root = os.path.abspath(root if root is not None else os.getcwd())
        self.binary = binary or os.environ.get("LONGRUN_BIN") or shutil.which("longrun")
        if not self.binary:
            raise FileNotFoundError("longrun binary not found: pass binary=, set LONGRUN_BIN, or put longrun on PATH")
        self.timeout = timeout
        self._lock = threading.Lock()          # guards _pending, _ids, _dead and writes to stdin
        self._pending = {}                     # id -> [threading.Event, response or exception]
        self._ids = itertools.count(1)
        self._dead = None                      # ProtocolError once the child is gone or we closed
        self._stderr = collections.deque(maxlen=40)
        self.process = subprocess.Popen(
            [self.binary, "serve", "--root", self.root],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self._err_thread = threading.Thread(target=self._drain_stderr, name="longrun-stderr", daemon=True)
        self._out_thread = threading.Thread(target=self._read_stdout, name="longrun-reader", daemon=True)
        self._err_thread.start()
        self._out_thread.start()

    # -- plumbing ---------------------------------------------------------------------------

    def stderr_tail(self):
        """The last lines the child wrote to stderr (its logs), as one string."""
        return "".join(self._stderr).strip()

    def _drain_stderr(self):
        for raw in iter(self.process.stderr.readline, b""):
            self._stderr.append(raw.decode("utf-8", "replace"))

    def _read_stdout(self):
        for raw in iter(self.process.stdout.readline, b""):
            try:
                msg = json.loads(raw)
            except ValueError:
                continue  # stdout carries protocol only; ignore anything else
            for one in msg if isinstance(msg, list) else [msg]:
                self._deliver(one)
        # End of output: the child exited (or is about to). Fail everything still waiting.
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        self._err_thread.join(timeout=1)
        self._fail_all(self._death("longrun exited"))

    def _deliver(self, msg):
        with self._lock:
            slot = self._pending.get(msg.get("id")) if isinstance(msg, dict) else None
            if slot is None and isinstance(msg, dict) and msg.get("id") is None and len(self._pending) == 1:
                slot = next(iter(self._pending.values()))  # an id-less error (bad line) answers the only caller
            if slot is not None:
                slot[1] = msg
                slot[0].set()

    def _death(self, what):
        rc = self.process.poll()
        tail = self.stderr_tail()
        msg = "%s (exit code %s)" % (what, rc) + ("; stderr:\n" + tail if tail else "")
        return ProtocolError(msg, None, {"kind": "child_exited", "returncode": rc, "stderr": tail})

    @staticmethod
    def _copy(exc):
        """A fresh exception per raise, so tracebacks of unrelated calls do not pile up on one object."""
        return type(exc)(exc.message, exc.code, exc.data)

    def _fail_all(self, exc):
        with self._lock:
            if self._dead is None:
                self._dead = exc
            for slot in self._pending.values():
                if slot[1] is None:
                    slot[1] = self._dead
                slot[0].set()

    def call(self, method, **params):
        """Calls ``method`` with ``params`` (None values dropped) and returns its result dict."""
        params = {k: v for k, v in params.items() if v is not None}
        slot = [threading.Event(), None]
        with self._lock:
            if self._dead is not None:
                raise self._copy(self._dead)
            rid = next(self._ids)
            self._pending[rid] = slot
            line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params},
                              ensure_ascii=False, separators=(",", ":")) + "\n"
            try:
                self.process.stdin.write(line.encode("utf-8"))
                self.process.stdin.flush()
                sent = True
            except (OSError, ValueError):  # broken pipe, or stdin already closed
                del self._pending[rid]
                sent = False
        if not sent:  # the child is gone; let the reader collect its exit code and stderr first
            self._out_thread.join(timeout=3)
            raise self._copy(self._dead or self._death("longrun is not running"))
        try:
            if not slot[0].wait(self.timeout):
                raise ProtocolError("no answer to %s within %s s" % (method, self.timeout), None, {"kind": "timeout"})
        finally:
            with self._lock:
                self._pending.pop(rid, None)
        answer = slot[1]
        if isinstance(answer, Exception):
            raise self._copy(answer)
        if "error" in answer:
            raise error_from_wire(answer["error"])
        return answer.get("result")

    def close(self, timeout=10.0):
        """Closes stdin (the server finishes in-flight requests and exits), waits, then terminates. Idempotent."""
        with self._lock:
            if self._dead is None:
                self._dead = ProtocolError("the client is closed", None, {"kind": "closed"})
            try:
                self.process.stdin.close()
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
        self._out_thread.join(timeout=3)
        self._err_thread.join(timeout=3)
        for stream in (self.process.stdout, self.process.stderr):
            stream.close()
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()



class LongrunHttpClient(ContractMethods):
    """The same methods over ``longrun http``: ``POST {url}/rpc`` with a bearer token.

    The token decides the side: the host token may grant leases, the agent token may not (calls
    from the wrong side raise ``Unauthorized``). ``root`` (optional) is sent with every call; it
    must be inside the server's allowed roots. Tokens live in ``<root>/.longrun/http.json``.
    """

    def __init__(self, url, token, root=None, timeout=30.0):
        self.url = url.rstrip("/") + "/rpc"
        self.token = token
        self.root = root
        self.timeout = timeout
        self._ids = itertools.count(1)

    @classmethod
    def from_token_file(cls, path, side="host", root=None, timeout=30.0):
        """A client for the server that wrote ``path`` (``.longrun/http.json``), on ``side`` ("host" or "agent")."""
        with open(path, encoding="utf-8") as f:
            info = json.load(f)
        return cls(info["url"], info["%s_token" % side], root=root, timeout=timeout)

    def call(self, method, **params):
        params = {k: v for k, v in params.items() if v is not None}
        if self.root is not None and "root" not in params:
            params["root"] = self.root
        body = json.dumps({"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params},
                          ensure_ascii=False).encode("utf-8")
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
                raise ProtocolError("HTTP %s from %s" % (e.code, self.url), e.code, {"kind": "http", "status": e.code})
            if "error" in doc:
                raise error_from_wire(doc["error"])
            raise error_from_wire({"code": None, "message": doc.get("detail", "HTTP %s" % e.code), "data": doc})
        except urllib.error.URLError as e:
            raise ProtocolError("cannot reach %s: %s" % (self.url, e.reason), None, {"kind": "unreachable"})
        answer = json.loads(raw)
        if "error" in answer:
            raise error_from_wire(answer["error"])
        return answer.get("result")

    def close(self):
        """Nothing to release (one HTTP request per call); here so both clients close alike."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
