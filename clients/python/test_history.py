"""Checkpoint history and forgetting from Python, sync and async (issue 28): ``checkpoints`` lists a
task's checkpoints, ``get_checkpoint`` reads one, ``fork`` starts a task at an older one,
``update_memory`` versions a record, ``forget_memory`` (the host's) removes one for good and
``delete`` (the host's) removes a whole task."""
import asyncio
import unittest

from testsupport import BIN, require_binary, temp_root

from longrun import AsyncLongrunClient, LongrunClient, LongrunError


class HistoryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_binary()

    def setUp(self):
        self.root = temp_root(self)

    def test_a_fork_from_an_older_checkpoint_begins_there_without_the_lease(self):
        with LongrunClient(self.root, binary=BIN) as lr:
            parent = lr.start_task("Draft the survey")["task"]["task_id"]
            first = lr.checkpoint("outline done", "write section 1", data={"section": 1}, kind="progress")
            lr.checkpoint("section 1 done", "write section 2", data={"section": 2}, kind="progress")
            listed = lr.checkpoints()
            self.assertEqual([c["summary"] for c in listed["checkpoints"]], ["section 1 done", "outline done"])
            older = first["task"]["last_checkpoint"]["checkpoint_id"]
            self.assertEqual(lr.get_checkpoint(older)["checkpoint"]["data"], {"section": 1})
            forked = lr.fork(older, description="Draft the survey, another outline")
            self.assertEqual(forked["task"]["forked_from"], {"task_id": parent, "checkpoint_id": older})
            self.assertEqual(forked["task"]["next_step"], "write section 1")
            self.assertEqual(forked["data"], {"section": 1})
            self.assertEqual(forked["task"]["access_mode"], "read_only")
            self.assertEqual(forked["previous_task"], parent)

    def test_the_async_client_updates_and_forgets_a_memory(self):
        async def main():
            async with AsyncLongrunClient(self.root, binary=BIN) as lr:
                await lr.start_task("Remember the user's address, then forget it")
                saved = await lr.save_memory("note", "address", "the user lives at 12 zanzibar road")
                newer = await lr.update_memory(saved["id"], "the user lives at 14 zanzibar road")
                hits = (await lr.search_memory("zanzibar"))["hits"]
                forgot = await lr.forget_memory([newer["id"], saved["id"]], reason="the user asked")
                after = (await lr.search_memory("zanzibar"))["hits"]
                return saved, newer, hits, forgot, after

        saved, newer, hits, forgot, after = asyncio.run(main())
        self.assertEqual(newer["supersedes"], saved["id"])
        self.assertEqual([h["id"] for h in hits], [newer["id"]], "search shows the newest version only")
        self.assertEqual(sorted(forgot["forgotten"]), sorted([newer["id"], saved["id"]]))
        self.assertEqual(after, [])


    def test_forgetting_by_query_previews_then_forgets_what_search_finds(self):
        with LongrunClient(self.root, binary=BIN) as lr:
            lr.start_task("Forget everything about the trip")
            ids = [lr.save_memory("note", "trip %d" % i, "the okinawa trip, day %d" % i)["id"] for i in range(3)]
            kept = lr.save_memory("note", "work", "the quarterly report")["id"]
            preview = lr.forget_memory(query="okinawa", dry_run=True)
            self.assertEqual((sorted(preview["matched"]), preview["forgotten"]), (sorted(ids), []))
            forgot = lr.forget_memory(query="okinawa", reason="the user asked")
            self.assertEqual(sorted(forgot["forgotten"]), sorted(ids))
            self.assertEqual(lr.search_memory("okinawa")["hits"], [])
            self.assertEqual(lr.get_memory(kept)["record"]["content"], "the quarterly report")

    def test_the_host_deletes_an_old_task_sync_and_async_and_the_current_one_is_refused(self):
        with LongrunClient(self.root, binary=BIN) as lr:
            old = lr.start_task("Plan the trip to the coast")["task"]["task_id"]
            lr.checkpoint("booked the kestrelbay hotel", "book the train")
            current = lr.start_task("Something else")["task"]["task_id"]
            with self.assertRaises(LongrunError) as refused:
                lr.delete(current)
            self.assertEqual(refused.exception.data["reason"], "current_task")
            out = lr.delete(old, reason="the user asked")
            self.assertEqual((out["deleted"], out["already"], len(out["memories_forgotten"])), (True, False, 1))
            self.assertEqual(lr.search_memory("kestrelbay")["hits"], [])
            self.assertNotIn(old, [t["task_id"] for t in lr.list_tasks()["tasks"]])

        async def again():
            async with AsyncLongrunClient(self.root, binary=BIN) as lr:
                return await lr.delete(old)

        self.assertTrue(asyncio.run(again())["already"])

if __name__ == "__main__":
    unittest.main()
