"""The request chain from Python (issue 28): a host records with each model request the sha256
digests of what it sent; ``get_run`` shows whether the task's question and each constraint went in."""
import hashlib
import unittest

from testsupport import BIN, require_binary, temp_root

from longrun import LongrunClient


def sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RequestChainTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_binary()

    def test_a_dropped_constraint_shows_as_drift(self):
        question = "Compare the two theme funds."
        constraints = ["Do not use my holdings", "Only 2026-06-30"]
        with LongrunClient(temp_root(self), binary=BIN) as lr:
            lr.start_task(question)
            run = lr.start_run("lead", tools=["model"], constraints=constraints)["run"]
            lr.begin_receipt(run["run_id"], 1, "model", "r1", args={"n": 1}, kind="model_request",
                             sent={"digest": sha("request 1"), "question": sha(question), "constraints": [sha(c) for c in constraints]})
            lr.begin_receipt(run["run_id"], 1, "model", "r2", args={"n": 2}, kind="model_request",
                             sent={"digest": sha("request 2"), "question": sha(question), "constraints": [sha(constraints[0])]})
            chain = lr.get_run(run["run_id"])["request_chain"]
        self.assertEqual([r["drifted"] for r in chain["requests"]], [False, True])
        self.assertEqual(chain["requests"][1]["constraints_missing"], [{"index": 1, "text": "Only 2026-06-30"}])
        self.assertEqual(chain["drifted"], 1)


if __name__ == "__main__":
    unittest.main()
