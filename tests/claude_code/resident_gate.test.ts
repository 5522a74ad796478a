/**
 * The resident gate through the real Claude Code CLI: with `resident_gate` in the root's
 * `.longrun/hooks.json`, the session's SessionStart hook starts `longrun hook gate`, the
 * PreToolUse hooks Claude Code runs are answered by it, and Claude Code does with those answers
 * what it does with the per-call hook's: a read-only turn's Write refused, an approved one done.
 *
 * Skips (saying why) only when the claude binary cannot run here, and never under CI=true.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import { afterEach, before, describe, test } from "node:test";
import { until } from "../support/helpers.ts";
import { describeRun } from "./claude.ts";
import { done, ensureBinary, project, removeMade, skip, T, write } from "./project.ts";

afterEach(removeMade);

/** What the gate on `root` answers to a ping ({ answered, pid }), or null when none answers. */
function ping(root: string): Promise<{ answered: number; pid: number } | null> {
  return new Promise((resolve) => {
    const c = createConnection(join(root, ".longrun", "gate.sock"));
    let got = "";
    c.setEncoding("utf8");
    c.on("connect", () => c.write(JSON.stringify({ v: 1, ping: true }) + "\n"));
    c.on("data", (d: string) => {
      got += d;
      if (got.includes("\n")) {
        c.end();
        resolve(JSON.parse(got.slice(0, got.indexOf("\n"))));
      }
    });
    c.on("error", () => resolve(null));
    c.on("close", () => resolve(null));
  });
}

describe("the resident gate through the real Claude Code CLI", { skip }, () => {
  before(() => ensureBinary());

  test("SessionStart starts it; it answers the session's PreToolUse calls as the per-call hook would", T, async () => {
    const p = await project();
    writeFileSync(join(p.root, ".longrun", "hooks.json"), JSON.stringify({ resident_gate: true }));
    const a = join(p.root, "a.txt");
    const r1 = await p.claude({ prompt: "/approve write a.txt\nwith hello in it", permissionMode: "acceptEdits", steps: [write(a, "hello\n"), done] });
    assert.equal(r1.code, 0, describeRun(r1));
    assert.equal(r1.toolResults[0]?.is_error, false, describeRun(r1));
    assert.equal(readFileSync(a, "utf8"), "hello\n");
    const up = await until(() => ping(p.root), "the gate SessionStart started");
    const before = up.answered;

    const c = join(p.root, "c.txt");
    const r2 = await p.claude({ prompt: "now write c.txt too", permissionMode: "acceptEdits", continue: true, steps: [write(c), done] });
    assert.equal(r2.code, 0, describeRun(r2));
    assert.equal(r2.toolResults[0]?.is_error, true, describeRun(r2));
    assert.match(r2.toolResults[0]!.content, /longrun: .*read-only/, describeRun(r2));
    assert.equal(existsSync(c), false, "the lease ended with the turn that had /approve");
    const after = await ping(p.root);
    assert.ok(after !== null && after.answered > before, `the gate answered the second session's Write (${before} -> ${after?.answered})`);

    rmSync(join(p.root, ".longrun", "gate.sock"));
    await until(() => {
      try {
        process.kill(up.pid, 0);
        return false;
      } catch {
        return true;
      }
    }, "the gate to end once its socket is gone");
  });
});
