"""A research run whose receipts survive a kill: a worker fetches three sources under receipts
(``lr.effect``) and is killed (SIGKILL) in the middle of the third; a second worker claims the run,
gets the completed fetches back without running them again, finds the third ``unknown`` (it may or
may not have happened), reconciles it with evidence, retries it, and finishes the report.

    python3 research_run.py                 # the whole story on a temporary root (--keep keeps it)
    python3 research_run.py ROOT work       # the first worker (killed at the third fetch)
    python3 research_run.py ROOT recover    # the second worker
"""
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile

try:
    from longrun import ConflictError, LongrunClient, LongrunError
except ImportError:  # run from a clone without installing: the package is next to this folder
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from longrun import ConflictError, LongrunClient, LongrunError

QUESTION = "Compare the three theme funds with my portfolio; a draft first, then the open questions"
FUNDS = ["A", "B", "C"]
FETCHES = "fetches.log"  # what the fake tool really did, so the story can show nothing ran twice


def fetch_holdings(root: str, fund: str) -> str:
    """The tool: a (fake) network fetch. It appends to a log so we can count real executions."""
    with open(os.path.join(root, FETCHES), "a", encoding="utf-8") as f:
        f.write(fund + "\n")
    return "fund %s holdings: %s" % (fund, ", ".join("stock-%s%d" % (fund, i) for i in range(5)))


def work(root: str) -> None:
    with LongrunClient(root) as lr:
        lr.start_task(QUESTION)
        run = lr.start_run("worker-1", tools=["fetch"], budget={"tool_calls": 20, "cost": 5, "unknown_ceiling": {"cost": 0.25}})["run"]
        rid, epoch = run["run_id"], run["epoch"]
        print("run %s started by worker-1 at epoch %d" % (rid, epoch))
        for fund in FUNDS:
            with lr.effect(rid, epoch, "fetch", "holdings-" + fund, {"fund": fund}) as r:
                body = fetch_holdings(root, fund)
                if fund == "C":
                    print("worker-1 killed while fetching %s (receipt %s begun, not settled)" % (fund, r.receipt_id), flush=True)
                    os.kill(os.getpid(), signal.SIGKILL)
                r.result_ref = lr.put_context("fund %s holdings" % fund, body, run_id=rid, epoch=epoch)["ref"]
            lr.charge(rid, epoch, requests=1, cost=0.01)
            print("fetched %s -> %s (receipt completed)" % (fund, r.result_ref))


def recover(root: str) -> None:
    with LongrunClient(root) as lr:
        lr.resume()  # a new process: a new turn, read-only
        run = next(r for r in lr.list_runs()["runs"] if r["status"] == "running")
        rid = run["run_id"]
        try:
            lr.start_run("worker-2", tools=["fetch"])
        except ConflictError as e:
            print("a second run is refused: %s (%s)" % (e.data.get("reason"), ", ".join(e.data.get("runs", [e.data.get("run_id", rid)]))))
        claimed = lr.claim_run(rid, "worker-2")
        epoch = claimed["run"]["epoch"]
        unknown = {r["idempotency_key"]: r for r in claimed["newly_unknown"]}
        print("worker-2 claimed %s at epoch %d; unknown: %s" % (rid, epoch, ", ".join(sorted(unknown)) or "none"))
        refs = {}
        for fund in FUNDS:
            key = "holdings-" + fund
            if key in unknown:
                # it may or may not have happened: look, then say what you found (evidence), then retry
                try:
                    lr.begin_receipt(rid, epoch, "fetch", key, args={"fund": fund})
                except LongrunError as e:
                    print("%s is unknown, so a new attempt is refused: %s" % (key, e.kind))
                lr.settle_receipt(rid, epoch, unknown[key]["receipt_id"], "failed",
                                  error="the worker died before its result was stored",
                                  evidence="no context ref holds fund %s's holdings; a fetch is read-only, so it is safe to repeat" % fund)
                print("%s reconciled with evidence: failed, may be retried" % key)
            with lr.effect(rid, epoch, "fetch", key, {"fund": fund}) as r:
                if r.replayed:
                    print("%s: replayed from its receipt (%s), not fetched again" % (key, r.result_ref))
                else:
                    r.result_ref = lr.put_context("fund %s holdings" % fund, fetch_holdings(root, fund), run_id=rid, epoch=epoch)["ref"]
                    lr.charge(rid, epoch, requests=1, cost=0.01)
                    print("%s: fetched now (attempt %d) -> %s" % (key, r.receipt["attempt"] if r.receipt else 0, r.result_ref))
            assert r.result_ref is not None
            refs[fund] = r.result_ref
        texts = [lr.read_context(ref, run_id=rid) for ref in refs.values()]
        report = "\n".join(t["text"] or "" for t in texts)
        art = lr.put_artifact("report", "full", "# Theme funds vs portfolio\n" + report, run_id=rid, epoch=epoch)["artifact"]
        print("report v%d saved (%d bytes, sha256 %s…)" % (art["version"], art["size"], art["sha256"][:12]))
        assert art["sha256"] == hashlib.sha256(("# Theme funds vs portfolio\n" + report).encode()).hexdigest()
        statuses = sorted("%s:%s#%d" % (r["idempotency_key"], r["status"], r["attempt"]) for r in lr.list_receipts(rid)["receipts"])
        print("receipts: " + " ".join(statuses))
        budget = lr.budget_status(rid)["budget"]
        print("budget: %d tool calls, cost %.2f, effects allowed: %s" % (budget["spent"]["tool_calls"], budget["spent"]["cost"], budget["effects_allowed"]))
        lr.finish_run(rid, epoch, "compared A, B and C", gaps=["fund C's fees were not in the source"])
        print("finished: run and task %s" % lr.finish("draft replaced by the full report")["task"]["status"])


def story(keep: bool) -> int:
    root = tempfile.mkdtemp(prefix="longrun-research-")
    print("root:", root, flush=True)
    try:
        me = [sys.executable, os.path.abspath(__file__), root]
        first = subprocess.run(me + ["work"])
        print("worker-1 ended by signal %d" % -first.returncode if first.returncode < 0 else "worker-1 exit %d" % first.returncode, flush=True)
        second = subprocess.run(me + ["recover"])
        with open(os.path.join(root, FETCHES), encoding="utf-8") as f:
            print("real fetches: " + " ".join(f.read().split()))
        return second.returncode
    finally:
        if keep:
            print("kept:", root)
        else:
            shutil.rmtree(root, ignore_errors=True)


def main(argv: list) -> int:
    if len(argv) >= 2 and argv[1] in ("work", "recover"):
        (work if argv[1] == "work" else recover)(os.path.abspath(argv[0]))
        return 0
    return story("--keep" in argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
