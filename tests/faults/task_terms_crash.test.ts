/**
 * A task's terms across SIGKILL (issue 23): task.start with terms is the task's commit and then its
 * terms' commit, the terms written first as an intent. Killed between the two (crash point
 * `task_terms.before_commit`, the crash-test build of the binary), the task exists without its
 * terms; its runs must never go unbounded: the next run decision completes the write when it can
 * tell which task the terms were for, and refuses the runs (task_terms_missing) when it cannot.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { CRASH_BINARY, Server } from "../support/server.ts";

const binary = { name: "the compiled binary (crash-test build)", argv: [CRASH_BINARY] };
const TERMS = { constraints: ["No paid sources"], desired_outcome: "A one-page comparison", bounds: { tools: ["fetch"], budget: { cost: 2 } } };

/** task.start with terms, killed between the task's commit and its terms' commit. */
async function startKilled(root: string, description: string): Promise<void> {
  const s = new Server(binary, ["serve", "--root", root], { LONGRUN_CRASH_AT: "task_terms.before_commit" });
  await s.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "task.start", params: { description, ...TERMS } }) + "\n");
  const end = await s.exited;
  assert.equal(end.signal, "SIGKILL", `the process died at task_terms.before_commit (stderr: ${s.stderr})`);
  assert.equal(s.answers.length, 0, "nothing was acknowledged");
}

describe("a task's terms across SIGKILL between the task's commit and theirs", () => {
  let root = "";
  beforeEach(() => (root = tempDir()));
  afterEach(() => removeDir(root));

  test("killed at task_terms.before_commit: the task is there, and its runs are bounded by the terms it was started with", async () => {
    await startKilled(root, "Compare the funds");
    const s = new Server(binary, ["serve", "--root", root]);
    try {
      const task = (await s.result("task.status")).task;
      assert.equal(task.description, "Compare the funds", "the task's own commit happened");
      const wide = await s.error("run.start", { owner: "w", tools: ["fetch", "shell"], budget: { cost: 1 } });
      assert.equal(wide.data.reason, "wider_than_task_terms", "the terms bound its runs: the host's write was completed, not lost");
      assert.equal((await s.error("run.start", { owner: "w", tools: ["fetch"], budget: {} })).data.wider[0].field, "budget.cost", "no limit is wider than the task's");
      const run = (await s.result("run.start", { owner: "w", tools: ["fetch"], budget: { cost: 1 } })).run;
      const got = await s.result("run.get", { run_id: run.run_id });
      assert.deepEqual([got.constraints, got.desired_outcome, got.bounds], [TERMS.constraints, TERMS.desired_outcome, TERMS.bounds], "verbatim, as the host gave them");
    } finally {
      await s.close();
    }
  });

  test("two such tasks of the same question: neither can be told apart, so both refuse runs (fail closed) until started again with their terms", async () => {
    await startKilled(root, "Compare the funds");
    await startKilled(root, "Compare the funds");
    const s = new Server(binary, ["serve", "--root", root]);
    try {
      const no = await s.error("run.start", { owner: "w", tools: ["fetch"], budget: { cost: 1 } });
      assert.equal(no.data.kind, "unauthorized");
      assert.equal(no.data.reason, "task_terms_missing");
      assert.match(no.message, /task\.start/);
      const tasks = (await s.result("task.list")).tasks;
      assert.equal(tasks.length, 2);
      const other = tasks.find((t: { current: boolean }) => !t.current) ?? tasks[1];
      await s.result("task.switch", { task_id: other.task_id });
      assert.equal((await s.error("run.start", { owner: "w", tools: ["fetch"], budget: { cost: 1 } })).data.reason, "task_terms_missing");
      // the way out: the host starts the task again with its terms, in one piece this time
      await s.result("task.start", { description: "Compare the funds", ...TERMS });
      assert.equal((await s.error("run.start", { owner: "w", tools: ["shell"], budget: { cost: 1 } })).data.reason, "wider_than_task_terms");
      assert.equal((await s.result("run.start", { owner: "w", tools: ["fetch"], budget: { cost: 1 } })).run.status, "running");
    } finally {
      await s.close();
    }
  });
});
