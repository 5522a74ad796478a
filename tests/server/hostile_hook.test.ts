/**
 * The Claude Code PreToolUse hook on a root on a libSQL server, attacked by an agent with a shell:
 * it cannot change the hook's argv or environment (Claude Code runs the hook with the host's), but
 * it can write files and run commands the hook lets through, and it can start programs that listen
 * on ports. Each test runs the real binary as Claude Code does (tests/support/hook_run.ts) against a
 * real sqld (tests/support/sqld.ts) and asserts the denial, and that the lease on the server did not change.
 *
 * tests/server/store.test.ts has the basics (lease read on the server, unreachable server denies,
 * the state directory's own files protected under a lease, a state directory outside .longrun
 * refused); these are the tricks around them.
 */
import assert from "node:assert/strict";
import { mkdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, type Server as HttpServer } from "node:http";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { run } from "../support/helpers.ts";
import { decision, hook } from "../support/hook_run.ts";
import { BINARY, Server } from "../support/server.ts";
import { freePort, type Sqld, sqldMissing, startSqld, useSqld } from "../support/sqld.ts";

const skip = sqldMissing();

function runner(url: string, project: string, stateDir: string): Server {
  return new Server({ name: "binary", argv: [BINARY] }, ["serve", "--store", url, "--project", project, "--state-dir", stateDir]);
}

/** A plain HTTP server on 127.0.0.1 that answers every request with `reply` (or never, when null). */
async function listen(reply: { status: number; body: string } | null): Promise<{ url: string; close: () => Promise<void> }> {
  const port = await freePort();
  const held: import("node:http").ServerResponse[] = [];
  const server: HttpServer = createServer((_req, res) => {
    if (reply === null) return void held.push(res);
    res.writeHead(reply.status, { "content-type": "application/json" }).end(reply.body);
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const res of held) res.destroy();
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}

describe("the PreToolUse hook on a server store under attack (the binary against sqld)", { skip }, () => {
  const { db: server, dir } = useSqld();
  let db: Sqld;
  before(() => void (db = server()));

  const writeIn = (project: string) => ({ tool_name: "Write", tool_input: { file_path: join(project, "a.txt"), content: "x" } });

  test("a read-only turn stays denied whatever the server answers instead of libSQL: garbage, an error status, a refusal, silence", async () => {
    const project = dir();
    const state = join(dir(), ".longrun", "runner");
    const cases: [string, { status: number; body: string } | null][] = [
      ["200 with a body that is not Hrana", { status: 200, body: '{"results":[{"type":"ok","response":{"type":"execute","result":{"cols":[],"rows":[]}}}]}' }],
      ["200 with HTML", { status: 200, body: "<html>hello</html>" }],
      ["500", { status: 500, body: "{}" }],
      ["401", { status: 401, body: "{}" }],
      ["404", { status: 404, body: "{}" }],
      ["no answer at all", null],
    ];
    for (const [what, reply] of cases) {
      const fake = await listen(reply);
      try {
        const r = await hook(project, "PreToolUse", writeIn(project), { LONGRUN_STORE: fake.url, LONGRUN_PROJECT: "p", LONGRUN_STATE_DIR: state });
        assert.equal(decision(r), "deny", `${what}: ${r.stdout}${r.stderr}`);
      } finally {
        await fake.close();
      }
    }
  });

  test("malformed hook input with a server store is denied, with the server up and with it unreachable", async () => {
    const own = await startSqld();
    const project = dir();
    const state = join(dir(), ".longrun", "runner");
    const env = { LONGRUN_STORE: own.url, LONGRUN_PROJECT: "p", LONGRUN_STATE_DIR: state };
    const s = runner(own.url, "p", state);
    try {
      await s.result("task.start", { description: "malformed" });
      await s.result("writes.enable", { reason: "a lease, to show malformed input is denied even then" });
      const payloads: Record<string, unknown>[] = [
        { tool_name: "Write" },
        { tool_name: "Write", tool_input: "file_path=/etc/x" },
        { tool_name: "Write", tool_input: { file_path: 7, content: "x" } },
        { tool_name: ["Write"], tool_input: { file_path: join(project, "a"), content: "x" } },
        { tool_name: "Write\u0000", tool_input: { file_path: join(project, "a"), content: "x" } },
        { tool_name: "Bash", tool_input: { command: { toString: "rm -rf ." } } },
      ];
      for (const p of payloads) assert.equal(decision(await hook(project, "PreToolUse", p, env)), "deny", JSON.stringify(p));
      // not JSON, not an object, not UTF-8
      const protoKey = `{"tool_name":"Write","tool_input":{"__proto__":{"file_path":"${project}/a","content":"x"}}}`;
      for (const input of ["not json", "[]", "null", '"Write"', protoKey, Buffer.from([0x7b, 0xff, 0xfe, 0x7d])]) {
        const r = await runRaw(project, input, env);
        assert.equal(decision({ code: r.code, out: r.stdout.trim() ? JSON.parse(r.stdout) : null }), "deny", String(input));
      }
      await own.kill();
      for (const p of [...payloads, writeIn(project)]) assert.equal(decision(await hook(project, "PreToolUse", p, env)), "deny", JSON.stringify(p));
    } finally {
      await s.close();
      await own.stop();
    }
  });

  /** A runner on its own sqld with a task and a lease, its state directory under a home of its own (~/.local/state/.longrun/runner). */
  const withLease = async (fn: (o: { project: string; home: string; state: string; env: Record<string, string> }) => Promise<void>) => {
    const own = await startSqld();
    const project = dir();
    const home = dir();
    const state = join(home, ".local", "state", ".longrun", "runner");
    const s = runner(own.url, "p", state);
    try {
      await s.result("task.start", { description: "lease" });
      await s.result("writes.enable", { reason: "anything" });
      await fn({ project, home, state, env: { LONGRUN_STORE: own.url, LONGRUN_PROJECT: "p", LONGRUN_STATE_DIR: state, HOME: home } });
    } finally {
      await s.close();
      await own.stop();
    }
  };

  test("under a lease the agent cannot make a .longrun of its own, nor reach the state directory by other spellings", async () =>
    withLease(async ({ project, home, env }) => {
      const elsewhere = dir();
      const attempts: [string, Record<string, unknown>][] = [
        ["mkdir a .longrun", { tool_name: "Bash", tool_input: { command: `mkdir -p ${elsewhere}/.longrun/runner` } }],
        ["Write into a new .longrun", { tool_name: "Write", tool_input: { file_path: `${elsewhere}/.longrun/runner/pending_checkpoint.json`, content: "" } }],
        ["write the counter through ..", { tool_name: "Write", tool_input: { file_path: `${home}/.local/state/x/../.longrun/runner/write_seq`, content: "0" } }],
        ["write the counter in another case", { tool_name: "Write", tool_input: { file_path: `${home}/.local/state/.LONGRUN/runner/write_seq`, content: "0" } }],
        ["echo into the counter", { tool_name: "Bash", tool_input: { command: `echo 0 > ~/.local/state/.longrun/runner/write_seq` } }],
        ["mkdir in place of the counter", { tool_name: "Bash", tool_input: { command: `mkdir ~/.local/state/.longrun/runner/write_seq` } }],
        ["cd and rm by a glob", { tool_name: "Bash", tool_input: { command: `cd ~/.local/state && rm -rf .l*` } }],
        ["find -delete", { tool_name: "Bash", tool_input: { command: `find ~/.local -delete` } }],
        ["symlink to the pending file", { tool_name: "Bash", tool_input: { command: `ln -s ~/.local/state/.longrun/runner/pending_checkpoint.json ${project}/p` } }],
      ];
      for (const [what, payload] of attempts) assert.equal(decision(await hook(project, "PreToolUse", payload, env)), "deny", what);
      assert.notEqual(decision(await hook(project, "PreToolUse", writeIn(project), env)), "deny", "the lease itself works");
    }));

  // Found by this suite: the gate protects paths with a .longrun segment, not the directories above
  // one, so under a lease the agent can move, remove or relink a parent of the state directory,
  // which takes a pending checkpoint out of the hook's sight as surely as deleting it. The gate now
  // refuses every write while the state directory is not there (fail closed), until the user's next
  // message lays it out again.
  test("a state directory taken away through a directory above it (moved, removed, relinked) closes the gate, even under a lease", async () =>
    withLease(async ({ project, home, state, env }) => {
      const writes = async () => decision(await hook(project, "PreToolUse", writeIn(project), env)) !== "deny";
      assert.ok(await writes(), "the lease lets a write by at first");
      const local = join(home, ".local");
      const stateParent = join(local, "state");
      const attacks: [string, () => void][] = [
        ["mv ~/.local/state ~/.local/state-away", () => renameSync(stateParent, join(local, "state-away"))],
        ["rm -rf ~/.local", () => rmSync(local, { recursive: true })],
        ["ln -sfn /tmp ~/.local/state", () => (rmSync(stateParent, { recursive: true }), symlinkSync(tmpdir(), stateParent))],
        ["a file in place of ~/.local/state", () => (rmSync(stateParent, { recursive: true }), writeFileSync(stateParent, ""))],
      ];
      for (const [what, attack] of attacks) {
        rmSync(local, { recursive: true, force: true });
        mkdirSync(state, { recursive: true });
        attack();
        const r = await hook(project, "PreToolUse", writeIn(project), env);
        assert.equal(decision(r), "deny", `${what}: a write passed with the state directory out of sight`);
        assert.match(JSON.stringify(r.out ?? "") + r.stderr, /state directory/, `${what}: the refusal says why`);
      }
      // the user's next message lays it out again (UserPromptSubmit); the new turn ended the lease
      rmSync(local, { recursive: true, force: true });
      await hook(project, "UserPromptSubmit", { prompt: "go on" }, env);
      assert.ok(statSync(state).isDirectory(), "laid out again by the next message");
      assert.equal(decision(await hook(project, "PreToolUse", writeIn(project), env)), "deny", "read-only in the new turn");
    }));

  // Found by this suite: the hook checked for a .longrun segment in the text of LONGRUN_STATE_DIR,
  // not where it leads: `..` after it, a relative path (resolved against the hook's working
  // directory) and a symlink named .longrun passed, and the directory used was one the gate does not protect.
  test("a state directory that only looks as if it were inside .longrun is refused (the hook denies)", async () => {
    const own = await startSqld();
    const project = dir();
    const base = dir();
    mkdirSync(join(base, "cfg", ".longrun"), { recursive: true });
    mkdirSync(join(base, "cfg", "open"));
    mkdirSync(join(base, "opendir"));
    mkdirSync(join(base, "sl"));
    symlinkSync(join(base, "opendir"), join(base, "sl", ".longrun"));
    const s = runner(own.url, "p", join(dir(), ".longrun", "runner"));
    try {
      await s.result("task.start", { description: "lease" });
      await s.result("writes.enable", { reason: "anything" });
      const accepted = [];
      for (const stateDir of [`${base}/cfg/.longrun/../open`, ".longrun/runner", join(base, "sl", ".longrun", "r")]) {
        // run in the project directory, as Claude Code runs hooks (a relative path is resolved there)
        const input = JSON.stringify({ hook_event_name: "PreToolUse", cwd: project, session_id: "s1", ...writeIn(project) });
        const r = await runRaw(project, input, { LONGRUN_STORE: own.url, LONGRUN_PROJECT: "p", LONGRUN_STATE_DIR: stateDir });
        if (decision({ code: r.code, out: r.stdout.trim() ? JSON.parse(r.stdout) : null }) !== "deny") accepted.push(stateDir);
      }
      assert.deepEqual(accepted, [], "state directories outside any real .longrun were accepted");
    } finally {
      await s.close();
      await own.stop();
    }
  });
});

/** The hook with stdin given as is (not JSON-encoded by the helper), in the project directory as Claude Code runs it. */
const runRaw = (project: string, input: string | Uint8Array, env: Record<string, string>) =>
  run([BINARY, "hook", "claude", "PreToolUse", "--root", project], { input, env, cwd: project });
