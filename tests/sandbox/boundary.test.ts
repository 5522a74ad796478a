/**
 * `longrun sandbox` through the binary: every attack runs for real inside the boundary, and the
 * test shows it did no harm (and, where it proves the attack is real, that it works unconfined).
 * Skipped, visibly, only where bubblewrap is not installed.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { findBwrap } from "../../src/sandbox/status.ts";
import { removeDir, run, tempDir, until } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";
import { skipped } from "../support/skips.ts";

const BWRAP = findBwrap(process.env.PATH);
const skip = skipped("tests/sandbox/boundary", BWRAP === null ? "bubblewrap not installed" : false);

interface Made {
  dir: string;
  token: string;
  marker: string;
  taskId: string;
}

const made: string[] = [];

/** A real longrun root in a git repository: a task, a memory holding `marker`, a host token in .longrun/http.json. */
async function makeRoot(name: string): Promise<Made> {
  const dir = tempDir(`longrun-sbx-${name}-`);
  made.push(dir);
  execFileSync("git", ["init", "-q", dir]);
  execFileSync("git", ["-C", dir, "config", "user.email", "t@example.invalid"]);
  execFileSync("git", ["-C", dir, "config", "user.name", "t"]);
  const marker = `MARKER_${name}_${Math.random().toString(36).slice(2)}`;
  const token = `TOKEN_${name}_${Math.random().toString(36).slice(2)}`;
  const lines = [
    { jsonrpc: "2.0", id: 1, method: "task.start", params: { description: "sandbox boundary test" } },
    { jsonrpc: "2.0", id: 2, method: "memory.save", params: { type: "note", title: "words", content: `the user said ${marker}` } },
  ].map((l) => JSON.stringify(l) + "\n");
  const served = await run([BINARY, "serve", "--root", dir], { input: lines.join("") });
  assert.equal(served.code, 0, served.stderr);
  const taskId = String(JSON.parse(served.stdout.split("\n").find((l) => l.includes('"id":1'))!).result.task.task_id);
  writeFileSync(join(dir, ".longrun", "http.json"), JSON.stringify({ host_token: token, agent_token: `${token}_agent` }));
  const stored = readdirSync(dir).filter((f) => f.startsWith("memory.db")).some((f) => readFileSync(join(dir, f)).includes(marker));
  assert.ok(stored, "the marker is in memory.db (else the test proves nothing)");
  return { dir, token, marker, taskId };
}

function sandbox(mode: string, root: string, script: string, options: { env?: Record<string, string>; input?: string; cwd?: string } = {}) {
  return run([BINARY, "sandbox", "--mode", mode, "--root", root, "--", "bash", "-c", script], { cwd: options.cwd ?? root, env: options.env, input: options.input });
}

/** Processes whose command line holds `marker` (found through /proc). */
function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)) out.push(Number(pid));
    } catch {
      // gone
    }
  }
  return out;
}

describe("longrun sandbox", { skip }, () => {
  let a: Made;
  let b: Made;
  let home: string;
  before(async () => {
    requireBinary();
    a = await makeRoot("a");
    b = await makeRoot("b"); // a sibling root: both sit in the temporary directory
    home = tempDir("longrun-sbx-home-");
    made.push(home);
    mkdirSync(join(home, ".claude"));
    writeFileSync(join(home, ".claude", ".credentials.json"), JSON.stringify({ accessToken: "CLAUDE_LOGIN_SECRET" }));
  });
  after(() => {
    for (const d of made) {
      try {
        execFileSync("chmod", ["-R", "u+rwX", d]);
      } catch {
        // removed already
      }
      removeDir(d);
    }
  });

  test("read mode: a write anywhere fails, the scratch TMPDIR works, and it is gone afterwards", async () => {
    const outside = join(a.dir, "..", `longrun-sbx-outside-${process.pid}`);
    const r = await sandbox("read", a.dir, `for p in ./x "${outside}" "$HOME/longrun-sbx-x" /var/tmp/longrun-sbx-x .git/x; do ( : > "$p" ) 2>/dev/null && echo "WROTE $p"; done; mkdir d 2>/dev/null && echo WROTE d; echo ok > "$TMPDIR/f" && cat "$TMPDIR/f"; echo "$TMPDIR"`);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /WROTE/);
    const lines = r.stdout.trim().split("\n");
    assert.equal(lines[0], "ok");
    assert.ok(!existsSync(lines[1]!), "the scratch directory is removed");
    for (const p of [join(a.dir, "x"), outside, join(a.dir, "d")]) assert.ok(!existsSync(p), p);
  });

  test("reading through the root reveals no token, no memory and nothing of another root or of Claude Code's login", async () => {
    const secrets = [a.token, a.marker, b.token, b.marker, "CLAUDE_LOGIN_SECRET", "ENV_HOST_SECRET"];
    const script = [
      "cat .longrun/http.json",
      "grep -a -r host_token .",
      `grep -a -r ${a.marker.slice(0, 9)} .`,
      `git diff --no-index . "${b.dir}"`,
      `diff -a -r . "${b.dir}"`,
      'tar -cf "$TMPDIR/all.tar" . ; cat "$TMPDIR/all.tar"',
      `cat memory.db* "${b.dir}"/memory.db* "${b.dir}/.longrun/http.json"`,
      "cat ~/.claude/.credentials.json",
      "cat /proc/*/environ; env",
    ].join("\n");
    const env = { HOME: home, LONGRUN_HOST_TOKEN: "ENV_HOST_SECRET" };
    for (const mode of ["read", "lease"]) {
      const r = await sandbox(mode, a.dir, script, { env });
      assert.notEqual(r.code, 126, r.stderr);
      for (const s of secrets) assert.ok(!(r.stdout + r.stderr).includes(s), `${mode}: ${s} leaked`);
    }
    // the same commands unconfined do read them: the attacks are real
    const plainTmp = tempDir("longrun-sbx-plain-");
    made.push(plainTmp);
    const plain = await run(["bash", "-c", script], { cwd: a.dir, env: { ...env, TMPDIR: plainTmp } });
    for (const s of [a.token, a.marker, b.token, "CLAUDE_LOGIN_SECRET"]) assert.ok(plain.stdout.includes(s), `unconfined: ${s}`);
  });

  test("no connection reaches a server listening on 127.0.0.1, by /dev/tcp or otherwise", async () => {
    let connections = 0;
    const server: Server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    try {
      for (const mode of ["read", "lease"]) {
        for (const attack of [`exec 3<>/dev/tcp/127.0.0.1/${port}`, `printf x > /dev/tcp/127.0.0.1/${port}`]) {
          const r = await sandbox(mode, a.dir, attack);
          assert.notEqual(r.code, 0, `${mode}: ${attack}`);
          assert.notEqual(r.code, 126, r.stderr);
        }
      }
      const plain = await run(["bash", "-c", `printf x > /dev/tcp/127.0.0.1/${port}`]);
      assert.equal(plain.code, 0, "unconfined, the connection is made");
      await until(() => connections >= 1, "the unconfined connection");
      assert.equal(connections, 1, "only the unconfined connection arrived");
    } finally {
      server.close();
    }
  });

  test("no Unix socket outside can be connected to (a tmux server, an ssh agent, Docker listen on one)", async () => {
    const dir = tempDir("longrun-sbx-sock-");
    made.push(dir);
    const path = join(dir, "outside.sock");
    let connections = 0;
    const server: Server = createServer((s) => {
      connections++;
      s.end("OUTSIDE-REACHED\n");
    });
    await new Promise<void>((r) => server.listen(path, r));
    const connect = `python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect("${path}"); print(s.recv(100).decode())'`;
    try {
      for (const mode of ["read", "lease"]) {
        const r = await sandbox(mode, a.dir, connect);
        assert.notEqual(r.code, 0, `${mode}: ${r.stdout}`);
        assert.notEqual(r.code, 126, r.stderr);
        assert.doesNotMatch(r.stdout, /OUTSIDE-REACHED/);
      }
      const plain = await run(["bash", "-c", connect]);
      assert.match(plain.stdout, /OUTSIDE-REACHED/, "unconfined, the socket answers");
      assert.equal(connections, 1, "only the unconfined connection arrived");
    } finally {
      server.close();
    }
  });

  test("lease mode: rm -rf, git clean -ffdx, chmod -R a-w and a disguised rm leave longrun's files intact, and longrun writes afterwards", async () => {
    const c = await makeRoot("wreck");
    const r = await sandbox("lease", c.dir, "rm -rf .longrun memory.db raw_data; git clean -ffdx; printf 'rm -rf .lo%sgrun memory.d%s\\n' n b > c.sh; bash c.sh; chmod -R a-w .; exit 0");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(readFileSync(join(c.dir, ".longrun", "http.json"), "utf8")).host_token, c.token);
    const status = await run([BINARY, "status", "--root", c.dir]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, new RegExp(c.taskId));
    const save = await run([BINARY, "serve", "--root", c.dir], { input: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "memory.save", params: { type: "note", title: "after", content: "still writable" } }) + "\n" });
    assert.match(save.stdout, /"created":true/, save.stdout + save.stderr);
  });

  test("lease mode: git's config and hooks, .claude/ and shell startup files refuse writes; new files, directories and a commit work, and the commit holds no token", async () => {
    const c = await makeRoot("commit");
    writeFileSync(join(c.dir, ".bashrc"), "# mine\n");
    const targets = [".git/config", ".git/hooks/pre-commit", ".claude/settings.local.json", ".git/info/attributes", ".bashrc"];
    const script = [
      ...targets.map((t) => `( printf '\\n[core]\\n\\tfsmonitor = touch pwned\\n' >> ${t} ) 2>/dev/null && echo "WROTE ${t}"`),
      "echo hi > new.txt && mkdir build && echo b > build/out && git add -A && git commit -qm sandboxed && echo COMMITTED",
    ].join("\n");
    const r = await sandbox("lease", c.dir, script);
    assert.doesNotMatch(r.stdout, /WROTE/);
    assert.match(r.stdout, /COMMITTED/, r.stderr);
    assert.ok(!existsSync(join(c.dir, ".git", "hooks", "pre-commit")) && !existsSync(join(c.dir, ".claude", "settings.local.json")));
    assert.doesNotMatch(readFileSync(join(c.dir, ".git", "config"), "utf8"), /fsmonitor/);
    assert.equal(readFileSync(join(c.dir, ".bashrc"), "utf8"), "# mine\n");
    const files = execFileSync("git", ["-C", c.dir, "ls-tree", "-r", "--name-only", "HEAD"], { encoding: "utf8" }).split("\n");
    assert.ok(files.includes("new.txt") && files.includes("build/out"));
    assert.deepEqual(files.filter((f) => f.startsWith(".longrun") || f.startsWith("memory.db") || f.startsWith("raw_data")), []);
    const patch = execFileSync("git", ["-C", c.dir, "log", "-p", "--all"], { encoding: "utf8" });
    assert.ok(!patch.includes(c.token) && !patch.includes(c.marker));
  });

  test("lease mode: a protected path cannot be moved aside with its directory and replaced (mv .git, mv of a nested root, of longrun's executable)", async () => {
    const c = await makeRoot("rename");
    const nested = join(c.dir, "sub", "inner");
    mkdirSync(join(nested, ".longrun"), { recursive: true });
    writeFileSync(join(nested, ".longrun", "state.json"), "NESTED_STATE");
    mkdirSync(join(c.dir, "dist"));
    const exe = join(c.dir, "dist", "longrun");
    execFileSync("cp", [BINARY, exe]);
    const script = [
      "mv .git .git-old && echo MOVED .git",
      "mv sub sub-old && echo MOVED sub",
      "mv sub/inner sub/inner-old && echo MOVED inner",
      "mv dist dist-old && echo MOVED dist",
      "( : > dist/longrun ) 2>/dev/null && echo WROTE exe",
      "mv dist/longrun dist/old 2>/dev/null && echo MOVED exe",
      "exit 0",
    ].join("\n");
    const r = await run([exe, "sandbox", "--mode", "lease", "--root", c.dir, "--", "bash", "-c", script], { cwd: c.dir });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /MOVED|WROTE/);
    assert.equal(readFileSync(join(nested, ".longrun", "state.json"), "utf8"), "NESTED_STATE");
    assert.ok(existsSync(join(c.dir, ".git", "config")));
    assert.ok(readFileSync(exe).length > 1_000_000);
  });

  test("read mode: a planted git config (core.fsmonitor, core.pager) runs into a read-only file system and creates nothing", async () => {
    const c = await makeRoot("planted");
    execFileSync("git", ["-C", c.dir, "config", "core.fsmonitor", "touch pwned-fsmonitor; false"]);
    execFileSync("git", ["-C", c.dir, "config", "core.pager", "touch pwned-pager; cat"]);
    const script = "git status; git -p log -1; git diff HEAD; exit 0";
    const r = await sandbox("read", c.dir, script);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readdirSync(c.dir).filter((f) => f.startsWith("pwned")), []);
    await run(["bash", "-c", script], { cwd: c.dir }); // unconfined, the plant does run
    assert.ok(existsSync(join(c.dir, "pwned-fsmonitor")), "the planted fsmonitor runs unconfined");
  });

  test("read mode: longrun serve inside cannot grant a lease", async () => {
    const c = await makeRoot("serve");
    const rpc = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "writes.enable", params: { reason: "x" } });
    const r = await sandbox("read", c.dir, `printf '%s\\n' '${rpc}' | "${BINARY}" serve --root "${c.dir}"; exit 0`);
    assert.doesNotMatch(r.stdout, /"result"/);
    const status = await run([BINARY, "status", "--root", c.dir]);
    assert.match(status.stdout, /read-only/);
    assert.doesNotMatch(status.stdout, /writable/);
  });

  test("nothing the command leaves behind outlives it: a disowned sleep, a background mv/ln loop", async () => {
    const tag = `${process.pid}${Date.now() % 100000}`;
    const r = await sandbox("read", a.dir, `sleep 9${tag} & disown; exit 0`);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(processesWith(`9${tag}`), []);
    const c = await makeRoot("loop");
    mkdirSync(join(c.dir, "docs"));
    const loop = await sandbox("lease", c.dir, `( while :; do : LOOP_${tag}; mv docs docs.real 2>/dev/null; ln -sfn .longrun docs 2>/dev/null; done ) & disown; exit 0`);
    assert.equal(loop.code, 0, loop.stderr);
    assert.deepEqual(processesWith(`LOOP_${tag}`), []);
    const before = readdirSync(c.dir).sort();
    await run(["true"]);
    assert.deepEqual(readdirSync(c.dir).sort(), before, "nothing changes the root any more");
    assert.equal(JSON.parse(readFileSync(join(c.dir, ".longrun", "http.json"), "utf8")).host_token, c.token);
  });

  test("stdin, stdout, stderr and the exit status pass through", async () => {
    const r = await sandbox("read", a.dir, "cat; echo to-stderr >&2; exit 7", { input: "hello\n" });
    assert.equal(r.code, 7);
    assert.equal(r.stdout, "hello\n");
    assert.match(r.stderr, /to-stderr/);
  });

  test("a signal to the wrapper reaches the command", async () => {
    const child = spawn(BINARY, ["sandbox", "--mode", "read", "--root", a.dir, "--", "bash", "-c", "trap 'echo got-term; exit 3' TERM; echo ready; sleep 100 & wait"], { cwd: a.dir, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    const closed = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    await until(() => out.includes("ready"), "the command to start");
    process.kill(child.pid!, "SIGTERM"); // not child.kill(): Deno then reports the signal it sent, not the exit status
    assert.equal(await closed, 3);
    assert.match(out, /got-term/);
  });

  test("nesting only narrows: an inner lease inside an outer read sandbox cannot write", async () => {
    const inner = `"${BINARY}" sandbox --mode lease --root "${a.dir}" -- bash -c 'echo x > nested.txt'`;
    const r = await sandbox("read", a.dir, inner);
    assert.notEqual(r.code, 0);
    assert.ok(!existsSync(join(a.dir, "nested.txt")));
  });

  test("nesting as an ordinary user: the inner boundary runs, and inside a read boundary a lease still cannot write", { skip: process.getuid?.() !== 0 ? "runs as root to switch to nobody" : false }, async () => {
    const dir = tempDir("longrun-sbx-nobody-");
    made.push(dir);
    chownSync(dir, 65534, 65534);
    chmodSync(dir, 0o755);
    // nobody's own temporary directory (the tests' TMPDIR is root's), beside the root
    const scratch = tempDir("longrun-sbx-nobody-tmp-");
    made.push(scratch);
    chownSync(scratch, 65534, 65534);
    const as = (outer: string, innerMode: string) =>
      run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BINARY, "sandbox", "--mode", outer, "--root", dir, "--", BINARY, "sandbox", "--mode", innerMode, "--root", dir, "--", "bash", "-c", "echo x > n.txt && echo WROTE"], { cwd: dir, env: { HOME: dir, TMPDIR: scratch } });
    const both = await as("lease", "lease");
    assert.match(both.stdout, /WROTE/, both.stderr);
    const narrowed = await as("read", "lease");
    assert.equal(narrowed.stdout, "");
    assert.ok(existsSync(join(dir, "n.txt")), "from the first run only");
    const readInLease = await as("lease", "read");
    assert.notEqual(readInLease.code, 126, readInLease.stderr);
    assert.doesNotMatch(readInLease.stdout, /WROTE/);
  });

  test("without bubblewrap on PATH it fails closed: exit 126, one line, the command not run", async () => {
    const r = await run([BINARY, "sandbox", "--mode", "lease", "--root", a.dir, "--", "/usr/bin/touch", join(a.dir, "ran")], { env: { PATH: "/nonexistent" } });
    assert.equal(r.code, 126);
    assert.equal(r.stderr.trim().split("\n").length, 1);
    assert.match(r.stderr, /bubblewrap/);
    assert.ok(!existsSync(join(a.dir, "ran")));
  });

  test("a bwrap planted in the root ahead on PATH is not the one used", async () => {
    const c = await makeRoot("fake");
    mkdirSync(join(c.dir, "bin"));
    writeFileSync(join(c.dir, "bin", "bwrap"), `#!/bin/sh\ntouch "${c.dir}/fake-ran"\nexit 0\n`, { mode: 0o755 });
    const r = await sandbox("read", c.dir, "( : > x ) 2>/dev/null && echo WROTE; exit 0", { env: { PATH: `${c.dir}/bin:${process.env.PATH}` } });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /WROTE/);
    assert.ok(!existsSync(join(c.dir, "fake-ran")));
  });

  test("a .git/commondir the command creates is removed afterwards: it would point git at another config", async () => {
    const c = await makeRoot("commondir");
    const r = await sandbox("lease", c.dir, "mkdir -p evil && printf '[core]\\n\\tfsmonitor = touch pwned\\n' > evil/config && printf '../evil\\n' > .git/commondir");
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!existsSync(join(c.dir, ".git", "commondir")));
    assert.match(r.stderr, /removed/);
    execFileSync("git", ["-C", c.dir, "status"], { stdio: "ignore" }); // git still works
  });

  test("a second hard link to one of longrun's files (made before) is refused: the mask hides a name, not the file", async () => {
    const c = await makeRoot("hardlink");
    execFileSync("ln", [join(c.dir, ".longrun", "http.json"), join(c.dir, "innocent.txt")]);
    const r = await sandbox("read", c.dir, "cat innocent.txt");
    assert.equal(r.code, 126);
    assert.ok(!r.stdout.includes(c.token));
    assert.match(r.stderr, /hard link/);
  });

  test("bad usage is exit 2; a wrong mode or a root that is not an absolute existing directory is exit 126; one line each", async () => {
    const cases: [string[], number][] = [
      [["--mode", "read", "--root", a.dir, "true"], 2],
      [["--mode", "read", "--root", a.dir, "--"], 2],
      [["--root", a.dir, "--", "true"], 2],
      [["--mode", "read", "--root", a.dir, "--bogus", "--", "true"], 2],
      [["--mode", "write", "--root", a.dir, "--", "true"], 126],
      [["--mode", "read", "--root", "relative/dir", "--", "true"], 126],
      [["--mode", "read", "--root", join(a.dir, "missing"), "--", "true"], 126],
      [["--mode", "read", "--root", join(a.dir, ".git", "HEAD"), "--", "true"], 126],
    ];
    for (const [args, code] of cases) {
      const r = await run([BINARY, "sandbox", ...args]);
      assert.equal(r.code, code, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    }
  });
});
