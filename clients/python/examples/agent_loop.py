"""An agent loop that survives being killed: it edits twelve files under a lease, saves a progress
checkpoint every few steps with its position in ``data``, is killed (SIGKILL) halfway, and a new
process resumes from that data: not from prose, not from the start.

    python3 agent_loop.py                  # the whole story: a temporary root, killed once, resumed
    python3 agent_loop.py ROOT [--die-at-step N] [--steps N] [--every K]   # one run of the loop

Without ROOT it runs itself twice on a temporary root (the first run is killed at step 7) and
removes the root at the end (--keep keeps it). The executable is the one the longrun package
carries, else $LONGRUN_BIN, else longrun on PATH.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile

try:
    from longrun import LongrunClient, WriteGateViolation
except ImportError:  # run from a clone without installing: the package is next to this folder
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from longrun import LongrunClient, WriteGateViolation

TASK = "Rename the config key `timeout` to `timeout_seconds` in every module"


def edit(root: str, step: int) -> str:
    """The loop's real work: one file changed (idempotent, so a step redone after a crash is harmless)."""
    path = os.path.join(root, "src", "module_%02d.py" % step)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("timeout_seconds = 30  # step %d\n" % step)
    return os.path.relpath(path, root)


def loop(root: str, steps: int, every: int, die_at: int) -> None:
    with LongrunClient(root) as lr:
        task = lr.status()["task"]
        edited = []
        if task is None or task["status"] in ("completed", "failed"):
            lr.start_task(TASK)
            start = 0
            print("started: read-only until the user approves")
        else:
            resumed = lr.resume()  # a new turn, read-only: the old lease did not survive
            data = resumed["data"] or {}
            start = int(data.get("next_step", 0))
            print("resumed from checkpoint data: next step %d (edited so far: %d)" % (start, len(data.get("edited", []))))
            try:
                lr.require_writable("edit src/module_%02d.py" % start)
            except WriteGateViolation as e:
                print("refused after resume: %s in turn %s" % (e.reason, e.turn))
            edited = list(data.get("edited", []))
        # the host asks the user, who approves; the lease covers this turn and these paths only
        lr.enable_writes("user approved the rename plan", scope=["src/**"])
        print("approved: lease for turn %d" % lr.status()["task"]["turn_index"])
        for step in range(start, steps):
            lr.require_writable("edit src/module_%02d.py" % step)  # the gate, before every write
            rel = edit(root, step)
            if rel not in edited:
                edited.append(rel)
            print("step %d done" % step)
            if step == die_at:
                print("killed at step %d (SIGKILL)" % step, flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
            if (step + 1) % every == 0 and step + 1 < steps:
                cp = lr.progress("%d of %d modules renamed" % (step + 1, steps), "rename module %d" % (step + 1),
                                 data={"next_step": step + 1, "edited": edited})
                print("progress checkpoint %s: next step %d, still %s" % (cp["memory_id"], step + 1, cp["task"]["access_mode"]))
        done = lr.checkpoint("all %d modules renamed" % steps, "run the tests", data={"next_step": steps, "edited": edited})
        print("pause checkpoint %s: %s, %s" % (done["memory_id"], done["task"]["status"], done["task"]["access_mode"]))
        lr.resume()
        finished = lr.finish("renamed in %d modules" % len(edited))
        print("finished: %s (%d modules)" % (finished["task"]["status"], len(edited)))


def story(keep: bool) -> int:
    root = tempfile.mkdtemp(prefix="longrun-loop-")
    print("root:", root, flush=True)
    try:
        me = [sys.executable, os.path.abspath(__file__), root]
        first = subprocess.run(me + ["--die-at-step", "7"])
        print("first run ended by signal %d" % -first.returncode if first.returncode < 0 else "first run exit %d" % first.returncode, flush=True)
        second = subprocess.run(me)
        files = sorted(os.listdir(os.path.join(root, "src")))
        print("modules on disk: %d" % len(files))
        return second.returncode
    finally:
        if keep:
            print("kept:", root)
        else:
            shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--die-at-step", type=int, default=-1, help="SIGKILL this process after that step's edit")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if a.root is None:
        return story(a.keep)
    loop(os.path.abspath(a.root), a.steps, a.every, a.die_at_step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
