"""The examples in examples/ run as a user would run them, against the binary, and tell the story
they promise (each makes and removes its own temporary roots)."""
import os
import subprocess
import sys
import unittest

from testsupport import BIN, HERE, require_binary

EXAMPLES = os.path.join(HERE, "examples")


def run_example(name: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, LONGRUN_BIN=BIN, PYTHONPATH=HERE)
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, name)], env=env, capture_output=True, text=True, timeout=300)


class ExamplesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_binary()

    def assertInOrder(self, text, lines):
        at = 0
        for line in lines:
            found = text.find(line, at)
            self.assertGreaterEqual(found, 0, "%r not found (in order) in:\n%s" % (line, text))
            at = found + len(line)

    def test_an_agent_loop_killed_halfway_resumes_from_its_checkpoint_data(self):
        out = run_example("agent_loop.py")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertInOrder(out.stdout, [
            "started: read-only until the user approves",
            "approved: lease for turn 1",
            "progress checkpoint S_0001: next step 3, still writable",
            "progress checkpoint S_0002: next step 6, still writable",
            "killed at step 7 (SIGKILL)",
            "first run ended by signal 9",
            "resumed from checkpoint data: next step 6 (edited so far: 6)",
            "refused after resume: read_only in turn 2",
            "approved: lease for turn 2",
            "step 6 done",
            "pause checkpoint S_0004: paused, read_only",
            "finished: completed (12 modules)",
            "modules on disk: 12",
        ])

    def test_an_asyncio_host_runs_three_conversations_on_three_roots(self):
        out = run_example("async_hosts.py")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        for lang in ("en", "zh", "ko"):
            self.assertIn("[%s] refused before approval: read_only" % lang, out.stdout)
            self.assertIn("[%s] step 3:" % lang, out.stdout)
        self.assertIn("[en] status: paused · gate: read_only · turn: 2", out.stdout)
        self.assertIn("[zh] 状态：已暂停 (paused) · 读写门禁：只读 (read_only) · 对话轮次：2", out.stdout)
        self.assertIn("[ko] 상태: 일시 중지 (paused) · 쓰기 게이트: 읽기 전용 (read_only) · 대화 턴: 2", out.stdout)
        self.assertIn("3 conversations done, one root each", out.stdout)

    def test_a_research_runs_receipts_survive_a_kill(self):
        out = run_example("research_run.py")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertInOrder(out.stdout, [
            "fetched A -> C_0001 (receipt completed)",
            "fetched B -> C_0002 (receipt completed)",
            "worker-1 killed while fetching C",
            "worker-1 ended by signal 9",
            "a second run is refused: run_active",
            "worker-2 claimed R_0001 at epoch 2; unknown: holdings-C",
            "holdings-A: replayed from its receipt (C_0001), not fetched again",
            "holdings-B: replayed from its receipt (C_0002), not fetched again",
            "holdings-C is unknown, so a new attempt is refused: conflict",
            "holdings-C reconciled with evidence: failed, may be retried",
            "holdings-C: fetched now (attempt 2)",
            "receipts: holdings-A:completed#1 holdings-B:completed#1 holdings-C:completed#2 holdings-C:failed#1",
            "finished: run and task completed",
            "real fetches: A B C C",
        ])


if __name__ == "__main__":
    unittest.main()
