"""Child runs from Python, sync and async (issue 28): ``start_child_run`` takes a slice of the parent's
budget (reserved in the parent while the child is open, rolled up once spent) and never more than the
parent has left; cancelling the parent cancels the child."""
import asyncio
import unittest

from testsupport import BIN, require_binary, temp_root

from longrun import AsyncLongrunClient, LongrunClient, LongrunError


class ChildRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_binary()

    def setUp(self):
        self.root = temp_root(self)

    def test_a_child_holds_a_slice_of_the_parent_and_its_spend_rolls_up(self):
        with LongrunClient(self.root, binary=BIN) as lr:
            lr.start_task("Survey the funds with two sub-agents")
            parent = lr.start_run(owner="lead", tools=["fetch", "web_search"], budget={"requests": 10})["run"]
            pid = parent["run_id"]
            child = lr.start_child_run(pid, 1, "sub-1", {"requests": 6}, tools=["fetch"], reason="the 2024 reports")["run"]
            self.assertEqual((child["child_of"], child["authorization"]["tools"]), (pid, ["fetch"]))
            lr.charge(child["run_id"], 1, requests=2)
            budget = lr.budget_status(pid)["budget"]
            self.assertEqual((budget["spent"]["requests"], budget["reserved"]["requests"], budget["remaining"]["requests"]), (2, 4, 4))
            with self.assertRaises(LongrunError) as refused:
                lr.start_child_run(pid, 1, "sub-2", {"requests": 5})
            self.assertEqual(refused.exception.kind, "limit_exceeded")
            lr.cancel_run(pid, "the user stopped it")
            self.assertEqual(lr.get_run(child["run_id"])["run"]["status"], "cancelled")
            self.assertEqual([c["spent"]["requests"] for c in lr.get_run(pid)["children"]], [2])

    def test_the_async_client_starts_a_child(self):
        async def main():
            async with AsyncLongrunClient(self.root, binary=BIN) as lr:
                await lr.start_task("One sub-agent")
                pid = (await lr.start_run(owner="lead", tools=["fetch"], budget={"tool_calls": 3}))["run"]["run_id"]
                child = (await lr.start_child_run(pid, 1, "sub", {"tool_calls": 2}))["run"]
                await lr.finish_run(child["run_id"], 1, "done")
                return (await lr.budget_status(pid))["budget"]

        budget = asyncio.run(asyncio.wait_for(main(), 120))
        self.assertEqual((budget["reserved"]["tool_calls"], budget["remaining"]["tool_calls"]), (0, 3))


if __name__ == "__main__":
    unittest.main()
