/**
 * A person's verbs (`longrun start|list|grant|revoke`, src/cli/person/) through the compiled binary
 * in a real root: what each prints, its --json, and every failure one line with the way out, exit
 * 2, changing nothing. The grant's flags in process: tests/cli/grant_flags.test.ts.
 */
import assert from "node:assert/strict";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary, Server } from "../support/server.ts";

const person = (root: string, ...args: string[]) => run([BINARY, ...args], { cwd: root });

function oneLine(r: { code: number | null; stderr: string }, what: string): string {
  assert.equal(r.code, 2, `${what}: ${r.stderr}`);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, `${what}: one line: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at |\$bunfs/, `${what}: no stack trace`);
  return lines[0]!;
}

describe("longrun start, list, grant, revoke", () => {
  let root = "";
  beforeEach(() => (root = tempDir()));
  afterEach(() => removeDir(root));

  test("in a directory that is no root, list, grant and revoke say so in one line (exit 2) and create nothing; so does a start without words", async () => {
    requireBinary();
    assert.match(oneLine(await person(root, "start", " "), "start without words"), /a task needs a description/);
    for (const args of [["list"], ["grant", "fix it"], ["revoke"], ["list", "--json"]]) {
      const r = await person(root, ...args);
      assert.match(oneLine(r, args.join(" ")), /^longrun: \w+: no longrun root in .* \(nothing was created\); run it in the project's directory or pass --root DIR/);
      if (args.includes("--json")) assert.deepEqual(Object.keys(JSON.parse(r.stdout)), ["ok", "error"]);
      if (args.includes("--json")) assert.equal(JSON.parse(r.stdout).error.kind, "refused");
    }
    assert.deepEqual(readdirSync(root), []);
  });

  test("start begins a task; a second start while it is open is refused, naming it and what to do", async () => {
    requireBinary();
    const first = await person(root, "start", "fix the flaky login test");
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^started task (T_\S+) in .*: in_progress, read-only, turn 1$/m);
    const id = /task (T_\S+)/.exec(first.stdout)![1]!;
    const second = await person(root, "start", "something else");
    assert.match(oneLine(second, "second start"), new RegExp(`task ${id} is still open \\(in_progress: "fix the flaky login test"\\): \`longrun finish\` accepts it.*; nothing was started$`));
    const list = JSON.parse((await person(root, "list", "--json")).stdout);
    assert.equal(list.tasks.length, 1, "nothing was started");
    assert.equal((await person(root, "finish")).code, 0);
    const third = await person(root, "start", "--json", "next", "task");
    assert.equal(third.code, 0, third.stderr);
    const o = JSON.parse(third.stdout);
    assert.equal(o.ok, true);
    assert.equal(o.task.description, "next task", "the words, joined as the shell split them");
    assert.equal(o.task.access_mode, "read_only");
    assert.ok(Array.isArray(o.memories));
    assert.match(oneLine(await person(root, "start"), "start without words"), /a task needs a description/);
  });

  test("list shows the tasks newest first with the current one marked, and the open research runs", async () => {
    requireBinary();
    assert.equal((await person(root, "start", "first task")).code, 0);
    assert.equal((await person(root, "finish")).code, 0);
    assert.equal((await person(root, "start", "second task\nwith a second line")).code, 0);
    const serve = new Server({ name: "the compiled binary", argv: [BINARY] }, ["serve", "--root", root]);
    let runId = "";
    try {
      runId = (await serve.result("run.start", { owner: "worker-1", reason: "research" })).run.run_id;
    } finally {
      await serve.close();
    }
    const r = await person(root, "list");
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    assert.match(lines[0]!, /^\* T_\S+  in_progress  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  second task$/);
    assert.match(lines[1]!, /^  T_\S+  completed    \d{4}-.*Z  first task$/);
    assert.equal(lines[2], "open research runs (1):");
    assert.match(lines[3]!, new RegExp(`^  ${runId}  (running|requested|parked)  task T_\\S+  owner worker-1  `));
    const o = JSON.parse((await person(root, "list", "--json")).stdout);
    assert.deepEqual(o.tasks.map((t: { status: string }) => t.status), ["in_progress", "completed"]);
    assert.deepEqual(o.runs.map((x: { run_id: string }) => x.run_id), [runId]);
  });

  test("grant needs an open task in progress and a reason; bad flags are refused in one line and grant nothing", async () => {
    requireBinary();
    assert.equal((await person(root, "start", "t")).code, 0);
    assert.equal((await person(root, "finish")).code, 0);
    assert.match(oneLine(await person(root, "grant", "fix"), "grant on a finished task"), /is completed, not in_progress.*longrun start/);
    assert.equal((await person(root, "start", "t2")).code, 0);
    for (const [args, pattern] of [
      [["grant"], /a grant needs a reason/],
      [["grant", "r", "--ttl", "forever"], /--ttl "forever" is not a time to live/],
      [["grant", "r", "--uses", "0"], /--uses "0"/],
      [["grant", "r", "--scope", "src/\u0007**"], /scope/], // refused by writes.enable's own params schema
      [["grant", "r", "--bogus"], /bogus/],
    ] as const) {
      const r = await person(root, ...args);
      assert.match(oneLine(r, args.join(" ")), pattern);
    }
    const status = JSON.parse((await person(root, "revoke", "--json")).stdout);
    assert.deepEqual(status, { ok: true, root, task_id: status.task_id, revoked: false }, "nothing was granted, so nothing to revoke");
    assert.match(oneLine(await run([BINARY, "status", "--ttl", "5m"], { cwd: root }), "a grant flag elsewhere"), /--ttl is an option of longrun grant, not of status/);
  });

  test("while a failed checkpoint waits, grant refuses (no write would pass) and names longrun resume", async () => {
    requireBinary();
    assert.equal((await person(root, "start", "t")).code, 0);
    writeFileSync(join(root, ".longrun", "pending_checkpoint.json"), ""); // the mark of a checkpoint that could not be kept
    assert.match(oneLine(await person(root, "grant", "go"), "grant with a failed checkpoint"), /a checkpoint of task T_\S+ failed .*`longrun resume` begins a new turn.*nothing was granted$/);
  });

  test("a paused task is resumed before a grant; revoke with no lease says so and exits 0", async () => {
    requireBinary();
    assert.equal((await person(root, "start", "t")).code, 0);
    assert.equal((await person(root, "checkpoint", "--summary", "s", "--next-step", "n")).code, 0);
    assert.match(oneLine(await person(root, "grant", "go on"), "grant on a paused task"), /is paused: `longrun resume` continues it/);
    assert.equal((await person(root, "resume")).code, 0);
    const g = await person(root, "grant", "go on", "--ttl", "90s");
    assert.equal(g.code, 0, g.stderr);
    assert.match(g.stdout, /^writes granted for turn 2 of task .*until .*Z \(1m30s\)/);
    assert.match((await person(root, "status")).stdout, /writable for turn 2 \(granted by host:cli: go on; until .*Z\)/);
    assert.equal((await person(root, "revoke")).code, 0);
    const again = await person(root, "revoke");
    assert.equal(again.code, 0);
    assert.match(again.stdout, /holds no write lease in force \(turn 2\); nothing to revoke/);
  });
});
