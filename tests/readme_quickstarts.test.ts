/**
 * Every quick start of the README runs as written: each block of its "Quick starts" section is
 * taken from the README itself and run with the real programs (the built `longrun` first on PATH,
 * the real Claude Code CLI for `claude mcp add`, libSQL's real server for `sqld`, Python for the
 * Python block). Only what cannot be copied as is gets replaced, and only these: `/abs/project` by
 * a temporary directory, the libSQL server's port and database path by free ones (and the script
 * waits for that server to listen before the next line, as a person typing does). Without a docker
 * daemon the container block runs the image's own command line (the Dockerfile's ENTRYPOINT and
 * CMD) instead of `docker run`, and says so.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { claudeBinary } from "./claude_code/claude.ts";
import { removeDir, REPO, run, tempDir, until } from "./support/helpers.ts";
import { BINARY, requireBinary } from "./support/server.ts";
import { skipped } from "./support/skips.ts";
import { freePort, sqldBinary } from "./support/sqld.ts";

const README = readFileSync(join(REPO, "README.md"), "utf8");
const CI = process.env.CI === "true";

/** The code blocks of one "### heading" under "## Quick starts", in order, with their language. */
export function quickStart(heading: string): { lang: string; code: string }[] {
  const section = README.split(/^## /m).find((s) => s.startsWith("Quick starts"));
  assert.ok(section, "the README has a Quick starts section");
  const part = section.split(/^### /m).find((s) => s.startsWith(`${heading}\n`));
  assert.ok(part, `the README has a quick start "${heading}"`);
  return [...part.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

let dir: string;
let project: string;
let bin: string;
let home: string;
// TMPDIR inside the test's directory: Claude Code leaves its own claude-<uid>/ there
const env = () => ({ PATH: `${bin}:${process.env.PATH}`, HOME: home, TMPDIR: join(dir, "tmp"), DISABLE_AUTOUPDATER: "1", LONGRUN_BIN: BINARY, PYTHONPATH: join(REPO, "clients", "python") });
const sh = (code: string, extra: Record<string, string> = {}) => run(["bash", "-euo", "pipefail", "-c", code], { cwd: project, env: { ...env(), ...extra }, timeoutMs: 120_000 });
const inProject = (code: string) => code.replaceAll("/abs/project", project);

describe("the README's quick starts, run as written", () => {
  before(() => {
    requireBinary();
    dir = tempDir();
    bin = join(dir, "bin");
    home = join(dir, "home");
    for (const d of [bin, home, join(dir, "tmp")]) mkdirSync(d);
    symlinkSync(BINARY, join(bin, "longrun"));
  });
  // each quick start begins in an empty project directory, as a newcomer's does
  let n = 0;
  beforeEach(() => {
    project = join(dir, `project-${++n}`);
    mkdirSync(project);
  });
  after(() => removeDir(dir));

  test("At a terminal: start, grant, status, revoke and list, each exit 0, the grant the person's", async () => {
    const [block] = quickStart("At a terminal");
    assert.equal(block!.lang, "sh");
    const r = await sh(inProject(block!.code));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Fix the flaky parser test/);
    assert.match(r.stdout, /writable/i, "status after the grant says the agent may write");
    assert.match(r.stdout, /fix the parser/, "the reason is shown");
    const status = await sh("longrun status");
    assert.match(status.stdout, /read-only/, "revoke ended the lease");
  });

  test("Python over stdio: refused in turn 1, granted, the checkpoint's text once it is saved", async () => {
    const [block] = quickStart("Python over stdio");
    assert.equal(block!.lang, "python");
    const r = await run(["python3", "-c", inProject(block!.code)], { cwd: project, env: env(), timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^refused: read_only in turn 1$/m);
    assert.match(r.stdout, /\[LongRun Checkpoint\]/);
  });

  test("HTTP from a container: the image's command serves, and `longrun health` says so", async (t) => {
    const blocks = quickStart("HTTP from a container");
    const lines = blocks[0]!.code.trim().split("\n");
    assert.match(lines[0]!, /^docker build -t longrun \.$/);
    assert.match(lines[1]!, /^docker run .*longrun$/);
    assert.match(lines[2]!, /^docker exec longrun longrun health/);
    const daemon = spawnSync("docker", ["info"], { encoding: "utf8" }).status === 0;
    if (daemon && CI) t.diagnostic("a docker daemon is here: the block could run as is");
    skipped("tests/readme_quickstarts: docker build/run", daemon ? false : "no docker daemon: the image's own command line runs instead of docker run");
    // the Dockerfile's ENTRYPOINT and CMD, with /data a temporary root and a free port
    const docker = readFileSync(join(REPO, "Dockerfile"), "utf8");
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(docker)![1]!) as string[];
    const port = await freePort();
    const data = join(dir, "data");
    mkdirSync(data);
    const args = cmd.map((a) => (a === "/data" ? data : a === "8080" ? String(port) : a));
    const server = spawn(BINARY, args, { env: { ...process.env, ...env() }, stdio: ["ignore", "pipe", "pipe"] });
    try {
      await until(async () => (await run([join(bin, "longrun"), "health", "--url", `http://127.0.0.1:${port}`], { env: env() })).code === 0, "longrun health exits 0", 20_000);
      const healthCheck = /^HEALTHCHECK .*CMD (\[.*\])$/m.exec(docker);
      assert.ok(healthCheck, "the Dockerfile has a HEALTHCHECK");
      assert.deepEqual((JSON.parse(healthCheck[1]!) as string[]).slice(1, 2), ["health"], "the image checks itself with longrun health");
    } finally {
      await stop(server);
    }
  });

  test("MCP server: the real `claude mcp add` lines register servers that Claude Code connects to; a person grants with longrun grant", async () => {
    const claude = claudeBinary();
    if (!claude.bin) {
      assert.ok(!CI, `the Claude Code CLI must run under CI: ${claude.reason}`);
      skipped("tests/readme_quickstarts: MCP server", claude.reason);
      return;
    }
    symlinkSync(claude.bin, join(bin, "claude"));
    const [block] = quickStart("MCP server");
    const r = await sh(inProject(block!.code));
    assert.equal(r.code, 0, r.stderr);
    const list = await sh("claude mcp list");
    assert.equal(list.code, 0, list.stderr);
    const connected = list.stdout.split("\n").filter((l) => /Connected/.test(l) && !/Failed/.test(l));
    assert.equal(connected.length, 2, `both servers connect:\n${list.stdout}`);
    // the grant path the refusals name, for a person in the project
    const start = await sh(`longrun start "Tidy the docs"`);
    assert.equal(start.code, 0, start.stderr);
    const grant = await sh(`longrun grant "tidy the docs"`);
    assert.equal(grant.code, 0, grant.stderr);
    assert.match((await sh("longrun status")).stdout, /tidy the docs/);
  });

  test("Claude Code hooks: install, then doctor, both exit 0", async (t) => {
    const [block] = quickStart("Claude Code hooks");
    const r = await sh(inProject(block!.code));
    if (r.code !== 0 && !CI && /bubblewrap|socat|bwrap/.test(r.stderr + r.stdout)) {
      skipped("tests/readme_quickstarts: Claude Code hooks", "Claude Code's sandbox cannot run here: apt-get install bubblewrap socat");
      return t.skip("no sandbox prerequisites");
    }
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(readFileSync(join(project, ".claude", "settings.local.json"), "utf8"), /PreToolUse/);
  });

  test("libSQL server: sqld and a root on it, as the block starts them", async () => {
    const sqld = sqldBinary();
    if (!sqld) {
      assert.ok(!CI, "sqld must be here under CI (scripts/sqld.sh)");
      skipped("tests/readme_quickstarts: libSQL server", "no sqld binary: run bash scripts/sqld.sh");
      return;
    }
    symlinkSync(sqld, join(bin, "sqld"));
    const port = await freePort();
    const [block] = quickStart("libSQL server");
    const code = block!.code.replace("/var/lib/longrun/research.sqld", join(dir, "research.sqld")).replaceAll("127.0.0.1:8080", `127.0.0.1:${port}`);
    assert.notEqual(code, block!.code);
    // the block leaves sqld running in the background: wait for it before the root's first call, then stop it
    const script = code.replace(/^(sqld .*&)\s*$/m, `$1\nSQLD=$!\ntrap 'kill $SQLD' EXIT\nfor i in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && break; sleep 0.05; done`);
    const r = await sh(script);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /Survey the vector databases/);
  });
});

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}
