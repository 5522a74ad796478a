"""A root on a libSQL server from Python: ``LongrunClient(store=…, project=…)`` and the async client
start ``longrun serve --store … --project …`` against a real sqld (tools/sqld, scripts/sqld.sh)."""
import asyncio
import unittest

from testsupport import BIN, REPO, SQLD_SKIP, require_binary, start_sqld

from longrun import AsyncLongrunClient, LongrunClient, LongrunError


@unittest.skipIf(SQLD_SKIP, SQLD_SKIP or "")
class ServerStoreTest(unittest.TestCase):
    def setUp(self):
        require_binary()
        self.url = start_sqld(self)

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
