"""Owner liveness and timed wakes from Python, sync and async (issue 28): ``heartbeat_run`` answers
what the owner must stop for, ``park_run(wake_at=…)`` is woken by the running server at its time,
and ``owner_ttl_seconds`` makes a run whose owner stopped beating show ``stale_owner``."""
import asyncio
import datetime
import unittest

from testsupport import BIN, require_binary, temp_root, until

from longrun import AsyncLongrunClient, LongrunClient


def soon(seconds: float) -> str:
    return (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)).isoformat()


class LivenessTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_binary()

    def setUp(self):
        self.root = temp_root(self)

    def test_a_run_parked_with_wake_at_is_woken_and_a_silent_owner_goes_stale(self):
        with LongrunClient(self.root, binary=BIN) as lr:
            lr.start_task("Check the filing again in a moment")
            run = lr.start_run(owner="worker-1", tools=["fetch"], owner_ttl_seconds=1)["run"]
            rid = run["run_id"]
            self.assertIsNone(lr.heartbeat_run(rid, 1)["stop"])
            lr.park_run(rid, 1, "the filing's next version", wake_at=soon(1))
            woken = until(lambda: (lambda r: r if r["run"]["status"] == "running" else None)(lr.get_run(rid)), "the wake")
            self.assertEqual([e["detail"]["reason"] for e in woken["events"] if e["kind"] == "woken"], ["wake_at"])
            stale = until(lambda: (lambda r: r if r["run"]["stale_owner"] else None)(lr.get_run(rid)), "stale_owner")
            self.assertIsNotNone(stale["run"]["stale_since"])
            lr.cancel_run(rid, "the user stopped it")
            self.assertEqual(lr.heartbeat_run(rid, 1)["stop"], "cancelled")

    def test_the_async_client_beats_and_is_told_it_was_superseded(self):
        async def main():
            async with AsyncLongrunClient(self.root, binary=BIN) as lr:
                await lr.start_task("A run taken over")
                rid = (await lr.start_run(owner="worker-1", owner_ttl_seconds=60))["run"]["run_id"]
                first = await lr.heartbeat_run(rid, 1)
                await lr.claim_run(rid, "worker-2", owner_ttl_seconds=30)
                return first, await lr.heartbeat_run(rid, 1), (await lr.get_run(rid))["run"]

        first, old, run = asyncio.run(asyncio.wait_for(main(), 120))
        self.assertIsNone(first["stop"])
        self.assertEqual(old["stop"], "superseded")
        self.assertEqual((run["owner"], run["epoch"], run["owner_ttl_seconds"]), ("worker-2", 2, 30))


if __name__ == "__main__":
    unittest.main()
