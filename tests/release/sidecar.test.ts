/**
 * The container example without containers (no image can be built or pulled here): the
 * Dockerfile's command, run by the compiled executable with the port and root swapped for a free
 * port and a temporary root, answers to the Host other containers use (`longrun:<port>`) and
 * refuses other names; examples/sidecar/runner/runner.py, given the URL and the token file as
 * compose gives them, walks its flow to OK; SIGTERM stops the server with exit 0.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { REPO, removeDir, run, tempDir, until } from "../support/helpers.ts";
import { BINARY } from "../support/server.ts";
import { which } from "./helpers.ts";

const PYTHON = which("python3");
const skip = !existsSync(BINARY) ? `${BINARY} is missing: build it with ./compile.sh` : false;

/** The Dockerfile's CMD (the exec form's JSON array). */
function dockerCmd(): string[] {
  const line = readFileSync(join(REPO, "Dockerfile"), "utf8").split("\n").find((l) => l.startsWith("CMD ["));
  assert.ok(line, "the Dockerfile has an exec-form CMD");
  return JSON.parse(line.slice(4)) as string[];
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

describe("the Dockerfile's command and the sidecar runner", { skip }, () => {
  let root: string;
  let child: ReturnType<typeof spawn>;
  let exited: Promise<number | null>;
  let stdout = "";
  let stderr = "";
  let port = 0;
  let tokens: { host_token: string; agent_token: string };

  before(async () => {
    root = tempDir("longrun-sidecar-");
    const cmd = dockerCmd().map((a, i, all) => (all[i - 1] === "--port" ? "0" : all[i - 1] === "--root" ? root : a));
    assert.deepEqual(cmd.slice(0, 1), ["http"]);
    child = spawn(BINARY, cmd, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LONGRUN_HOST_TOKEN: "", LONGRUN_AGENT_TOKEN: "" } });
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    exited = new Promise((resolve) => child.on("close", (code) => resolve(code)));
    const line = await until(() => stdout.split("\n").find((l) => l.startsWith("{")), `the start line (stderr: ${stderr})`, 20_000);
    port = Number(new URL((JSON.parse(line) as { url: string }).url).port);
    tokens = JSON.parse(readFileSync(join(root, ".longrun", "http.json"), "utf8"));
  });

  after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    removeDir(root);
  });

  test("it answers to Host longrun:<port> (the compose service name) and refuses another name", async () => {
    const ok = await rpc(port, `longrun:${port}`, tokens.agent_token, "task.status");
    assert.equal(ok.status, 200, ok.body);
    const refused = await rpc(port, `attacker.example:${port}`, tokens.agent_token, "task.status");
    assert.equal(refused.status, 403, refused.body);
  });

  test("runner.py, given the URL and the token file as compose gives them, ends OK", { skip: PYTHON ? false : "needs python3" }, async () => {
    const r = await run([PYTHON!, join(REPO, "examples", "sidecar", "runner", "runner.py")], {
      env: { LONGRUN_URL: `http://127.0.0.1:${port}`, LONGRUN_TOKEN_FILE: join(root, ".longrun", "http.json"), LONGRUN_WAIT_SECONDS: "20" },
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /gate before a lease: read_only/);
    assert.equal(r.stdout.trim().split("\n").at(-1), "OK: the runner used longrun over HTTP");
  });

  test("SIGTERM (docker stop): exit 0", async () => {
    process.kill(child.pid!, "SIGTERM");
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r("still running 10 s after SIGTERM"), 10_000))]);
    assert.equal(code, 0, stderr);
  });
});
