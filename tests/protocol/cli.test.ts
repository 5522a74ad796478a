import assert from "node:assert/strict";
import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { testRoot } from "../support/sqld.ts";
import { join } from "node:path";
import { describe, test } from "node:test";
import { VERSION } from "../../src/version.ts";
import { REPO, removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary, TARGETS } from "../support/server.ts";

describe("the executable", () => {
  test("VERSION matches package.json", () => {
    assert.equal(VERSION, JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version);
  });

  test("copied alone into an empty directory, it runs --version, --help and the demo there", async () => {
    requireBinary();
    const empty = tempDir("longrun-empty-");
    try {
      const exe = join(empty, "longrun");
      copyFileSync(BINARY, exe);
      const env = { PATH: "/usr/bin:/bin", HOME: empty };
      const v = await run([exe, "--version"], { cwd: empty, env });
      assert.ok(v.stdout.startsWith(`longrun ${VERSION} (`), v.stdout); // then the target and commit (tests/release)
      const h = await run([exe, "--help"], { cwd: empty, env });
      assert.match(h.stdout, /longrun serve \[--root DIR\]/);
      const d = await run([exe, "demo"], { cwd: empty, env });
      assert.equal(d.code, 0, d.stdout + d.stderr);
      assert.equal(d.stdout.trim().split("\n").at(-1), "OK: checkpoint -> resume -> single-turn write lease -> finish");
    } finally {
      removeDir(empty);
    }
  });

  for (const target of TARGETS) {
    test(`${target.name}: the demo walks the seed's five steps and ends OK`, async () => {
      if (target.argv[0] === BINARY) requireBinary();
      const d = await run([...target.argv, "demo"]);
      assert.equal(d.code, 0, d.stdout + d.stderr);
      const out = d.stdout;
      for (const step of ["[1] start_task", "[2] enable_writes", "[3] checkpoint", "[4] new process: resume", "[5] re-authorize"]) {
        assert.ok(out.includes(step), step);
      }
      assert.match(out, /gate after resume: read_only; turn: 2/);
      assert.match(out, /status: completed; memory: S_0002/);
      assert.equal(out.trim().split("\n").at(-1), "OK: checkpoint -> resume -> single-turn write lease -> finish");
    });

    test(`${target.name}: an unknown command or flag exits 2 with a hint on stderr`, async () => {
      const a = await run([...target.argv, "frobnicate"]);
      assert.equal(a.code, 2);
      assert.match(a.stderr, /unknown command/);
      const b = await run([...target.argv, "serve", "--nope"]);
      assert.equal(b.code, 2);
      assert.equal(b.stdout, "");
    });
  }

  test("status, checkpoint and resume for a person at a terminal", async () => {
    requireBinary();
    const dir = tempDir();
    try {
      const none = await run([BINARY, "status", "--root", dir]);
      assert.equal(none.code, 0);
      assert.match(none.stdout, /no longrun root in/);
      assert.deepEqual(readdirSync(dir), [], "status creates nothing in a directory without a root");
      const noRoot = await run([BINARY, "checkpoint", "--root", dir, "--summary", "s", "--next-step", "n"]);
      assert.equal(noRoot.code, 2);
      assert.match(noRoot.stderr, /no longrun root in/);
      assert.deepEqual(readdirSync(dir), [], "nor does a checkpoint where there is no root");
      const bad = await run([BINARY, "status", "--root", "relative"]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /not an absolute path/);
      for (const cmd of ["serve", "mcp", "http"]) {
        const r = await run([BINARY, cmd, "--root", "/nonexistent/longrun-root"]);
        assert.equal(r.code, 2, `${cmd} refuses a bad --root at start`);
        assert.match(r.stderr, /does not exist/);
        assert.equal(r.stdout, "");
      }
    } finally {
      removeDir(dir);
    }
  });

  test("finish and recover for the person verifying: finish accepts a task waiting for verification; recover refuses a readable state unless forced", async () => {
    requireBinary();
    const dir = await testRoot();
    try {
      const rpc = (lines: object[]) => run([BINARY, "serve", "--root", dir], { input: lines.map((l, i) => JSON.stringify({ jsonrpc: "2.0", id: i + 1, ...l })).join("\n") + "\n" });
      await rpc([
        { method: "task.start", params: { description: "ship it" } },
        { method: "task.checkpoint", params: { summary: "half", next_step: "rest" } },
        { method: "task.resume" },
        { method: "task.transition", params: { to: "waiting_verification", reason: "done" } },
      ]);
      const plain = await run([BINARY, "recover", "--root", dir]);
      assert.equal(plain.code, 2);
      assert.match(plain.stderr, /conflict: Not recovered: the task state is readable/);
      const forced = await run([BINARY, "recover", "--force", "--root", dir]);
      assert.equal(forced.code, 0, forced.stderr);
      assert.match(forced.stdout, /in_progress/);
      await rpc([{ method: "task.transition", params: { to: "waiting_verification", reason: "done again" } }]);
      const done = await run([BINARY, "finish", "--summary", "looks good", "--root", dir]);
      assert.equal(done.code, 0, done.stderr);
      assert.match(done.stdout, /completed/);
      assert.match(done.stdout, /outcome saved to memory as S_/);
    } finally {
      removeDir(dir);
    }
  });
});
