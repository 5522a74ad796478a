"""The whole protocol through the typed methods, checkpoints a loop can live with, receipts as a
context manager, and the child's life (stderr to logging, death, timeouts, restarts, the start check).

Against the real binary ($LONGRUN_BIN, else dist/longrun), except where a fake server is needed to
make something happen on cue (testsupport.FAKE_SERVER).
"""
import json
import logging
import os
import subprocess
import sys
import threading
import unittest
from unittest import mock

from testsupport import BIN, HERE, fake_server, require_binary, temp_root

from longrun import (
    IdempotencyConflict,
    ConflictError, IncompatibleServer, LimitExceeded, LongrunClient, LongrunError, RequestTimeout, ServerExited,
    WriteGateViolation, __version__,
)
from longrun._methods import METHOD_PARAMS

import gen_methods  # noqa: E402  (clients/python, on the path through testsupport)


class RealServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_binary()

    def setUp(self):
        self.root = temp_root(self)
        self.lr = self.client()

    def client(self, **kw):
        c = LongrunClient(self.root, binary=BIN, timeout=30, **kw)
        self.addCleanup(c.close)
        return c


class IdempotencyTest(RealServerTest):
    def test_a_write_sent_again_with_its_key_answers_as_the_first_time_and_other_params_are_refused(self):
        first = self.lr.call("task.start", description="retry me", idempotency_key="py-k1")
        again = self.lr.call("task.start", description="retry me", idempotency_key="py-k1")
        self.assertEqual(again["task"]["task_id"], first["task"]["task_id"])
        self.assertEqual(len(self.lr.call("task.list")["tasks"]), 1)
        with self.assertRaises(IdempotencyConflict) as cm:
            self.lr.call("task.start", description="something else", idempotency_key="py-k1")
        self.assertEqual(cm.exception.key, "py-k1")
        self.assertEqual(cm.exception.first_method, "task.start")


class CoverageTest(RealServerTest):
    def test_methods_json_is_what_the_server_describes(self):
        # the typed methods are generated from methods.json (gen_methods.py); test_package checks that step
        with open(gen_methods.DESCRIBED, encoding="utf-8") as f:
            checked_in = f.read()
        self.assertEqual(checked_in, gen_methods.methods_json(self.lr.describe()["methods"]),
                         "methods.json drifted from system.describe: run python3 clients/python/gen_methods.py --describe")

    def test_every_method_and_param_of_the_server_has_a_typed_method(self):
        described = self.lr.describe()
        for m in described["methods"]:
            self.assertIn(m["name"], METHOD_PARAMS, "no typed method for %s" % m["name"])
            server_params = set(m["params"].get("properties", {})) - {"root"}
            self.assertEqual(server_params - set(METHOD_PARAMS[m["name"]]), set(), m["name"])

    def test_describe_was_checked_at_start(self):
        self.assertIsNotNone(self.lr.described)
        self.assertEqual(self.lr.described["version"], __version__)
        self.assertTrue(self.lr.described["protocol_version"].startswith("1."))


class LedgerThroughTypedMethodsTest(RealServerTest):
    """Runs, receipts, budgets, adjustments, artifacts and context: every ledger method once."""

    def test_a_research_run_end_to_end(self):
        lr = self.lr
        task = lr.start_task("Compare the funds")["task"]
        self.assertEqual(lr.save_memories([{"type": "note", "title": "a", "content": "b"}])["count"], 1)
        run = lr.start_run("worker-1", tools=["fetch"], budget={"tool_calls": 10, "cost": 2})["run"]
        rid, ep = run["run_id"], run["epoch"]
        self.assertEqual(lr.get_run(rid)["question"], "Compare the funds")
        begun = lr.begin_receipt(rid, ep, "fetch", "k1", args={"fund": "A"})
        self.assertFalse(begun["replayed"])
        ctx = lr.put_context("fund A", "holdings of fund A", run_id=rid, epoch=ep)
        lr.settle_receipt(rid, ep, begun["receipt"]["receipt_id"], "completed", result_ref=ctx["ref"])
        self.assertTrue(lr.begin_receipt(rid, ep, "fetch", "k1", args={"fund": "A"})["replayed"])
        self.assertEqual([r["status"] for r in lr.list_receipts(rid, status="completed")["receipts"]], ["completed"])
        read = lr.read_context(ctx["ref"], run_id=rid, offset=0, length=8)
        self.assertEqual((read["text"], read["coverage"]["complete"]), ("holdings", False))
        charged = lr.charge(rid, ep, requests=1, unknown=["cost"])
        self.assertEqual(charged["budget"]["uncertain"], ["cost"])
        self.assertFalse(lr.budget_status(rid)["budget"]["effects_allowed"])
        self.assertEqual(lr.reconcile_charge(rid, ep, charged["charge_id"], "the invoice says 0.02", cost=0.02)["budget"]["uncertain"], [])
        asked = lr.begin_receipt(rid, ep, "fetch", "model-1", args={"prompt": "p"}, kind="model_request")
        self.assertEqual(asked["receipt"]["kind"], "model_request")
        lr.settle_receipt(rid, ep, asked["receipt"]["receipt_id"], "completed", result_ref="provider-log:1")
        spent = lr.budget_status(rid)["budget"]["spent"]
        self.assertEqual((spent["requests"], spent["tool_calls"]), (2, 1), "a model request counts as a request, not a tool call")
        self.assertEqual(lr.get_run(rid)["receipts_by_kind"], {"tool_call": 1, "model_request": 1, "child_run": 0})
        cp = lr.checkpoint_run(rid, ep, ["fund A"], ["fund B"], note="half", failed=["the archive search"], next_step="read fund B's report")["checkpoint"]
        self.assertEqual((cp["open"], cp["failed"], cp["next_step"]), (["fund B"], ["the archive search"], "read fund B's report"))
        self.assertEqual(lr.park_run(rid, ep, "the user")["run"]["status"], "parked")
        self.assertEqual(lr.wake_run(rid, ep)["run"]["status"], "running")
        adj = lr.receive_adjustment("also compare fees", run_id=rid)["adjustment"]
        request = lr.begin_receipt(rid, ep, "fetch", "request-2", args_digest="0" * 64)["receipt"]
        lr.yield_run(rid, ep, "adopt the adjustment", adjustment_id=adj["adjustment_id"])
        self.assertIsNotNone(lr.handoff_adjustment(adj["adjustment_id"], rid, ep, request["receipt_id"])["adjustment"]["handed"])
        art = lr.put_artifact("report", "draft", "draft v1", run_id=rid, epoch=ep, attachments=[{"name": "fees.csv", "content": "a,b"}])["artifact"]
        self.assertEqual(lr.satisfy_adjustment(adj["adjustment_id"], "report", art["version"])["adjustment"]["satisfied"]["version"], 1)
        self.assertEqual(len(lr.list_adjustments()["adjustments"]), 1)
        self.assertEqual(lr.get_artifact("report")["artifact"]["content"], "draft v1")
        self.assertEqual(lr.get_artifact("report", version=1, attachment="fees.csv")["content"], "a,b")
        self.assertEqual(lr.mark_artifact("report", 1, "saved")["artifact"]["marks"][0]["mark"], "saved")
        self.assertEqual(lr.list_artifacts(name="report")["artifacts"][0]["version"], 1)
        claimed = lr.claim_run(rid, "worker-2")
        self.assertEqual([r["idempotency_key"] for r in claimed["newly_unknown"]], ["request-2"])
        ep = claimed["run"]["epoch"]
        self.assertEqual(lr.finish_run(rid, ep, "done", gaps=["fees of B"])["run"]["status"], "finished")
        child = lr.continue_run(rid, "worker-3", {})
        self.assertEqual([r["idempotency_key"] for r in child["open_items"]], ["request-2"])
        self.assertEqual(lr.cancel_run(child["run"]["run_id"], "stop")["run"]["status"], "cancelled")
        self.assertEqual(lr.list_runs()["total"]["runs"], 2)
        second = lr.start_task("a short question")["task"]
        self.assertEqual(lr.switch_task(task["task_id"])["task"]["task_id"], task["task_id"])
        self.assertEqual(lr.share_context(ctx["ref"], second["task_id"])["shared_with"], [second["task_id"]])
        self.assertEqual({t["task_id"] for t in lr.list_tasks()["tasks"]}, {task["task_id"], second["task_id"]})


class CheckpointsTest(RealServerTest):
    def test_progress_keeps_the_task_running_and_the_lease_and_resume_gives_back_data(self):
        self.lr.start_task("a loop of twelve steps")
        self.lr.enable_writes("approved")
        cp = self.lr.progress("3 of 12", "step 4", data={"next_step": 3, "done": ["a", "b", "c"]})
        self.assertEqual((cp["task"]["status"], cp["task"]["access_mode"]), ("in_progress", "writable"))
        self.assertEqual(cp["task"]["last_checkpoint"]["kind"], "progress")
        self.assertTrue(self.lr.require_writable("edit step 4")["ok"])
        self.lr.close()
        resumed = self.client().resume()
        self.assertEqual(resumed["data"], {"next_step": 3, "done": ["a", "b", "c"]})
        self.assertEqual(resumed["task"]["access_mode"], "read_only")

    def test_a_pause_checkpoint_is_the_default_and_ends_the_lease(self):
        self.lr.start_task("t")
        self.lr.enable_writes("approved")
        cp = self.lr.checkpoint("done for today", "continue tomorrow", data={"step": 9})
        self.assertEqual((cp["task"]["status"], cp["task"]["access_mode"]), ("paused", "read_only"))
        with self.assertRaises(WriteGateViolation):
            self.lr.require_writable("edit")

    def test_data_over_the_limit_is_refused_and_changes_nothing(self):
        self.lr.start_task("t")
        limit = self.lr.describe()["limits"]["checkpoint_data_chars"]
        with self.assertRaises(LimitExceeded) as cm:
            self.lr.progress("s", "n", data={"blob": "x" * limit})
        self.assertEqual((cm.exception.field, cm.exception.limit), ("data", limit))
        self.assertIsNone(self.lr.status()["task"]["last_checkpoint"])

    def test_recover_gives_back_the_data_of_the_newest_checkpoint(self):
        self.lr.start_task("t")
        self.lr.progress("s", "n", data={"cursor": "page-7"})
        self.assertEqual(self.lr.recover(force=True)["data"], {"cursor": "page-7"})

    def test_lang_of_the_client_the_call_and_the_root(self):
        zh = self.client(lang="zh")
        zh.start_task("接口适配")
        self.assertIn("下一步：接入第二个供应商", zh.checkpoint("完成", "接入第二个供应商")["text"])
        zh.resume()
        self.assertIn("다음 단계: 검토", zh.checkpoint("완료", "검토", lang="ko")["text"])
        zh.resume()
        with open(os.path.join(self.root, ".longrun", "settings.json"), "w") as f:
            json.dump({"lang": "ko"}, f)
        text = self.lr.progress("s", "n")["text"]  # this client names no lang: the root's setting
        self.assertIn("상태: 진행 중 (in_progress)", text)
        self.assertIn('"status":"in_progress"', text.splitlines()[-1], "the machine line is never translated")


class EffectTest(RealServerTest):
    def setUp(self):
        super().setUp()
        self.lr.start_task("fetch things")
        run = self.lr.start_run("worker-1", tools=["fetch"])["run"]
        self.rid, self.ep = run["run_id"], run["epoch"]

    def receipts(self):
        return {r["idempotency_key"]: r for r in self.lr.list_receipts(self.rid)["receipts"]}

    def test_a_block_that_sets_result_ref_completes_and_a_second_one_is_replayed(self):
        with self.lr.effect(self.rid, self.ep, "fetch", "k", {"url": "a"}) as r:
            self.assertFalse(r.replayed)
            r.result_ref = self.lr.put_context("a", "body", run_id=self.rid, epoch=self.ep)["ref"]
        self.assertEqual(r.settled["status"], "completed")
        ran = []
        with self.lr.effect(self.rid, self.ep, "fetch", "k", {"url": "a"}) as again:
            if not again.replayed:
                ran.append(1)
        self.assertEqual((ran, again.result_ref), ([], r.result_ref))

    def test_an_exception_in_the_block_settles_failed_and_goes_on_up(self):
        with self.assertRaises(KeyError):
            with self.lr.effect(self.rid, self.ep, "fetch", "k", None):
                raise KeyError("no such page")
        got = self.receipts()["k"]
        self.assertEqual(got["status"], "failed")
        self.assertIn("KeyError", got["error"])

    def test_fail_settles_failed_without_an_exception(self):
        with self.lr.effect(self.rid, self.ep, "fetch", "k", {"a": 1}) as r:
            r.fail("HTTP 404")
        self.assertEqual((self.receipts()["k"]["status"], self.receipts()["k"]["error"]), ("failed", "HTTP 404"))

    def test_a_block_with_no_outcome_raises_and_leaves_the_receipt_begun(self):
        with self.assertRaises(ValueError):
            with self.lr.effect(self.rid, self.ep, "fetch", "k", {"a": 1}):
                pass
        self.assertEqual(self.receipts()["k"]["status"], "begun")

    def test_an_interrupted_block_leaves_the_receipt_begun(self):
        with self.assertLogs("longrun", "WARNING") as logs, self.assertRaises(KeyboardInterrupt):
            with self.lr.effect(self.rid, self.ep, "fetch", "k", {"a": 1}):
                raise KeyboardInterrupt
        self.assertIn("left begun (KeyboardInterrupt)", logs.output[0])
        self.assertEqual(self.receipts()["k"]["status"], "begun")

    def test_a_host_killed_in_the_block_leaves_it_begun_and_the_next_claim_makes_it_unknown(self):
        self.lr.close()
        script = (
            "import os, signal, sys\n"
            "sys.path.insert(0, %r)\n"
            "from longrun import LongrunClient\n"
            "lr = LongrunClient(%r, binary=%r)\n"
            "with lr.effect(%r, %d, 'fetch', 'dies', {'a': 1}) as r:\n"
            "    print(r.receipt_id, flush=True)\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n"
        ) % (HERE, self.root, BIN, self.rid, self.ep)
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, -9, out.stderr)
        lr = self.client()
        claimed = lr.claim_run(self.rid, "worker-2")
        self.assertEqual([(r["receipt_id"], r["status"]) for r in claimed["newly_unknown"]], [(out.stdout.strip(), "unknown")])
        with self.assertRaises(ConflictError):  # never run again until reconciled
            with lr.effect(self.rid, claimed["run"]["epoch"], "fetch", "dies", {"a": 1}):
                self.fail("an unknown effect must not run again")


class ChildLifecycleTest(unittest.TestCase):
    """The client's plumbing, on a fake server where it must happen on cue."""

    def setUp(self):
        self.root = temp_root(self)
        self.fake = fake_server(self)

    def client(self, **kw):
        c = LongrunClient(self.root, binary=self.fake, check=False, **kw)
        self.addCleanup(c.close)
        return c

    def test_the_childs_stderr_goes_to_logging_line_by_line(self):
        lr = self.client(stderr_level=logging.INFO)
        with self.assertLogs("longrun.server", "INFO") as logs:
            lr.call("test.log", lines=["first line", "second line"])
            lr.call("test.release")  # a round trip after: stderr is drained by then (or soon)
            for _ in range(100):
                if len(logs.records) >= 2:
                    break
                threading.Event().wait(0.02)
        self.assertEqual([r.getMessage() for r in logs.records][:2], ["first line", "second line"])
        self.assertEqual(logs.records[0].longrun_pid, lr.process.pid)
        self.assertEqual(logs.records[0].longrun_root, self.root)

    def test_a_call_in_flight_when_the_child_dies_raises_server_exited(self):
        lr = self.client()
        errors = []
        t = threading.Thread(target=lambda: errors.append(self._catch(lambda: lr.call("test.hold"))))
        t.start()
        with self.assertLogs("longrun.server", "WARNING"):
            with self.assertRaises(ServerExited) as cm:
                lr.call("test.die")
        t.join(10)
        self.assertIsInstance(errors[0], ServerExited)
        self.assertEqual(cm.exception.returncode, 3)
        self.assertIn("dying on request", cm.exception.stderr)
        with self.assertRaises(ServerExited):  # no restart policy: it stays dead
            lr.call("test.echo")

    @staticmethod
    def _catch(fn):
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - returned for the assertion
            return e

    def test_a_timed_out_request_raises_and_its_late_answer_is_dropped(self):
        lr = self.client(timeout=0.3)
        with self.assertRaises(RequestTimeout) as cm:
            lr.call("test.hold")
        self.assertEqual(cm.exception.method, "test.hold")
        self.assertIn("server goes on with it", str(cm.exception))
        self.assertEqual(lr.call("test.release"), {"released": 1})
        self.assertEqual(lr._child.dropped, 1)
        self.assertEqual(lr.call("test.echo", a=1), {"a": 1})

    def test_a_restart_policy_starts_a_new_child_on_the_next_call(self):
        lr = self.client(restarts=1, restart_window=60)
        with self.assertLogs("longrun.server", "WARNING"), self.assertRaises(ServerExited):
            lr.call("test.die")
        with self.assertLogs("longrun", "WARNING"):
            self.assertEqual(lr.call("test.echo", n=1), {"n": 1})
        self.assertEqual(lr.restart_count, 1)
        with self.assertLogs("longrun.server", "WARNING"), self.assertRaises(ServerExited):
            lr.call("test.die")
        with self.assertRaises(ServerExited):  # one restart per minute, used up
            lr.call("test.echo")
        lr.restart()  # by hand, always
        self.assertEqual(lr.call("test.echo", n=2), {"n": 2})

    def test_another_protocol_major_is_refused_at_start(self):
        with mock.patch.dict(os.environ, {"FAKE_PROTOCOL": "2.0"}):
            with self.assertRaises(IncompatibleServer) as cm:
                LongrunClient(self.root, binary=self.fake)
        self.assertIn("protocol 2.0", str(cm.exception))

    def test_a_server_without_the_methods_or_params_this_client_sends_is_refused_at_start(self):
        methods = [[m, [p for p in ps if p not in ("data", "lang")]] for m, ps in METHOD_PARAMS.items() if m != "run.yield"]
        with mock.patch.dict(os.environ, {"FAKE_METHODS": json.dumps(methods)}):
            with self.assertRaises(IncompatibleServer) as cm:
                LongrunClient(self.root, binary=self.fake)
        self.assertIn("run.yield", cm.exception.data["missing"])
        self.assertIn("task.checkpoint(data)", cm.exception.data["missing"])
        self.assertIn("task.checkpoint(lang)", str(cm.exception))

    def test_a_matching_server_of_another_version_is_accepted_with_a_warning(self):
        methods = [[m, list(ps)] for m, ps in METHOD_PARAMS.items()]
        with mock.patch.dict(os.environ, {"FAKE_METHODS": json.dumps(methods)}):
            with self.assertLogs("longrun", "WARNING") as logs:
                lr = LongrunClient(self.root, binary=self.fake)
                self.addCleanup(lr.close)
        self.assertIn("9.9.9", logs.output[0])

    def test_errors_are_longrun_errors_with_kind_and_code(self):
        with self.assertRaises(LongrunError) as cm:
            self.client().call("no.such")
        self.assertEqual((cm.exception.kind, cm.exception.code), ("method_not_found", -32601))


if __name__ == "__main__":
    unittest.main()
