"""Shared by the Python tests (not part of the package): the binary under test, temporary roots,
and a fake server for what the real one cannot be made to do on cue (hold an answer, die, log)."""
import os
import sys
import tempfile
import textwrap
import unittest

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
