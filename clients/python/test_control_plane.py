"""Issue 28's control plane, end to end from Python through the binary, on a local root and on sqld:
a Python host runs seed 003's research with a worker process that is SIGKILLed mid-run; the run
shows ``stale_owner`` within its TTL and an event says so; a standby the host names claims it; the
run parks for the user's answer, the person answers with ``longrun answer``, and the run wakes with
it; a forgotten memory is gone from search and ``memory.get`` and stays gone after a late write; a
fork from an older checkpoint resumes there.

The host is ``LongrunClient`` (its own ``longrun serve``, whose timer notices the stale owner); the
worker and the standby are agents over ``longrun http`` with the agent token, as executors in
containers are."""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

from testsupport import BIN, HERE, SQLD_SKIP, require_binary, start_sqld, temp_root, until

from longrun import LongrunClient, LongrunHttpClient, Unauthorized
from longrun.errors import LongrunError, NotFound

WORKER = r"""
import sys, time
from longrun import LongrunHttpClient
url, token, run_id = sys.argv[1:4]
w = LongrunHttpClient(url, token)
w.begin_receipt(run_id, 1, "fetch", "fetch:filing-2024", args={"url": "https://example.org/filing-2024"})
print("READY", flush=True)
while True:                      # the owner's beat, until it is killed
    w.heartbeat_run(run_id, 1)
    time.sleep(0.2)
"""


class ControlPlaneScenario:
    """The scenario; a subclass says where the root is (``target``: longrun's root arguments)."""

    target: list
    client_args: dict
    settings_path: str

    def start_http(self):
        """``longrun http`` on the same root, port 0; its URL and agent token from its first line."""
        proc = subprocess.Popen([BIN, "http", *self.target, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.addCleanup(lambda: (proc.send_signal(signal.SIGTERM), proc.wait(10), proc.stdout.close()))
        info = json.loads(proc.stdout.readline())
        with open(info["token_file"], encoding="utf-8") as f:
            tokens = json.load(f)
        return info["url"], tokens["agent_token"]

    def test_a_killed_worker_a_standby_an_answer_a_forgotten_memory_and_a_fork(self):
        with LongrunClient(binary=BIN, **self.client_args) as host:
            task = host.start_task("Which filings show revenue restated in 2024?")["task"]
            first = host.checkpoint("plan made", "read the 2024 filings", data={"step": 1}, kind="progress")
            host.checkpoint("two filings read", "compare them", data={"step": 2}, kind="progress")
            run = host.start_run(owner="worker-A", tools=["fetch"], sources=["filings"], budget={"requests": 50}, owner_ttl_seconds=1)["run"]
            rid = run["run_id"]
            url, agent_token = self.start_http()

            # the worker: a process of its own, beating as the owner; killed mid-run
            env = dict(os.environ, PYTHONPATH=HERE)
            worker = subprocess.Popen([sys.executable, "-c", WORKER, url, agent_token, rid], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            self.addCleanup(lambda: (worker.poll() is None and (worker.kill(), worker.wait()), worker.stdout.close(), worker.stderr.close()))
            self.assertEqual(worker.stdout.readline().strip(), "READY", worker.stderr.read() if worker.poll() is not None else "")
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)
            killed_at = time.monotonic()

            stale = until(lambda: (lambda r: r if r["run"]["stale_owner"] else None)(host.get_run(rid)), "stale_owner")
            self.assertLess(time.monotonic() - killed_at, 1 + 5, "stale within its TTL (1 s), give or take the timer")
            events = until(lambda: host.read_events(kinds=["run.stale_owner"], run_id=rid, wait_ms=2000)["events"], "a stale_owner event")
            self.assertEqual(events[0]["detail"]["owner"], "worker-A")
            self.assertIsNotNone(stale["run"]["stale_since"])

            # a standby: refused until the host's settings name it, then it claims the run
            standby = LongrunHttpClient(url, agent_token)
            with self.assertRaises(LongrunError) as refused:
                standby.claim_run(rid, "worker-B")
            self.assertEqual(refused.exception.data.get("reason"), "stale_owner")
            with open(self.settings_path, "w", encoding="utf-8") as f:
                json.dump({"standby_owners": ["worker-B"]}, f)
            claimed = standby.claim_run(rid, "worker-B", owner_ttl_seconds=60)["run"]
            self.assertEqual((claimed["epoch"], claimed["owner"], claimed["stale_owner"]), (2, "worker-B", False))
            self.assertEqual(host.get_run(rid)["unknown_receipts"][0]["tool"], "fetch", "the killed worker's fetch is unknown, not lost")

            # parked for the user; the person answers at a terminal; the run wakes with the answer
            standby.park_run(rid, 2, "which fiscal year to cover", for_user=True)
            answered = subprocess.run([BIN, "answer", "cover fiscal 2024", "--data", '{"year": 2024}', *self.target], capture_output=True, text=True, timeout=30)
            self.assertEqual(answered.returncode, 0, answered.stderr)
            woke = standby.get_run(rid)["run"]
            self.assertEqual((woke["status"], woke["answer"]["text"], woke["answer"]["data"]), ("running", "cover fiscal 2024", {"year": 2024}))
            self.assertIsNone(standby.heartbeat_run(rid, 2)["stop"])
            kinds = [e["kind"] for e in host.read_events(run_id=rid)["events"]]
            order = ["run.stale_owner", "run.claimed", "run.parked", "run.woken"]
            self.assertEqual([k for k in kinds if k in order], order)

            # a memory the user asked to forget: gone, and a late write does not bring it back
            saved = host.call("memory.save", type="note", title="the user's home address", content="12 zanzibar road", idempotency_key="note-1")
            self.assertEqual(len(host.search_memory("zanzibar")["hits"]), 1)
            with self.assertRaises(Unauthorized):
                standby.forget_memory([saved["id"]])
            self.assertEqual(host.forget_memory([saved["id"]], reason="the user asked")["forgotten"], [saved["id"]])
            self.assertEqual(host.search_memory("zanzibar")["hits"], [])
            with self.assertRaises(NotFound):
                host.get_memory(saved["id"])
            late = host.call("memory.save", type="note", title="the user's home address", content="12 zanzibar road", idempotency_key="note-1")
            self.assertEqual((late["id"], late["forgotten"]), (saved["id"], True))
            self.assertEqual(host.search_memory("zanzibar")["hits"], [])
            self.assertEqual(standby.search_memory("zanzibar")["hits"], [], "for every reader")

            # back in time: a fork from the older checkpoint resumes there
            older = first["task"]["last_checkpoint"]["checkpoint_id"]
            forked = host.fork(older, description="the same question, read differently")["task"]
            self.assertEqual(forked["forked_from"], {"task_id": task["task_id"], "checkpoint_id": older})
            resumed = host.resume()
            self.assertEqual(resumed["task"]["task_id"], forked["task_id"])
            self.assertEqual(resumed["data"], {"step": 1})
            self.assertEqual(resumed["task"]["access_mode"], "read_only")


class OnALocalRoot(ControlPlaneScenario, unittest.TestCase):
    def setUp(self):
        require_binary()
        root = temp_root(self)
        self.target = ["--root", root]
        self.client_args = {"root": root}
        self.settings_path = os.path.join(root, ".longrun", "settings.json")


@unittest.skipIf(SQLD_SKIP, SQLD_SKIP or "")
class OnSqld(ControlPlaneScenario, unittest.TestCase):
    def setUp(self):
        require_binary()
        url = start_sqld(self)
        self.target = ["--store", url, "--project", "research"]
        self.client_args = {"store": url, "project": "research"}
        self.settings_path = os.path.join(os.environ["LONGRUN_STATE_DIR"], "settings.json")


if __name__ == "__main__":
    unittest.main()
