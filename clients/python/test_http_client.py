"""The client's methods over ``longrun http`` on 127.0.0.1 (the host and agent tokens), through the
``longrun_client`` compatibility module, against the real compiled binary (no mocks).

The binary is $LONGRUN_BIN, else ../../dist/longrun relative to this file (build: ./compile.sh).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from longrun_client import LimitExceeded, LongrunHttpClient, TransitionError, Unauthorized, WriteGateViolation  # noqa: E402

BIN = os.path.abspath(os.environ.get("LONGRUN_BIN") or os.path.join(HERE, "..", "..", "dist", "longrun"))


class HttpClientTest(unittest.TestCase):
    """The same client methods over `longrun http` on 127.0.0.1, with the host and agent tokens."""

    def setUp(self):
        if not os.access(BIN, os.X_OK):
            raise RuntimeError("no longrun binary at %s: run ./compile.sh or set LONGRUN_BIN" % BIN)
        tmp = tempfile.TemporaryDirectory(prefix="longrun-py-http-")
        self.addCleanup(tmp.cleanup)
        self.root = os.path.realpath(tmp.name)
        self.server = subprocess.Popen([BIN, "http", "--root", self.root, "--port", "0"],
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.addCleanup(self._stop)
        self.info = json.loads(self.server.stdout.readline())
        self.host = LongrunHttpClient.from_token_file(self.info["token_file"], side="host")
        self.agent = LongrunHttpClient.from_token_file(self.info["token_file"], side="agent")

    def _stop(self):
        self.server.terminate()
        self.assertEqual(self.server.wait(timeout=10), 0)
        self.server.stdout.close()

    def test_the_agent_token_cannot_grant_a_lease_and_the_host_token_can(self):
        self.agent.start_task("over http")
        with self.assertRaises(Unauthorized):
            self.agent.enable_writes("I approve myself")
        with self.assertRaises(WriteGateViolation):
            self.agent.require_writable("edit a.py")
        lease = self.host.enable_writes("the user approved")["lease"]
        self.assertEqual(lease["granted_by"], "host:http")
        self.assertIsNotNone(lease["expires_at"], "HTTP grants carry the default time to live")
        self.assertTrue(self.agent.require_writable("edit a.py")["ok"])
        self.assertFalse(self.agent.request_writes("more please")["granted"])

    def test_a_wrong_token_is_unauthorized_and_changes_nothing(self):
        bad = LongrunHttpClient(self.info["url"], "not-a-token-at-all-xxxxxxxx")
        with self.assertRaises(Unauthorized):
            bad.start_task("should not exist")
        self.assertIsNone(self.agent.status()["task"])

    def test_checkpoint_and_errors_come_back_as_the_same_exceptions_as_over_stdio(self):
        self.agent.start_task("Adapt the supplier interface")
        cp = self.agent.checkpoint("mapped", "connect supplier 2", phase="接口适配")
        self.assertIn("<!-- longrun-state:", cp["text"])
        with self.assertRaises(TransitionError):
            self.agent.finish()
        with self.assertRaises(LimitExceeded):
            self.agent.require_writable("x" * 3000)


if __name__ == "__main__":
    unittest.main()
