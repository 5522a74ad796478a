/**
 * The container example without containers (no image can be built or pulled here): the
 * Dockerfile's command, with the environment compose.yaml gives the longrun service (token files
 * under /run/secrets/, made by make_secrets.sh, here in a temporary directory), run by the
 * compiled executable on a free port and a temporary root. It answers to the Host other
 * containers use (`longrun:<port>`) and refuses other names; compose's and the Dockerfile's
 * health checks (`longrun health`) pass; examples/sidecar/runner/runner.py, given what compose
 * gives it, reads its tokens once, does a turn, and after longrun is restarted (SIGTERM, the same
 * command line again: what `restart: unless-stopped` does) does its next turn with the same
 * tokens and ends OK. The same again without token files: the tokens kept in http.json.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { describe, test } from "node:test";
import { REPO, removeDir, run, tempDir, until } from "../support/helpers.ts";
import { BINARY } from "../support/server.ts";
import { freePort } from "../http/start.ts";
import { which } from "./helpers.ts";

const PYTHON = which("python3");
const SIDECAR = join(REPO, "examples", "sidecar");
const skip = !existsSync(BINARY) ? `${BINARY} is missing: build it with ./compile.sh` : false;

/** The Dockerfile's line starting with `prefix` and ending in an exec-form JSON array: that array. */
function dockerfileArray(prefix: string): string[] {
  const line = readFileSync(join(REPO, "Dockerfile"), "utf8").split("\n").find((l) => l.startsWith(prefix));
  assert.ok(line, `the Dockerfile has an exec-form ${prefix}`);
  return JSON.parse(line.slice(line.indexOf("["))) as string[];
}

/** compose.yaml's `longrun` service: its environment (name: value) and its healthcheck's test array. */
function composeLongrun(): { env: Record<string, string>; healthcheck: string[] } {
  const text = readFileSync(join(SIDECAR, "compose.yaml"), "utf8");
  const service = /\n {2}longrun:\n([\s\S]*?)\n {2}\w/.exec(text)?.[1];
  assert.ok(service, "compose.yaml has a longrun service");
  const env = Object.fromEntries([...service.matchAll(/^ {6}(LONGRUN_[A-Z_]+): (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  const check = /^ {6}test: (\[.*\])$/m.exec(service)?.[1];
  assert.ok(check, "the longrun service has a healthcheck test");
  assert.match(service, /^ {4}restart: unless-stopped$/m);
  return { env, healthcheck: JSON.parse(check) as string[] };
}

/** POST /rpc on 127.0.0.1:port with a chosen Host header. */
function rpc(port: number, host: string, token: string, method: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: {} });
    const req = request({ host: "127.0.0.1", port, path: "/rpc", method: "POST", headers: { host, "content-type": "application/json", authorization: `Bearer ${token}`, "content-length": Buffer.byteLength(body) } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

interface Proc {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

function spawnProc(argv: string[], env: Record<string, string>, cwd = REPO): Proc {
  const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  return { child, out: () => out, err: () => err, exited };
}

async function stop(p: Proc): Promise<number | null> {
  if (p.child.exitCode === null && p.child.signalCode === null) process.kill(p.child.pid!, "SIGTERM");
  return Promise.race([p.exited, new Promise<string>((r) => setTimeout(() => r("still running 10 s after SIGTERM"), 10_000))]) as Promise<number | null>;
}

const clean = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LONGRUN_"))) as Record<string, string>;

describe("the Dockerfile's command and the sidecar runner, across a restart of longrun", { skip }, () => {
  for (const mode of ["token files, as compose.yaml gives them", "no token files: the tokens kept in http.json"] as const) {
    const files = mode.startsWith("token files");
    test(`${mode}: served under the service name, healthy, and the runner's next call after a restart works with the tokens it read once`, { skip: PYTHON ? false : "needs python3" }, async () => {
      const root = tempDir("longrun-sidecar-");
      const work = tempDir("longrun-sidecar-secrets-");
      const port = await freePort();
      const cmd = dockerfileArray("CMD [").map((a, i, all) => (all[i - 1] === "--port" ? String(port) : all[i - 1] === "--root" ? root : a));
      assert.deepEqual(cmd.slice(0, 1), ["http"]);
      const compose = composeLongrun();
      const serverEnv: Record<string, string> = { ...clean() };
      const runnerEnv: Record<string, string> = { LONGRUN_URL: `http://127.0.0.1:${port}`, LONGRUN_WAIT_SECONDS: "30", LONGRUN_PAUSE_FILE: join(work, "go-on") };
      if (files) {
        // make_secrets.sh as a person runs it, into this test's directory
        copyFileSync(join(SIDECAR, "make_secrets.sh"), join(work, "make_secrets.sh"));
        const made = await run(["sh", join(work, "make_secrets.sh")]);
        assert.equal(made.code, 0, made.stderr);
        for (const [name, value] of Object.entries(compose.env)) serverEnv[name] = value.replace("/run/secrets/longrun_", join(work, "secrets") + "/");
        assert.deepEqual(Object.keys(compose.env).sort(), ["LONGRUN_AGENT_TOKEN_FILE", "LONGRUN_HOST_TOKEN_FILE", "LONGRUN_METRICS_TOKEN_FILE"]);
        for (const f of Object.values(serverEnv).filter((v) => v.startsWith(work))) assert.match(readFileSync(f, "utf8"), /^[A-Za-z0-9_-]{43}\n$/, `${f} is a token and a newline`);
        assert.equal(statSync(join(work, "secrets")).mode & 0o777, 0o700);
        runnerEnv.LONGRUN_HOST_TOKEN_FILE = serverEnv.LONGRUN_HOST_TOKEN_FILE!;
        runnerEnv.LONGRUN_AGENT_TOKEN_FILE = serverEnv.LONGRUN_AGENT_TOKEN_FILE!;
      } else {
        runnerEnv.LONGRUN_TOKEN_FILE = join(root, ".longrun", "http.json");
      }
      const startLongrun = async () => {
        const p = spawnProc([BINARY, ...cmd], serverEnv);
        await until(() => {
          if (p.child.exitCode !== null) throw new Error(`longrun http exited: ${p.err()}`);
          return p.out().includes("\n");
        }, "longrun's start line", 20_000);
        return p;
      };
      let longrun = await startLongrun();
      let runner: Proc | null = null;
      try {
        const start = JSON.parse(longrun.out().split("\n")[0]!) as { url: string; page?: string; login?: string };
        assert.equal(start.page, undefined, "no login link in the container's log");
        assert.equal(start.login, "longrun open --root " + root);
        const agentToken = files ? readFileSync(serverEnv.LONGRUN_AGENT_TOKEN_FILE!, "utf8").trim() : JSON.parse(readFileSync(runnerEnv.LONGRUN_TOKEN_FILE!, "utf8")).agent_token;
        assert.equal((await rpc(port, `longrun:${port}`, agentToken, "task.status")).status, 200, "the compose service name is served");
        assert.equal((await rpc(port, `attacker.example:${port}`, agentToken, "task.status")).status, 403);
        for (const check of [compose.healthcheck, dockerfileArray("HEALTHCHECK ")]) {
          assert.equal(check[0] === "CMD" ? check[1] : check[0], "/usr/local/bin/longrun");
          const h = await run([BINARY, ...check.slice(check[0] === "CMD" ? 2 : 1)], { cwd: root, env: clean() }); // WORKDIR /data
          assert.equal(h.code, 0, h.stdout + h.stderr);
          assert.match(h.stdout, /^ok: http:\/\/127\.0\.0\.1:\d+\/health answered 200\n$/);
        }

        runner = spawnProc([PYTHON!, join(SIDECAR, "runner", "runner.py")], { ...clean(), ...runnerEnv });
        await until(() => {
          if (runner!.child.exitCode !== null) throw new Error(`the runner exited: ${runner!.out()}${runner!.err()}`);
          return runner!.out().includes("waiting for");
        }, "the runner's first turn", 30_000);
        assert.match(runner.out(), /gate before a lease: read_only/);

        // restart: SIGTERM, then the same command line again
        assert.equal(await stop(longrun), 0, longrun.err());
        longrun = await startLongrun();
        writeFileSync(runnerEnv.LONGRUN_PAUSE_FILE!, "");
        const code = await Promise.race([runner.exited, new Promise<string>((r) => setTimeout(() => r("the runner still runs after 60 s"), 60_000))]);
        assert.equal(code, 0, runner.out() + runner.err());
        assert.match(runner.out(), /turn 2 of T_\S+ gate: read_only/);
        assert.equal(runner.out().trim().split("\n").at(-1), "OK: the runner used longrun over HTTP");
        assert.match(longrun.err(), files ? /tokens from LONGRUN_HOST_TOKEN_FILE/ : /kept from the last start/);
      } finally {
        if (runner && runner.child.exitCode === null) runner.child.kill("SIGKILL");
        assert.equal(await stop(longrun), 0, longrun.err());
        removeDir(root);
        removeDir(work);
      }
    });
  }
});
