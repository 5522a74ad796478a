"""Gaps with identity from Python (issue 28): a run's gaps get ids, a draft shows what it does not
yet cover, a later version closes a gap it covers, ``list_gaps`` shows each one's history, and only
the host closes one without an artifact."""
import asyncio
import unittest

from testsupport import BIN, require_binary, temp_root

from longrun import AsyncLongrunClient, LongrunClient, LongrunError


class GapsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_binary()

    def setUp(self):
        self.root = temp_root(self)

    def test_gaps_move_from_open_to_closed_across_runs_and_versions(self):
        with LongrunClient(self.root, binary=BIN) as lr:
            lr.start_task("Survey the pension funds")
            run = lr.start_run("lead", tools=["fetch"])["run"]
            v1 = lr.put_artifact("survey", "draft", "funds A and B", run_id=run["run_id"], epoch=1, gaps=["fund C's fees"])["artifact"]
            self.assertEqual([g["text"] for g in v1["gaps"]["open"]], ["fund C's fees"])
            ended = lr.finish_run(run["run_id"], 1, "window exhausted", gaps=["fund C's fees", "2025 data"])
            self.assertEqual(ended["gaps"][0]["gap_id"], v1["gaps"]["open"][0]["gap_id"], "the same gap, not a second one")
            fees = ended["gaps"][0]["gap_id"]
            v2 = lr.put_artifact("survey", "full", "funds A, B and C", closes=[fees])["artifact"]
            self.assertEqual([g["gap_id"] for g in v2["gaps"]["closed_here"]], [fees])
            closed = [g for g in lr.list_gaps()["gaps"] if g["gap_id"] == fees][0]
            self.assertEqual((closed["status"], closed["closed"]["artifact"]), ("closed", {"name": "survey", "version": 2}))
            other = ended["gaps"][1]["gap_id"]

        async def host_closes():
            async with AsyncLongrunClient(self.root, binary=BIN) as lr:
                out = await lr.close_gap(other, "the user does not need 2025")
                return out, (await lr.list_gaps(status="open"))["gaps"]

        out, still_open = asyncio.run(host_closes())
        self.assertEqual((out["gap"]["status"], out["gap"]["closed"]["note"]), ("closed", "the user does not need 2025"))
        self.assertEqual(still_open, [])
        with LongrunClient(self.root, binary=BIN) as lr:
            with self.assertRaises(LongrunError) as refused:
                lr.close_gap(other, "again")
            self.assertEqual(refused.exception.data["reason"], "gap_closed")


if __name__ == "__main__":
    unittest.main()
