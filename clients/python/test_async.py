"""The asyncio clients: the same methods, many requests at once matched by id, cancellation and
timeouts (the late answer dropped), a dying child, restarts, the start check, and HTTP."""
import asyncio
import inspect
import json
import logging
import os
import subprocess
import unittest
from unittest import mock

from testsupport import BIN, fake_server, require_binary, temp_root

from longrun import (
    AsyncContractMethods, AsyncLongrunClient, AsyncLongrunHttpClient, ContractMethods, IncompatibleServer, LongrunClient,
    RequestTimeout, ServerExited, Unauthorized, WriteGateViolation,
)


class SameMethodsTest(unittest.TestCase):
    def test_the_async_clients_have_every_method_of_the_sync_ones_with_the_same_params(self):
        def public(cls):  # inherited too: the classes are built from one generated class per area
            return {n: getattr(cls, n) for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))}

        sync, aio = public(ContractMethods), public(AsyncContractMethods)
        self.assertEqual(set(sync), set(aio))
        self.assertGreaterEqual(len(sync), 45)
        for name in sync:
            self.assertEqual(list(inspect.signature(sync[name]).parameters), list(inspect.signature(aio[name]).parameters), name)
            self.assertTrue(inspect.iscoroutinefunction(aio[name]), name)
        for extra in ("call", "effect", "restart", "process", "stderr_tail"):
            self.assertTrue(hasattr(LongrunClient, extra) and hasattr(AsyncLongrunClient, extra), extra)


class AsyncRealServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_binary()

    def setUp(self):
        self.root = temp_root(self)

    def run_async(self, coro):
        return asyncio.run(asyncio.wait_for(coro, 120))

    def test_1000_concurrent_requests_each_get_their_own_answer(self):
        async def main():
            async with AsyncLongrunClient(self.root, binary=BIN) as lr:
                await lr.start_task("many requests at once")
                ids = [(await lr.save_memory("note", "n%d" % i, "body %d" % i))["id"] for i in range(10)]

                async def one(i):
                    if i % 3 == 0:
                        return ("get", ids[i % 10], (await lr.get_memory(ids[i % 10]))["record"]["id"])
                    if i % 3 == 1:
                        return ("search", "n%d" % (i % 10), [h["title"] for h in (await lr.search_memory("n%d" % (i % 10)))["hits"]])
                    return ("status", None, (await lr.status())["task"]["description"])

                answers = await asyncio.gather(*(one(i) for i in range(1000)))
                return answers, lr.dropped_answers

        answers, dropped = self.run_async(main())
        self.assertEqual(len(answers), 1000)
        for kind, want, got in answers:
            if kind == "get":
                self.assertEqual(got, want)
            elif kind == "search":
                self.assertIn(want, got)
            else:
                self.assertEqual(got, "many requests at once")
        self.assertEqual(dropped, 0)

    def test_checkpoints_progress_data_and_an_effect(self):
        async def main():
            async with AsyncLongrunClient(self.root, binary=BIN) as lr:
                await lr.start_task("async loop")
                with self.assertRaises(WriteGateViolation):
                    await lr.require_writable("edit a.py")
                await lr.enable_writes("approved")
                cp = await lr.progress("step 2", "step 3", data={"step": 2})
                self.assertEqual(cp["task"]["access_mode"], "writable")
                run = (await lr.start_run("w", tools=["fetch"]))["run"]
                async with lr.effect(run["run_id"], run["epoch"], "fetch", "k", {"a": 1}) as r:
                    r.result_ref = (await lr.put_context("a", "body"))["ref"]
                self.assertEqual(r.settled["status"], "completed")
                with self.assertLogs("longrun", "WARNING"):
                    with self.assertRaises(asyncio.CancelledError):
                        async with lr.effect(run["run_id"], run["epoch"], "fetch", "cancelled", {"a": 2}):
                            raise asyncio.CancelledError()
                statuses = {x["idempotency_key"]: x["status"] for x in (await lr.list_receipts(run["run_id"]))["receipts"]}
                self.assertEqual(statuses, {"k": "completed", "cancelled": "begun"})
            async with AsyncLongrunClient(self.root, binary=BIN) as again:
                return (await again.resume())["data"]

        self.assertEqual(self.run_async(main()), {"step": 2})

    def test_a_killed_child_is_server_exited_and_a_restart_policy_brings_a_new_one(self):
        async def main():
            async with AsyncLongrunClient(self.root, binary=BIN, restarts=1) as lr:
                await lr.start_task("t")
                await lr.enable_writes("approved in turn 1")
                lr.process.kill()
                await lr.process.wait()
                with self.assertLogs("longrun", "WARNING"):
                    gate = await lr.require_writable("edit")  # a new child, the same root: not a new turn
                return gate["turn"], lr.restart_count

        self.assertEqual(self.run_async(main()), (1, 1))


class AsyncPlumbingTest(unittest.TestCase):
    """On the fake server: what has to happen on cue."""

    def setUp(self):
        self.root = temp_root(self)
        self.fake = fake_server(self)

    def run_async(self, coro):
        return asyncio.run(asyncio.wait_for(coro, 60))

    def test_a_cancelled_request_stops_waiting_and_its_late_answer_is_dropped(self):
        async def main():
            async with AsyncLongrunClient(self.root, binary=self.fake, check=False) as lr:
                held = asyncio.ensure_future(lr.call("test.hold"))
                await asyncio.sleep(0.2)  # written and waiting in the server
                held.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await held
                released = await lr.call("test.release")  # the server answers the held one first: dropped
                echo = await lr.call("test.echo", still="fine")
                return released, echo, lr.dropped_answers

        self.assertEqual(self.run_async(main()), ({"released": 1}, {"still": "fine"}, 1))

    def test_a_timeout_raises_request_timeout_and_drops_the_late_answer(self):
        async def main():
            async with AsyncLongrunClient(self.root, binary=self.fake, check=False, timeout=0.3) as lr:
                with self.assertRaises(RequestTimeout):
                    await lr.call("test.hold")
                return await lr.call("test.release"), lr.dropped_answers

        self.assertEqual(self.run_async(main()), ({"released": 1}, 1))

    def test_requests_in_flight_when_the_child_dies_raise_server_exited(self):
        async def main():
            async with AsyncLongrunClient(self.root, binary=self.fake, check=False) as lr:
                held = [asyncio.ensure_future(lr.call("test.hold")) for _ in range(5)]
                await asyncio.sleep(0.1)
                with self.assertLogs("longrun.server", "WARNING"):
                    died = await asyncio.gather(lr.call("test.die"), return_exceptions=True)
                results = await asyncio.gather(*held, return_exceptions=True)
                return died + results

        for e in self.run_async(main()):
            self.assertIsInstance(e, ServerExited)
            self.assertEqual(e.returncode, 3)

    def test_stderr_lines_go_to_logging(self):
        async def main():
            async with AsyncLongrunClient(self.root, binary=self.fake, check=False, stderr_level=logging.INFO) as lr:
                with self.assertLogs("longrun.server", "INFO") as logs:
                    await lr.call("test.log", lines=["from the child"])
                    for _ in range(100):
                        if logs.records:
                            break
                        await asyncio.sleep(0.02)
                return [r.getMessage() for r in logs.records]

        self.assertEqual(self.run_async(main()), ["from the child"])

    def test_an_incompatible_server_is_refused_at_start(self):
        async def main():
            with mock.patch.dict(os.environ, {"FAKE_PROTOCOL": "2.1"}):
                with self.assertRaises(IncompatibleServer):
                    async with AsyncLongrunClient(self.root, binary=self.fake):
                        pass

        self.run_async(main())


class AsyncHttpTest(unittest.TestCase):
    def setUp(self):
        require_binary()
        self.root = temp_root(self, "longrun-py-ahttp-")
        self.server = subprocess.Popen([BIN, "http", "--root", self.root, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.addCleanup(self._stop)
        self.info = json.loads(self.server.stdout.readline())

    def _stop(self):
        self.server.terminate()
        self.server.wait(timeout=10)
        self.server.stdout.close()

    def test_host_and_agent_sides_and_concurrent_calls(self):
        async def main():
            agent = AsyncLongrunHttpClient.from_token_file(self.info["token_file"], side="agent")
            host = AsyncLongrunHttpClient.from_token_file(self.info["token_file"], side="host")
            async with agent, host:
                await agent.start_task("over http, awaited")
                with self.assertRaises(Unauthorized):
                    await agent.enable_writes("I approve myself")
                await host.enable_writes("the user approved")
                gates = await asyncio.gather(*(agent.require_writable("edit f%d.py" % i) for i in range(20)))
                await agent.progress("s", "n", data={"step": 1})
                return [g["ok"] for g in gates], (await agent.resume())["data"]

        oks, data = asyncio.run(asyncio.wait_for(main(), 60))
        self.assertEqual(oks, [True] * 20)
        self.assertEqual(data, {"step": 1})


if __name__ == "__main__":
    unittest.main()
