"""Behaviour tests of the client against the real compiled binary (no mocks), through the
``longrun_client`` compatibility module: what earlier code imported keeps working.

Run from the repository root: `python3 -m unittest discover -s clients/python -v`.
The binary is $LONGRUN_BIN, else ../../dist/longrun relative to this file (build: ./compile.sh).
"""
import json
import sqlite3
from contextlib import closing
import os
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from longrun_client import (  # noqa: E402
    ConflictError, InvalidParams, StorageError, LimitExceeded, LongrunClient, LongrunError, NoActiveTask,
    NotFound, ProtocolError, ServerExited, StateCorruptError, TransitionError, WriteGateViolation,
)

BIN = os.path.abspath(os.environ.get("LONGRUN_BIN") or os.path.join(HERE, "..", "..", "dist", "longrun"))


class ClientTest(unittest.TestCase):
    """Each test gets a fresh temp root and a client on it (closed afterwards)."""

    @classmethod
    def setUpClass(cls):
        if not os.access(BIN, os.X_OK):
            raise RuntimeError("no longrun binary at %s: run ./compile.sh or set LONGRUN_BIN" % BIN)

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="longrun-py-")
        self.addCleanup(tmp.cleanup)
        self.root = os.path.realpath(tmp.name)
        self.lr = self.client()

    def client(self):
        c = LongrunClient(self.root, binary=BIN, timeout=20)
        self.addCleanup(c.close)
        return c

    def db_path(self):
        return os.path.join(self.root, "memory.db")

    def _sql(self, sql, args=()):
        """Runs one statement on the root's memory.db, where the task state lives."""
        with closing(sqlite3.connect(self.db_path(), timeout=10)) as db, db:
            return db.execute(sql, args).fetchall()

    def read_state(self):
        rows = self._sql("SELECT t.state FROM root_meta m JOIN tasks t ON t.task_id = m.value WHERE m.key = 'current_task'")
        return json.loads(rows[0][0])

    def write_state(self, state):
        self._sql("UPDATE tasks SET state = ?, version = ? WHERE task_id = ?", (json.dumps(state), state["version"], state["task_id"]))


class GateTest(ClientTest):
    def test_new_task_refuses_writes_read_only_in_turn_1(self):
        started = self.lr.start_task("Adapt the supplier interface")
        self.assertEqual(started["task"]["access_mode"], "read_only")
        with self.assertRaises(WriteGateViolation) as cm:
            self.lr.require_writable("edit adapters/xometry.py")
        e = cm.exception
        self.assertEqual((e.code, e.kind, e.reason, e.turn, e.lease_turn), (-32001, "write_gate_violation", "read_only", 1, None))
        self.assertIn("edit adapters/xometry.py", e.message)
        self.assertIsInstance(e, LongrunError)

    def test_lease_granted_in_this_turn_allows_write_and_records_host_stdio(self):
        self.lr.start_task("Adapt the supplier interface")
        granted = self.lr.enable_writes("plan approved")
        self.assertEqual(granted["lease"]["granted_by"], "host:stdio")
        ok = self.lr.require_writable("edit adapters/xometry.py")
        self.assertTrue(ok["ok"])
        self.assertEqual(ok["turn"], 1)
        self.assertEqual(ok["lease"]["reason"], "plan approved")

    def test_begin_turn_ends_the_lease(self):
        self.lr.start_task("Adapt the supplier interface")
        self.lr.enable_writes("plan approved")
        self.assertEqual(self.lr.begin_turn("next user message")["task"]["turn_index"], 2)
        with self.assertRaises(WriteGateViolation) as cm:
            self.lr.require_writable("edit adapters/xometry.py")
        self.assertEqual(cm.exception.turn, 2)
        self.assertIsNone(self.lr.status()["task"]["write_lease_turn"])

    def test_writable_state_from_an_earlier_turn_is_refused_as_stale_and_revoked(self):
        self.lr.start_task("Adapt the supplier interface")
        self.lr.enable_writes("plan approved")
        state = self.read_state()
        state["turn_index"] = 2  # the mode still says writable; the lease is of turn 1
        state["version"] += 1
        self.write_state(state)
        with self.assertRaises(WriteGateViolation) as cm:
            self.lr.require_writable("edit adapters/xometry.py")
        self.assertEqual((cm.exception.reason, cm.exception.lease_turn, cm.exception.turn), ("stale_lease", 1, 2))
        self.assertEqual(self.lr.status()["task"]["access_mode"], "read_only")

    def test_scoped_lease_refuses_an_action_outside_it(self):
        self.lr.start_task("Adapt the supplier interface")
        self.lr.enable_writes("only adapters", scope=["adapters/**"])
        self.assertTrue(self.lr.require_writable("adapters/xometry.py")["ok"])
        with self.assertRaises(WriteGateViolation) as cm:
            self.lr.require_writable("auth/login.py")
        self.assertEqual(cm.exception.reason, "out_of_scope")

    def test_request_writes_is_recorded_but_never_grants(self):
        self.lr.start_task("Adapt the supplier interface")
        asked = self.lr.request_writes("need to edit the adapter")
        self.assertEqual((asked["requested"], asked["granted"]), (True, False))
        with self.assertRaises(WriteGateViolation):
            self.lr.require_writable("edit adapters/xometry.py")

    def test_gate_check_without_a_task_raises_no_active_task(self):
        self.assertIsNone(self.lr.status()["task"])
        with self.assertRaises(NoActiveTask) as cm:
            self.lr.require_writable("edit anything")
        self.assertEqual(cm.exception.code, -32005)


class CheckpointResumeTest(ClientTest):
    def test_checkpoint_text_carries_machine_line_and_memory_holds_the_same_text(self):
        self.lr.start_task("Adapt the supplier interface")
        self.lr.enable_writes("plan approved")
        cp = self.lr.checkpoint("adapter 1 done", "add supplier 2", phase="阶段：接口适配", kind="context_full")
        self.assertIn("<!-- longrun-state:", cp["text"])
        self.assertEqual(cp["task"]["status"], "paused")
        self.assertEqual(cp["task"]["access_mode"], "read_only")
        record = self.lr.get_memory(cp["memory_id"])["record"]
        self.assertEqual(record["id"], cp["memory_id"])
        self.assertEqual(record["content"], cp["text"])

    def test_second_client_on_same_root_resumes_read_only_in_turn_2_and_is_refused(self):
        self.lr.start_task("Adapt the supplier interface")
        self.lr.enable_writes("plan approved")
        self.lr.checkpoint("adapter 1 done", "add supplier 2")
        self.lr.close()
        second = self.client()
        resumed = second.resume()
        self.assertEqual(resumed["task"]["turn_index"], 2)
        self.assertEqual(resumed["task"]["access_mode"], "read_only")
        self.assertEqual(resumed["task"]["status"], "in_progress")
        with self.assertRaises(WriteGateViolation) as cm:
            second.require_writable("edit adapters/second.py")
        self.assertEqual((cm.exception.reason, cm.exception.turn), ("read_only", 2))
        second.enable_writes("re-approved")
        self.assertTrue(second.require_writable("edit adapters/second.py")["ok"])
        self.assertEqual(second.finish("done")["task"]["status"], "completed")

    def test_recover_from_memory_rebuilds_the_task_after_state_is_lost(self):
        task_id = self.lr.start_task("Adapt the supplier interface")["task"]["task_id"]
        self.lr.checkpoint("adapter 1 done", "add supplier 2")
        self._sql("DELETE FROM tasks")  # the task state is lost; memory stays
        self._sql("DELETE FROM root_meta WHERE key = 'current_task'")
        recovered = self.lr.recover_from_memory()
        self.assertEqual(recovered["task"]["task_id"], task_id)
        self.assertEqual(recovered["task"]["next_step"], "add supplier 2")
        self.assertEqual(recovered["task"]["access_mode"], "read_only")


class TransitionTest(ClientTest):
    def test_illegal_transition_raises_transition_error_with_from_and_to(self):
        self.lr.start_task("Adapt the supplier interface")
        self.lr.transition("blocked", "waiting on supplier API keys")
        with self.assertRaises(TransitionError) as cm:
            self.lr.transition("completed", "skip ahead")
        e = cm.exception
        self.assertEqual((e.code, e.data["from"], e.data["to"]), (-32002, "blocked", "completed"))
        self.assertEqual((e.from_, e.to), ("blocked", "completed"))
        self.assertEqual(sorted(e.allowed), ["failed", "in_progress"])

    def test_finish_from_paused_raises_transition_error(self):
        self.lr.start_task("Adapt the supplier interface")
        self.lr.checkpoint("halfway", "continue")
        with self.assertRaises(TransitionError) as cm:
            self.lr.finish()
        self.assertEqual((cm.exception.from_, cm.exception.to), ("paused", "completed"))

    def test_second_start_while_a_task_is_open_makes_it_current_and_the_first_goes_on(self):
        first = self.lr.start_task("first")["task"]
        self.lr.call("writes.enable", reason="plan approved")
        second = self.lr.start_task("second")
        self.assertEqual(second["previous_task"], first["task_id"])
        tasks = {t["task_id"]: t for t in self.lr.call("task.list")["tasks"]}
        self.assertEqual(tasks[first["task_id"]]["status"], "in_progress")
        self.assertFalse(tasks[first["task_id"]]["current"])
        self.assertTrue(tasks[second["task"]["task_id"]]["current"])
        with self.assertRaises(WriteGateViolation):  # the first task's lease did not move
            self.lr.require_writable("write")

    def test_corrupt_state_raises_state_corrupt_naming_where_it_is(self):
        self.lr.start_task("Adapt the supplier interface")
        self._sql("UPDATE tasks SET state = ?", ("{ not json",))
        with self.assertRaises(StateCorruptError) as cm:
            self.lr.status()
        self.assertEqual(cm.exception.code, -32004)
        self.assertIn(os.path.realpath(self.db_path()), cm.exception.path)
        with self.assertRaises(StateCorruptError):  # never "no task": start must not overwrite it
            self.lr.start_task("a new task on top")


class MemoryTest(ClientTest):
    def test_search_finds_a_chinese_word_inside_a_phrase(self):
        saved = self.lr.save_memory("note", "checkpoint", "阶段：接口适配", keywords=["supplier"])
        self.lr.save_memory("note", "other", "unrelated text about deployment")
        hits = self.lr.search_memory("接口")["hits"]
        self.assertEqual([h["id"] for h in hits], [saved["id"]])

    def test_search_finds_a_korean_word_followed_by_a_particle(self):
        saved = self.lr.save_memory("note", "ops", "어제 서버를 재시작했다")
        self.lr.save_memory("note", "other", "클라이언트 설정 변경")
        hits = self.lr.search_memory("서버")["hits"]
        self.assertEqual([h["id"] for h in hits], [saved["id"]])

    def test_search_pages_with_a_cursor(self):
        ids = {self.lr.save_memory("note", "n%d" % i, "supplier adapter %d" % i)["id"] for i in range(3)}
        first = self.lr.search_memory("supplier", limit=2)
        self.assertEqual(len(first["hits"]), 2)
        self.assertIsNotNone(first["next_cursor"])
        rest = self.lr.search_memory("supplier", limit=2, cursor=first["next_cursor"])
        self.assertEqual({h["id"] for h in first["hits"] + rest["hits"]}, ids)

    def test_unknown_memory_id_raises_not_found(self):
        with self.assertRaises(NotFound) as cm:
            self.lr.get_memory("S_9999")
        self.assertEqual(cm.exception.code, -32011)

    def test_memory_db_moved_away_raises_storage_error_and_works_again_when_back(self):
        saved = self.lr.save_memory("note", "kept", "kept body", ["kept"])
        db = self.db_path()
        os.rename(db, db + ".away")
        with self.assertRaises(StorageError) as cm:
            self.lr.save_memory("note", "lost", "x", [])
        self.assertEqual(cm.exception.code, -32012)
        self.assertEqual(cm.exception.reason, "missing")
        self.assertEqual(cm.exception.path, db)
        os.rename(db + ".away", db)
        self.assertEqual(self.lr.get_memory(saved["id"])["record"]["content"], "kept body")


class ParamsTest(ClientTest):
    def test_too_long_reason_raises_limit_exceeded_with_field_limit_actual(self):
        self.lr.start_task("Adapt the supplier interface")
        with self.assertRaises(LimitExceeded) as cm:
            self.lr.enable_writes("x" * 2001)
        e = cm.exception
        self.assertEqual((e.code, e.field, e.limit, e.actual, e.unit), (-32009, "reason", 2000, 2001, "characters"))
        self.assertEqual(self.lr.status()["task"]["access_mode"], "read_only")

    def test_a_line_over_one_mib_answers_its_caller_with_limit_exceeded_and_the_stream_goes_on(self):
        with self.assertRaises(LimitExceeded) as cm:  # 400k CJK chars: under the content limit, over the line limit
            self.lr.save_memory("note", "big", "接" * 400000)
        self.assertEqual((cm.exception.field, cm.exception.unit), ("line", "bytes"))
        self.assertGreater(cm.exception.actual, cm.exception.limit)
        self.assertIsNone(self.lr.status()["task"])

    def test_unknown_param_raises_invalid_params_with_issues(self):
        self.lr.start_task("Adapt the supplier interface")
        with self.assertRaises(InvalidParams) as cm:
            self.lr.call("writes.require", action="edit", bogus=1)
        self.assertEqual(cm.exception.code, -32602)
        self.assertEqual(cm.exception.data["issues"][0]["path"], "bogus")

    def test_none_params_are_omitted_not_sent_as_null(self):
        self.lr.start_task("Adapt the supplier interface", keywords=None)
        granted = self.lr.enable_writes("ok", scope=None, ttl_seconds=None, max_uses=None)
        self.assertIsNone(granted["lease"]["scope"])
        self.assertEqual(self.lr.finish(summary=None)["task"]["status"], "completed")

    def test_the_compatibility_module_is_the_package(self):
        import longrun
        import longrun_client
        self.assertIs(longrun_client.LongrunClient, longrun.LongrunClient)
        self.assertIs(longrun_client.WriteGateViolation, longrun.WriteGateViolation)
        for name in ("ContractMethods", "error_from_wire", "LongrunHttpClient", "ProtocolError"):
            self.assertTrue(hasattr(longrun_client, name), name)

    def test_unknown_method_raises_protocol_error(self):
        with self.assertRaises(ProtocolError) as cm:
            self.lr.call("no.such.method")
        self.assertEqual(cm.exception.code, -32601)

    def test_describe_lists_the_methods_this_client_calls(self):
        names = {m["name"] for m in self.lr.describe()["methods"]}
        for name in ("task.start", "task.status", "task.transition", "task.checkpoint", "task.resume", "task.recover",
                     "task.finish", "turn.begin", "turn.end", "writes.enable", "writes.request", "writes.require",
                     "memory.save", "memory.search", "memory.get"):
            self.assertIn(name, names)


class LifecycleTest(ClientTest):
    def test_context_manager_closes_the_child_with_exit_code_0(self):
        with LongrunClient(self.root, binary=BIN) as lr:
            lr.status()
            proc = lr.process
            self.assertIsNone(proc.poll())
        self.assertEqual(proc.returncode, 0)

    def test_calls_after_close_raise_and_close_is_idempotent(self):
        self.lr.status()
        self.assertEqual(self.lr.close(), 0)
        self.assertEqual(self.lr.close(), 0)
        with self.assertRaises(ProtocolError):
            self.lr.status()

    def test_a_killed_child_makes_later_calls_raise_server_exited(self):
        self.lr.status()
        self.lr.process.kill()
        self.lr.process.wait()
        with self.assertRaises(ServerExited) as cm:
            self.lr.status()
        self.assertIsInstance(cm.exception, ProtocolError, "still a ProtocolError for code written against earlier clients")
        self.assertEqual(cm.exception.data.get("returncode"), -9)
        self.assertEqual(cm.exception.returncode, -9)

    def test_a_child_that_dies_at_start_reports_its_stderr_tail(self):
        # A real process that is not longrun: python exits at once, complaining on stderr about "serve".
        with self.assertLogs("longrun.server", "WARNING"):
            with self.assertRaises(ServerExited) as cm:
                LongrunClient(self.root, binary=sys.executable, timeout=20)
        self.assertIn("serve", str(cm.exception))
        self.assertNotEqual(cm.exception.data.get("returncode"), 0)

    def test_calls_from_several_threads_each_get_their_own_answer(self):
        ids = [self.lr.save_memory("note", "t%d" % i, "body %d" % i)["id"] for i in range(8)]
        got, errors = {}, []

        def fetch(mid):
            try:
                got[mid] = self.lr.get_memory(mid)["record"]["id"]
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=fetch, args=(mid,)) for mid in ids * 3]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        self.assertEqual(errors, [])
        self.assertEqual(got, {mid: mid for mid in ids})

    def test_missing_binary_raises_file_not_found(self):
        with self.assertRaises(FileNotFoundError):
            LongrunClient(self.root, binary=os.path.join(self.root, "no-such-longrun"))


class ExampleTest(unittest.TestCase):
    def test_example_runs_the_seed_flow_and_exits_0(self):
        if not os.access(BIN, os.X_OK):
            self.skipTest("no longrun binary at %s" % BIN)
        env = dict(os.environ, LONGRUN_BIN=BIN)
        out = subprocess.run([sys.executable, os.path.join(HERE, "example.py")], env=env, cwd=HERE,
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("<!-- longrun-state:", out.stdout)
        self.assertIn("refused: read_only in turn 1", out.stdout)
        self.assertIn("[4] resume: turn 2", out.stdout)
        self.assertIn("[5] finish: completed", out.stdout)


if __name__ == "__main__":
    unittest.main()
