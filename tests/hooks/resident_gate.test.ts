/**
 * The resident gate (`longrun hook gate`, src/hooks/gate_server.ts) against the per-call hook of
 * the compiled binary:
 * - it answers the hook's PreToolUse calls (its count of answered calls grows), byte for byte as
 *   the cold path answers the same calls (the hostile corpus, a read-only turn and a lease);
 * - it reads the state per call: a grant or a new turn made by another process applies at once;
 * - the hook trusts only a socket a longrun of this user made inside `.longrun/`: a fake server
 *   behind a link, in a directory others may write, on a socket others may open, one for another
 *   root, one that never answers, one that answers nonsense, a stale socket, a gate of another
 *   build: each time the hook decides on its own, and the decision is the cold path's;
 * - the gate ends by itself: idle, its socket removed, `.longrun/` gone.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { removeDir, run, tempDir, until } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";
import { ALWAYS_DENIED, LEASE_PASSES, MALFORMED, READ_ONLY_DENIED } from "./corpus.ts";
import { type Answer, decisionOf, payload, pool } from "./hook_calls.ts";


const sock = (root: string) => join(root, ".longrun", "gate.sock");

/**
 * A private copy of dist/longrun: a gate answers only hooks of its own executable file, and others
 * rebuild dist/longrun while these tests run.
 */
let BIN = "";
let binDir = "";
before(() => {
  requireBinary();
  binDir = tempDir();
  BIN = join(binDir, "longrun");
  copyFileSync(BINARY, BIN);
  chmodSync(BIN, 0o755);
});
after(() => removeDir(binDir));

function send(root: string, input: string): Promise<Answer> {
  return run([BIN, "hook", "claude", "PreToolUse", "--root", root], { input, env: { CLAUDE_PROJECT_DIR: "" } });
}

async function prompt(root: string, text: string): Promise<void> {
  const r = await run([BIN, "hook", "claude", "UserPromptSubmit", "--root", root], { input: JSON.stringify({ hook_event_name: "UserPromptSubmit", cwd: root, prompt: text }) });
  assert.equal(r.code, 0, r.stderr);
}


/** A root whose task is in a read-only turn (the approval was a turn ago). */
async function readOnlyRoot(): Promise<string> {
  requireBinary();
  const root = tempDir();
  await prompt(root, "Refactor the parser\n/approve start");
  await prompt(root, "now look around first");
  return root;
}

const write = (root: string) => JSON.stringify({ hook_event_name: "PreToolUse", cwd: root, tool_name: "Write", tool_input: { file_path: join(root, "a.txt"), content: "x" } });


/** One line to a unix socket and the line that comes back (or null when the other side closes first). */
function ask(path: string, line: string): Promise<string | null> {
  return new Promise((resolve) => {
    const c = createConnection(path);
    let got = "";
    c.setEncoding("utf8");
    c.on("connect", () => c.write(line + "\n"));
    c.on("data", (d: string) => {
      got += d;
      if (got.includes("\n")) {
        c.end();
        resolve(got.slice(0, got.indexOf("\n")));
      }
    });
    c.on("error", () => resolve(null));
    c.on("close", () => resolve(null));
  });
}

/** How many calls the gate on `root` has answered, or null when none answers a ping. */
async function answered(root: string): Promise<number | null> {
  const line = await ask(sock(root), JSON.stringify({ v: 1, ping: true }));
  if (line === null) return null;
  const a = JSON.parse(line) as { answered?: number };
  return typeof a.answered === "number" ? a.answered : null;
}

interface Gate {
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr: () => string;
  stop(): Promise<void>;
}

/** Starts `longrun hook gate` for `root` and waits until it answers a ping. */
async function startGate(root: string, args: string[] = [], bin = BIN): Promise<Gate> {
  const child = spawn(bin, ["hook", "gate", "--root", root, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const gate: Gate = {
    child,
    exited,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
  await until(async () => child.exitCode !== null || (await answered(root)) !== null, `the gate on ${root} to answer`);
  assert.equal(child.exitCode, null, `the gate ended at start: ${err}`);
  return gate;
}

/** A server on `path` (mode 0600, as a gate's) that answers every line with `reply` (or never, when reply is null). */
function fakeServer(path: string, reply: string | null): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((c) => {
      c.on("data", () => {
        if (reply !== null) c.end(reply + "\n");
      });
      c.on("error", () => {});
    });
    server.listen(path, () => {
      chmodSync(path, 0o600);
      resolve(server);
    });
  });
}

const closeServer = (s: Server) => new Promise<void>((resolve) => s.close(() => resolve()));

function isObject(text: string): boolean {
  try {
    const v = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}


describe("the resident gate answers as the per-call hook does", () => {
  let root = "";
  let gate: Gate | null = null;
  before(async () => {
    root = await readOnlyRoot();
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "a.txt"), "hello\n");
    symlinkSync(join(root, ".longrun"), join(root, "link-to-state"));
    writeFileSync(join(root, "evil.sh"), "rm -rf .lo" + "ngrun\n");
    chmodSync(join(root, "evil.sh"), 0o755);
    mkdirSync(join(root, "evil-fsmonitor"));
    await run(["git", "init", "-q", join(root, "evil-fsmonitor")]);
    await run(["git", "-C", join(root, "evil-fsmonitor"), "config", "core.fsmonitor", "touch pwned"]);
    await run(["git", "init", "-q", root]);
  });
  after(async () => {
    await gate?.stop();
    removeDir(root);
  });

  /** Every call answered cold (no gate), then through a gate: the answers must be the same bytes, and the gate must have answered each. */
  async function sameBothWays(calls: readonly string[]): Promise<void> {
    assert.equal(existsSync(sock(root)), false, "no gate runs for the cold answers");
    // one call at a time, both ways: git's own dry runs (git clean, git add) must not race each other
    const cold = await pool(calls, (c) => send(root, c), 1);
    gate = await startGate(root);
    let resident: Answer[];
    try {
      const before = await answered(root);
      resident = await pool(calls, (c) => send(root, c), 1);
      const after = await answered(root);
      assert.ok(before !== null && after !== null, `the gate still runs: ${gate.stderr()}`);
      // input that is not a JSON object names no root to ask: the hook decides it on its own
      assert.equal(after - before, calls.filter(isObject).length, "the gate answered every call that is a JSON object");
    } finally {
      await gate.stop();
      gate = null;
    }
    const differ = calls.map((c, i) => [c, cold[i]!, resident[i]!] as const).filter(([, a, b]) => a.code !== b.code || a.stdout !== b.stdout || a.stderr !== b.stderr);
    assert.deepEqual(differ.map(([c, a, b]) => ({ call: c.slice(0, 200), cold: a, resident: b })), []);
  }

  test("in a read-only turn: the whole hostile corpus, the lease's ordinary work and malformed input", { timeout: 600_000 }, async () => {
    await sameBothWays([...[...READ_ONLY_DENIED, ...ALWAYS_DENIED, ...LEASE_PASSES].map((c) => payload(root, c)), ...MALFORMED]);
  });

  test("under the user's lease: the calls that must still be denied and the ordinary work that passes", { timeout: 600_000 }, async () => {
    await prompt(root, "go on\n/approve the refactor");
    await sameBothWays([...ALWAYS_DENIED, ...LEASE_PASSES].map((c) => payload(root, c)));
  });
});

describe("the resident gate reads the state of every call afresh", () => {
  let root = "";
  let gate: Gate | null = null;
  before(async () => {
    root = await readOnlyRoot();
    gate = await startGate(root);
  });
  after(async () => {
    await gate?.stop();
    removeDir(root);
  });

  test("a grant and a new turn made by other processes apply to the next call at once", async () => {
    const n0 = (await answered(root))!;
    assert.equal(decisionOf(await send(root, write(root))), "deny", "read-only turn");
    await prompt(root, "now write it\n/approve write a.txt");
    assert.equal(decisionOf(await send(root, write(root))), "none", "the lease granted by another process");
    await prompt(root, "and stop writing"); // a new turn ends the lease
    assert.equal(decisionOf(await send(root, write(root))), "deny", "the lease ended by another process");
    writeFileSync(join(root, ".longrun", "hooks.json"), "{ not json");
    const broken = await send(root, write(root));
    assert.equal(broken.code, 2, "a settings file made unreadable since the last call fails closed");
    rmSync(join(root, ".longrun", "hooks.json"));
    assert.equal((await answered(root))! - n0, 4, "the gate answered all four");
  });

  test("the gate's socket is a socket only this user may open, and the gate refuses a second start", async () => {
    const st = lstatSync(sock(root));
    assert.ok(st.isSocket());
    assert.equal(st.mode & 0o777, 0o600);
    const second = await run([BIN, "hook", "gate", "--root", root]);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /already answers/);
  });
});

describe("the hook trusts no socket it should not, and decides on its own", () => {
  let root = "";
  let other = "";
  let coldDeny: Answer;
  before(async () => {
    root = await readOnlyRoot(); // a Write is denied
    other = tempDir();
    await prompt(other, "Another task\n/approve start"); // another root, where a Write passes
    coldDeny = await send(root, write(root));
    assert.equal(decisionOf(coldDeny), "deny");
  });
  after(() => {
    removeDir(root);
    removeDir(other);
  });

  const PASS = (r: string) => JSON.stringify({ v: 1, root: r, result: { code: 0, stdout: "", stderr: "" } });

  async function withFake(path: string, reply: string | null, check: () => Promise<void>): Promise<void> {
    const server = await fakeServer(path, reply);
    try {
      await check();
    } finally {
      await closeServer(server);
      rmSync(path, { force: true });
    }
  }

  test("a socket behind a link out of .longrun/ is not trusted", async () => {
    const outside = tempDir();
    const elsewhere = join(outside, "agent.sock");
    try {
      await withFake(elsewhere, PASS(root), async () => {
        symlinkSync(elsewhere, sock(root));
        try {
          assert.deepEqual(await send(root, write(root)), coldDeny);
        } finally {
          rmSync(sock(root), { force: true });
        }
      });
    } finally {
      removeDir(outside);
    }
  });

  test("a socket others may open, or in a .longrun/ others may write, is not trusted", async () => {
    await withFake(sock(root), PASS(root), async () => {
      chmodSync(sock(root), 0o666);
      assert.deepEqual(await send(root, write(root)), coldDeny);
      chmodSync(sock(root), 0o600);
      chmodSync(join(root, ".longrun"), 0o777);
      try {
        assert.deepEqual(await send(root, write(root)), coldDeny);
      } finally {
        chmodSync(join(root, ".longrun"), 0o700);
      }
    });
  });

  test("an answer about another root, or one that is not a result, is not taken", async () => {
    for (const reply of [PASS(other), JSON.stringify({ v: 1, root, result: { code: 1, stdout: "", stderr: "" } }), "allow", JSON.stringify({ v: 2, root, result: { code: 0, stdout: "", stderr: "" } })]) {
      await withFake(sock(root), reply, async () => {
        assert.deepEqual(await send(root, write(root)), coldDeny, reply);
      });
    }
  });

  test("a gate that never answers: the hook stops waiting and decides on its own", { timeout: 60_000 }, async () => {
    await withFake(sock(root), null, async () => {
      assert.equal(lstatSync(sock(root)).mode & 0o777, 0o600, "a socket the hook would trust");
      assert.deepEqual(await send(root, write(root)), coldDeny);
    });
  });

  test("a stale socket (its gate gone) is passed over", async () => {
    const server = await fakeServer(sock(root), null);
    await closeServer(server); // Node removes the file on close: leave a socket file nobody listens on
    if (!existsSync(sock(root))) {
      const again = await fakeServer(sock(root), null);
      renameSync(sock(root), sock(root) + ".keep");
      await closeServer(again);
      renameSync(sock(root) + ".keep", sock(root));
    }
    try {
      assert.ok(lstatSync(sock(root)).isSocket());
      assert.deepEqual(await send(root, write(root)), coldDeny);
    } finally {
      rmSync(sock(root), { force: true });
    }
  });

  test("the gate of another root, its socket moved here, answers nothing and ends", async () => {
    const gate = await startGate(other);
    try {
      renameSync(sock(other), sock(root));
      assert.deepEqual(await send(root, write(root)), coldDeny, "the other root's gate passes nothing here");
      assert.equal(await gate.exited, 0, "its socket left its place: it ends");
    } finally {
      await gate.stop();
      rmSync(sock(root), { force: true });
    }
  });

  test("a gate of another build answers nothing and ends", async () => {
    const dir = tempDir();
    const copy = join(dir, "longrun");
    copyFileSync(BIN, copy);
    chmodSync(copy, 0o755);
    const gate = await startGate(root, [], copy);
    try {
      assert.deepEqual(await send(root, write(root)), coldDeny);
      assert.equal(await gate.exited, 0, "asked by another build, it ends");
    } finally {
      await gate.stop();
      removeDir(dir);
    }
  });

  test("requests other than PreToolUse calls are not decided", async () => {
    const gate = await startGate(root);
    try {
      const env: Record<string, string> = {};
      const line = await ask(sock(root), JSON.stringify({ v: 1, id: "x", event: "UserPromptSubmit", rootFlag: root, root, env, cwd: root, input: "{}" }));
      assert.ok(line !== null);
      assert.ok("fallback" in JSON.parse(line), line);
      assert.equal(await answered(root), 0);
    } finally {
      await gate.stop();
    }
  });
});

/** The pid of the gate that answers on `root`, or null. */
async function gatePid(root: string): Promise<number | null> {
  const line = await ask(sock(root), JSON.stringify({ v: 1, ping: true }));
  return line === null ? null : ((JSON.parse(line) as { pid?: number }).pid ?? null);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("SessionStart starts the resident gate when the root's settings ask for it", () => {
  test("with resident_gate in .longrun/hooks.json a gate comes up, and the next call is its; without, none", async () => {
    requireBinary();
    const root = tempDir();
    try {
      await prompt(root, "A task\n/approve start");
      const start = () => run([BIN, "hook", "claude", "SessionStart", "--root", root], { input: JSON.stringify({ hook_event_name: "SessionStart", source: "startup", cwd: root }) });
      assert.equal((await start()).code, 0);
      assert.equal(existsSync(sock(root)), false, "not asked for: no gate");
      writeFileSync(join(root, ".longrun", "hooks.json"), JSON.stringify({ resident_gate: true }));
      assert.equal((await start()).code, 0);
      const pid = await until(() => gatePid(root), "the gate SessionStart started");
      assert.equal(decisionOf(await send(root, write(root))), "deny", "the session's first turn is read-only");
      assert.equal(await answered(root), 1, "the gate answered it");
      rmSync(sock(root));
      await until(() => !alive(pid), "the gate to end once its socket is gone");
    } finally {
      removeDir(root);
    }
  });
});

describe("the resident gate ends by itself", () => {
  test("when idle, when its socket is removed, when .longrun/ goes; and it lays nothing out", async () => {
    requireBinary();
    const root = tempDir();
    try {
      const refused = await run([BIN, "hook", "gate", "--root", root]);
      assert.equal(refused.code, 2, "no .longrun/ yet");
      assert.equal(existsSync(join(root, ".longrun")), false, "the gate lays nothing out");
      await prompt(root, "A task\n/approve start");
      const idle = await startGate(root, ["--idle-exit", "1"]);
      assert.equal(await idle.exited, 0);
      assert.equal(existsSync(sock(root)), false, "it removes its socket");
      const removed = await startGate(root);
      rmSync(sock(root));
      assert.equal(await removed.exited, 0);
      const gone = await startGate(root);
      rmSync(join(root, ".longrun"), { recursive: true, force: true });
      assert.equal(await gone.exited, 0);
    } finally {
      removeDir(root);
    }
  });
});

/**
 * Attacks on the resident gate kept from task R: a gate started under another session's
 * environment, a root with odd characters, one too long for a socket, a parent root's gate, a
 * lease revoked by a person between two calls, hooks.json changed between calls, and a flood of
 * idle, oversized and nonsense connections. Each time the hook's answer is the cold path's.
 */
describe("attacks on the resident gate", () => {
  /** The answers of `calls` cold, then through a gate started with `gateEnv` (another session's environment). */
  async function coldThenResident(root: string, calls: readonly string[], gateEnv: Record<string, string>): Promise<{ cold: Answer[]; resident: Answer[]; answeredByGate: number }> {
    const cold = await pool(calls, (c) => send(root, c), 1);
    const child = spawn(BIN, ["hook", "gate", "--root", root], { stdio: ["ignore", "ignore", "pipe"], env: gateEnv, cwd: "/" });
    let err = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    try {
      await until(async () => child.exitCode !== null || (await answered(root)) !== null, "the gate to answer");
      assert.equal(child.exitCode, null, `the gate ended at start: ${err}`);
      const resident = await pool(calls, (c) => send(root, c), 1);
      return { cold, resident, answeredByGate: (await answered(root)) ?? -1 };
    } finally {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    }
  }

  const bashCall = (root: string, command: string) => JSON.stringify({ hook_event_name: "PreToolUse", cwd: root, tool_name: "Bash", tool_input: { command } });

  test("a gate started under another environment (HOME, PATH, GIT_*) decides each call under the hook's, as the cold path does", { timeout: 120_000 }, async () => {
    const root = await readOnlyRoot();
    const fakeHome = tempDir();
    try {
      await prompt(root, "go on\n/approve the refactor");
      await run(["git", "init", "-q", root]);
      writeFileSync(join(root, "a.txt"), "hello\n");
      writeFileSync(join(root, "scratch.tmp"), "x\n");
      const home = process.env.HOME ?? "/root";
      const calls = [
        write(root),
        bashCall(root, "git clean -fd"),
        bashCall(root, "git status"),
        bashCall(root, "ls ~"),
        bashCall(root, "cat ~/.claude/settings.json"),
        bashCall(root, `echo x > ${home}/.bashrc`),
        bashCall(root, "echo x > a.txt"),
        JSON.stringify({ hook_event_name: "PreToolUse", cwd: root, tool_name: "Write", tool_input: { file_path: `${home}/.claude/settings.json`, content: "{}" } }),
        JSON.stringify({ hook_event_name: "PreToolUse", cwd: root, tool_name: "Read", tool_input: { file_path: `${home}/.claude/settings.json` } }),
      ];
      const gateEnv = { HOME: fakeHome, PATH: "/nonexistent", GIT_DIR: join(fakeHome, "elsewhere.git"), GIT_WORK_TREE: fakeHome, CLAUDE_PROJECT_DIR: fakeHome };
      const { cold, resident, answeredByGate } = await coldThenResident(root, calls, gateEnv);
      assert.equal(answeredByGate, calls.length, "the gate answered every call");
      const differ = calls.map((c, i) => ({ call: c.slice(0, 160), cold: cold[i]!, resident: resident[i]! })).filter((d) => JSON.stringify(d.cold) !== JSON.stringify(d.resident));
      assert.deepEqual(differ, []);
    } finally {
      removeDir(root);
      removeDir(fakeHome);
    }
  });

  test("a root whose path has spaces, quotes, a newline and non-ASCII letters is served for itself only", { timeout: 60_000 }, async () => {
    const base = tempDir();
    const root = join(base, "a b'\"$(x)\n库");
    mkdirSync(root);
    try {
      await prompt(root, "Refactor\n/approve start");
      await prompt(root, "look first");
      const cold = await send(root, write(root));
      assert.equal(decisionOf(cold), "deny");
      const gate = await startGate(root);
      try {
        assert.deepEqual(await send(root, write(root)), cold);
        assert.equal(await answered(root), 1);
      } finally {
        await gate.stop();
      }
    } finally {
      removeDir(base);
    }
  });

  test("a root too long for a unix socket gets no gate, and its hook decides on its own", async () => {
    const base = tempDir();
    const root = join(base, "d".repeat(Math.max(1, 101 - base.length)));
    mkdirSync(root);
    try {
      await prompt(root, "Refactor\n/approve start");
      await prompt(root, "look first");
      const r = await run([BIN, "hook", "gate", "--root", root]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /longer than a unix socket allows/);
      assert.equal(decisionOf(await send(root, write(root))), "deny");
    } finally {
      removeDir(base);
    }
  });

  test("a parent root's gate answers nothing for a root inside it", async () => {
    const parent = await readOnlyRoot();
    const child = join(parent, "inner");
    mkdirSync(child);
    try {
      await prompt(child, "Inner task\n/approve start"); // the inner root holds a lease: its Write passes
      const cold = await send(child, write(child));
      assert.equal(decisionOf(cold), "none");
      const gate = await startGate(parent);
      try {
        assert.deepEqual(await send(child, write(child)), cold);
        assert.equal(decisionOf(await send(parent, write(parent))), "deny", "the parent's read-only turn");
        assert.equal(await answered(parent), 1, "the parent's gate answered only the parent's call");
      } finally {
        await gate.stop();
      }
    } finally {
      removeDir(parent);
    }
  });

  test("a lease a person grants and revokes (longrun grant / revoke) between two calls applies at once; so does hooks.json changed", { timeout: 60_000 }, async () => {
    const root = await readOnlyRoot();
    const gate = await startGate(root);
    try {
      assert.equal(decisionOf(await send(root, write(root))), "deny");
      const g = await run([BIN, "grant", "write a.txt", "--root", root]);
      assert.equal(g.code, 0, g.stderr);
      assert.equal(decisionOf(await send(root, write(root))), "none", "granted by a person's CLI");
      const r = await run([BIN, "revoke", "--root", root]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(decisionOf(await send(root, write(root))), "deny", "revoked by a person's CLI");
      // hooks.json turns the sandbox off: a Bash call is passed as it is instead of rewritten into it
      const bash = bashCall(root, "ls");
      const wrapped = await send(root, bash);
      assert.match(wrapped.stdout, /updatedInput/);
      writeFileSync(join(root, ".longrun", "hooks.json"), JSON.stringify({ sandbox: "off" }));
      const plain = await send(root, bash);
      assert.doesNotMatch(plain.stdout, /updatedInput/, "the changed settings apply to the next call");
      rmSync(join(root, ".longrun", "hooks.json"));
      assert.match((await send(root, bash)).stdout, /updatedInput/);
      assert.equal(await answered(root), 6, "the gate answered every call");
    } finally {
      await gate.stop();
      removeDir(root);
    }
  });

  test("a flood of idle, oversized and nonsense connections: the hook's answer is still the cold path's", { timeout: 120_000 }, async () => {
    const root = await readOnlyRoot();
    const cold = await send(root, write(root));
    const gate = await startGate(root);
    const held: ReturnType<typeof createConnection>[] = [];
    try {
      for (let i = 0; i < 200; i++) {
        const c = createConnection(sock(root));
        c.on("error", () => {});
        held.push(c); // connects and sends nothing
      }
      const junk = [
        "x".repeat(10 * 1024 * 1024) + "\n", // past the request limit
        JSON.stringify({ v: 1, id: "x", event: "PreToolUse", rootFlag: null, root, env: { LONGRUN_STORE: "" }, cwd: "/nonexistent", input: "{}" }) + "\n",
        JSON.stringify({ v: 1, id: "x", event: "PreToolUse", rootFlag: null, root, env: [1], cwd: root, input: 5 }) + "\n",
        "\u0000\u0001\u0002\n",
      ];
      const sent = await Promise.all(junk.map((line) => new Promise<string>((resolve) => {
        const c = createConnection(sock(root));
        let got = "";
        c.setEncoding("utf8");
        c.on("connect", () => c.write(line));
        c.on("data", (d: string) => (got += d));
        c.on("error", () => resolve(got));
        c.on("close", () => resolve(got));
      })));
      for (const got of sent) assert.doesNotMatch(got, /"result"/, "nothing but a hook's own call is decided");
      for (let i = 0; i < 5; i++) assert.deepEqual(await send(root, write(root)), cold);
    } finally {
      for (const c of held) c.destroy();
      await gate.stop();
      removeDir(root);
    }
  });
});
