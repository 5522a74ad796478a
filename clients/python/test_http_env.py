"""The HTTP client against a server given its tokens by environment (a container): the real binary.

Run from the repository root: `python3 -m unittest discover -s clients/python -v`.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from longrun_client import LongrunError, LongrunHttpClient, Unauthorized  # noqa: E402

BIN = os.path.abspath(os.environ.get("LONGRUN_BIN") or os.path.join(HERE, "..", "..", "dist", "longrun"))
HOST_TOKEN = "host-token-from-env-0123456789"
AGENT_TOKEN = "agent-token-from-env-0123456789"


class HttpEnvTokensTest(unittest.TestCase):
    def setUp(self):
        if not os.access(BIN, os.X_OK):
            raise RuntimeError("no longrun binary at %s: run ./compile.sh or set LONGRUN_BIN" % BIN)
        tmp = tempfile.TemporaryDirectory(prefix="longrun-py-env-")
        self.addCleanup(tmp.cleanup)
        self.root = os.path.realpath(tmp.name)
        env = dict(os.environ, LONGRUN_ROOT=self.root, LONGRUN_PORT="0",
                   LONGRUN_HOST_TOKEN=HOST_TOKEN, LONGRUN_AGENT_TOKEN=AGENT_TOKEN)
        self.server = subprocess.Popen([BIN, "http"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.addCleanup(self._stop)
        self.info = json.loads(self.server.stdout.readline())

    def _stop(self):
        self.server.terminate()
        self.assertEqual(self.server.wait(timeout=10), 0)
        self.server.stdout.close()
        with open(self.info["token_file"], encoding="utf-8") as f:
            self.assertNotIn("pid", json.load(f), "http.json stays on a clean exit (its tokens are the next start's), without the pid")

    def test_the_token_file_holds_no_token_and_from_env_speaks_for_each_side(self):
        self.assertEqual(self.info["tokens"], "environment")
        with open(self.info["token_file"], encoding="utf-8") as f:
            text = f.read()
        self.assertNotIn(HOST_TOKEN, text)
        self.assertNotIn(AGENT_TOKEN, text)
        with mock.patch.dict(os.environ, {"LONGRUN_URL": self.info["url"], "LONGRUN_HOST_TOKEN": HOST_TOKEN,
                                          "LONGRUN_AGENT_TOKEN": AGENT_TOKEN}):
            agent = LongrunHttpClient.from_env()  # the agent side by default
            host = LongrunHttpClient.from_env(side="host")
        agent.start_task("from the environment")
        with self.assertRaises(Unauthorized):
            agent.enable_writes("I approve myself")
        self.assertEqual(host.enable_writes("the user approved")["lease"]["granted_by"], "host:http")
        self.assertTrue(agent.require_writable("edit a.py")["ok"])

    def test_an_agents_run_is_a_request_the_host_grants_narrowed_and_the_host_answers_a_park_for_the_user(self):
        agent = LongrunHttpClient(self.info["url"], AGENT_TOKEN)
        host = LongrunHttpClient(self.info["url"], HOST_TOKEN)
        agent.start_task("compare the funds")
        run = agent.start_run("w1", tools=["fetch", "shell"], sources=["*"], send=["provider-a"], budget={})["run"]
        self.assertEqual((run["status"], run["grant"]["requested_by"]), ("requested", "agent:http"))
        with self.assertRaises(Unauthorized) as refused:
            agent.begin_receipt(run["run_id"], 1, "fetch", "k1", args={})
        self.assertEqual(refused.exception.data["reason"], "run_not_granted")
        with self.assertRaises(Unauthorized):
            agent.grant_run(run["run_id"], "I approve myself")
        granted = host.grant_run(run["run_id"], "fetch only", tools=["fetch"], budget={"tool_calls": 3})["run"]
        self.assertEqual((granted["status"], granted["authorization"]["tools"], granted["grant"]["decided_by"]), ("running", ["fetch"], "host:http"))
        self.assertFalse(agent.begin_receipt(run["run_id"], 1, "fetch", "k1", args={}, send_to="provider-a")["replayed"])
        agent.park_run(run["run_id"], 1, "which fund is the baseline", for_user=True)
        with self.assertRaises(Unauthorized):
            agent.wake_run(run["run_id"], 1)
        host.wake_run(run["run_id"], answer={"text": "fund A", "data": {"baseline": "A"}})
        self.assertEqual(agent.get_run(run["run_id"])["run"]["answer"]["data"], {"baseline": "A"})
        agent.finish_run(run["run_id"], 1, "stop")
        child = agent.continue_run(run["run_id"], "w1", {})["run"]
        self.assertEqual(host.refuse_run(child["run_id"], "enough")["run"]["status"], "refused")

    def test_a_tasks_own_terms_are_the_hosts_and_bound_its_runs(self):
        agent = LongrunHttpClient(self.info["url"], AGENT_TOKEN)
        host = LongrunHttpClient(self.info["url"], HOST_TOKEN)
        with self.assertRaises(Unauthorized):
            agent.start_task("compare the funds", constraints=["no paid sources"])
        started = host.start_task("compare the funds", constraints=["no paid sources"], desired_outcome="one page",
                                  bounds={"tools": ["fetch"], "budget": {"cost": 2}})
        self.assertEqual(started["terms"]["desired_outcome"], "one page")
        with self.assertRaises(Unauthorized) as wider:
            agent.start_run("w", tools=["fetch"], budget={"cost": 5})
        self.assertEqual(wider.exception.data["reason"], "wider_than_task_terms")
        run = agent.start_run("w", tools=["fetch"], budget={"cost": 1})["run"]
        self.assertEqual(agent.get_run(run["run_id"])["constraints"], ["no paid sources"])

    def test_from_token_file_reads_the_token_from_the_variable_the_file_names(self):
        with mock.patch.dict(os.environ, {"LONGRUN_AGENT_TOKEN": AGENT_TOKEN}):
            agent = LongrunHttpClient.from_token_file(self.info["token_file"], side="agent")
        self.assertIsNone(agent.status()["task"])
        with mock.patch.dict(os.environ, {}, clear=True):
            with self.assertRaises(LongrunError) as e:
                LongrunHttpClient.from_token_file(self.info["token_file"], side="agent")
        self.assertEqual(e.exception.kind, "config")
        self.assertIn("LONGRUN_AGENT_TOKEN", str(e.exception))

    def test_from_token_file_reads_the_token_from_the_file_the_server_read(self):
        tmp = tempfile.TemporaryDirectory(prefix="longrun-py-files-")
        self.addCleanup(tmp.cleanup)
        root = os.path.realpath(tmp.name)
        files = {}
        for side, token in (("host", "host-token-from-a-file-0123456789"), ("agent", "agent-token-from-a-file-0123456789")):
            files[side] = os.path.join(root, "%s.token" % side)
            with open(files[side], "w", encoding="utf-8") as f:
                f.write(token + "\n")  # as a secret is mounted: with a line end
        env = {k: v for k, v in os.environ.items() if not k.startswith("LONGRUN_")}
        env.update(LONGRUN_ROOT=root, LONGRUN_PORT="0", LONGRUN_HOST_TOKEN_FILE=files["host"], LONGRUN_AGENT_TOKEN_FILE=files["agent"])
        server = subprocess.Popen([BIN, "http"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            info = json.loads(server.stdout.readline())
            with mock.patch.dict(os.environ, {}, clear=True):  # nothing from the environment: the files only
                agent = LongrunHttpClient.from_token_file(info["token_file"], side="agent")
                host = LongrunHttpClient.from_token_file(info["token_file"], side="host")
            agent.start_task("tokens from files")
            with self.assertRaises(Unauthorized):
                agent.enable_writes("I approve myself")
            self.assertEqual(host.enable_writes("the user approved")["lease"]["granted_by"], "host:http")
            os.unlink(files["agent"])
            with self.assertRaises(LongrunError) as e:
                LongrunHttpClient.from_token_file(info["token_file"], side="agent")
            self.assertEqual(e.exception.kind, "config")
            self.assertIn(files["agent"], str(e.exception))
        finally:
            server.terminate()
            server.wait(timeout=10)
            server.stdout.close()

    def test_from_env_names_what_is_missing(self):
        with mock.patch.dict(os.environ, {}, clear=True):
            with self.assertRaises(LongrunError) as e:
                LongrunHttpClient.from_env(side="host")
        self.assertEqual(e.exception.data["variables"], ["LONGRUN_URL", "LONGRUN_HOST_TOKEN"])
        with self.assertRaises(ValueError):
            LongrunHttpClient.from_env(side="admin", url=self.info["url"])


if __name__ == "__main__":
    unittest.main()
