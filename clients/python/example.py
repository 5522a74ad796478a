"""The demo's flow through two client processes: `python3 example.py` where the longrun package is
installed (pip install a platform wheel: it carries the executable), or from a clone
`LONGRUN_BIN=dist/longrun python3 clients/python/example.py`.

Its root is a temporary directory, removed at the end; pass --keep to look at it afterwards.
"""
import shutil
import sys
import tempfile

from longrun import LongrunClient, WriteGateViolation, find_binary

root = tempfile.mkdtemp(prefix="longrun-example-")
print("root:", root)
print("binary:", find_binary())
try:
    with LongrunClient(root) as agent:
        print("[1] start:", agent.start_task("Adapt the supplier interface")["task"]["access_mode"])
        try:
            agent.require_writable("edit adapters/xometry.py")
        except WriteGateViolation as e:
            print("    refused:", e.reason, "in turn", e.turn)
        agent.enable_writes("plan approved")
        print("[2] lease: require ok in turn", agent.require_writable("edit adapters/xometry.py")["turn"])
        cp = agent.checkpoint("adapter for supplier 1 done", "add supplier 2", phase="interface adaptation")
        print("[3] checkpoint saved as", cp["memory_id"], "before it was shown:\n" + cp["text"])
    with LongrunClient(root) as agent:  # a second child process on the same root
        print("[4] resume: turn", agent.resume()["task"]["turn_index"])
        try:
            agent.require_writable("edit adapters/second.py")
        except WriteGateViolation as e:
            print("    refused:", e.reason, "- the lease did not survive resume")
        agent.enable_writes("re-approved in this turn")
        agent.require_writable("edit adapters/second.py")
        done = agent.finish("both suppliers adapted")
        print("[5] finish:", done["task"]["status"], "memory", done["memory_id"])
finally:
    if "--keep" in sys.argv[1:]:
        print("kept:", root)
    else:
        shutil.rmtree(root, ignore_errors=True)
