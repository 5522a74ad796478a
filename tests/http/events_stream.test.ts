/**
 * The event log as server-sent events (`GET /v1/events` of the compiled binary over real HTTP):
 * each event a frame whose `id:` is its id, a reconnect with `Last-Event-ID` goes on after it
 * (nothing twice, nothing lost), `?kinds=` filters, a bad id or no token is refused; and the
 * person's CLI reads the same log (`longrun events`) and answers a run parked for the user
 * (`longrun answer`), which the log then shows.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { removeDir, run, tempDir, until } from "../support/helpers.ts";
import { BINARY } from "../support/server.ts";
import { type HttpChild, startHttpChild } from "./start.ts";

interface Frame {
  id: number;
  event: string;
  data: { id: number; kind: string; run_id: string | null; detail: Record<string, any> };
}

/** Reads `GET /v1/events` until `count` event frames came (comments and `retry:` skipped), then closes it. */
async function frames(url: string, token: string, count: number, headers: Record<string, string> = {}, query = ""): Promise<Frame[]> {
  const ac = new AbortController();
  const r = await fetch(`${url}/v1/events${query}`, { headers: { authorization: `Bearer ${token}`, ...headers }, signal: ac.signal });
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /text\/event-stream/);
  const reader = r.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const got: Frame[] = [];
  const timer = setTimeout(() => ac.abort(), 10_000);
  try {
    while (got.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = text.indexOf("\n\n")) >= 0) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        const f: Record<string, string> = {};
        for (const line of block.split("\n")) {
          const at = line.indexOf(": ");
          if (at > 0 && !line.startsWith(":")) f[line.slice(0, at)] = line.slice(at + 2);
        }
        if (f.id) got.push({ id: Number(f.id), event: f.event!, data: JSON.parse(f.data!) });
      }
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return got;
}

describe("GET /v1/events and the person's CLI (the compiled binary)", () => {
  let root = "";
  let srv: HttpChild;
  let tokens: { host_token: string; agent_token: string };
  const rpc = async (token: string, method: string, params: Record<string, unknown> = {}) => {
    const r = await fetch(`${srv.info.url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
    const a = (await r.json()) as { result?: any; error?: unknown };
    if (a.error) throw new Error(`${method}: ${JSON.stringify(a.error)}`);
    return a.result;
  };

  before(async () => {
    root = tempDir();
    srv = await startHttpChild([BINARY], ["--root", root, "--port", "0"], {}, { cleanEnv: true, loginLink: false });
    await until(() => /HTTP API on/.test(srv.stderr()), "the start line on stderr");
    tokens = JSON.parse(readFileSync(srv.info.token_file, "utf8"));
  });
  after(async () => {
    await srv.stop();
    removeDir(root);
  });

  test("frames carry the events in order; Last-Event-ID goes on after the last one seen; kinds filter", async () => {
    await rpc(tokens.agent_token, "task.start", { description: "watch the log" });
    await rpc(tokens.agent_token, "writes.request", { reason: "save the draft" });
    const first = await frames(srv.info.url, tokens.agent_token, 2);
    assert.deepEqual(first.map((f) => f.event), ["task.created", "lease.requested"]);
    assert.deepEqual(first.map((f) => f.id), first.map((f) => f.data.id), "id: is the event's id");
    // what happens while nobody listens is there on reconnect, after the last id seen, once
    await rpc(tokens.host_token, "writes.enable", { reason: "go ahead" });
    const again = await frames(srv.info.url, tokens.agent_token, 1, { "last-event-id": String(first[1]!.id) });
    assert.deepEqual(again.map((f) => f.event), ["lease.granted"]);
    // a stream open before the event gets it as it happens
    const live = frames(srv.info.url, tokens.host_token, 1, {}, `?after=${again[0]!.id}&kinds=lease.revoked`);
    await new Promise((r) => setTimeout(r, 300));
    await rpc(tokens.agent_token, "task.checkpoint", { summary: "drafted", next_step: "review" });
    assert.deepEqual((await live).map((f) => f.event), ["lease.revoked"]);
  });

  test("a bad Last-Event-ID, a bad kind and no token are refused", async () => {
    const bad = await fetch(`${srv.info.url}/v1/events`, { headers: { authorization: `Bearer ${tokens.agent_token}`, "last-event-id": "abc" } });
    assert.equal(bad.status, 422);
    assert.match(((await bad.json()) as { detail: string }).detail, /Last-Event-ID/);
    const kind = await fetch(`${srv.info.url}/v1/events?kinds=Not%20A%20Kind`, { headers: { authorization: `Bearer ${tokens.agent_token}` } });
    assert.equal(kind.status, 422);
    await kind.body?.cancel();
    const none = await fetch(`${srv.info.url}/v1/events`);
    assert.equal(none.status, 401);
    await none.body?.cancel();
  });

  test("longrun answer wakes the run parked for the user, and longrun events shows it", async () => {
    const { run: r } = await rpc(tokens.host_token, "run.start", { owner: "worker-1" });
    await rpc(tokens.agent_token, "run.park", { run_id: r.run_id, epoch: 1, waiting_for: "which year to cover", for_user: true });
    const refused = await run([BINARY, "answer", "--root", root]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /needs its text/);
    const answered = await run([BINARY, "answer", "cover 2025", "--data", '{"year":2025}', "--root", root]);
    assert.equal(answered.code, 0, answered.stderr);
    assert.match(answered.stdout, new RegExp(`answered run ${r.run_id}`));
    const got = (await rpc(tokens.agent_token, "run.get", { run_id: r.run_id })).run;
    assert.equal(got.status, "running");
    assert.deepEqual([got.answer.text, got.answer.data, got.answer.by], ["cover 2025", { year: 2025 }, "host:cli"]);
    const none = await run([BINARY, "answer", "again", "--root", root]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no run is parked for the user's answer/);
    const listed = await run([BINARY, "events", "--kinds", "run.", "--root", root]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /run\.parked .*waiting for which year to cover/);
    assert.match(listed.stdout, /run\.woken .*the user answered/);
    const json = await run([BINARY, "events", "--json", "--kinds", "run.woken", "--root", root]);
    const lines = json.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.length, 1);
    assert.equal(lines[0].detail.answer.text, "cover 2025");
    assert.equal((await run([BINARY, "events", "--after", "x", "--root", root])).code, 2);
  });

  test("longrun approvals lists what the agent asked, approve and reject answer it, and the agent reads the answers", async () => {
    const a = (await rpc(tokens.agent_token, "approval.request", { action: "email.send", args_digest: "sha256:ab12", reason: "send the weekly report" })).approval;
    const b = (await rpc(tokens.agent_token, "approval.request", { action: "rm -rf build", reason: "make room" })).approval;
    const listed = await run([BINARY, "approvals", "--root", root]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`${a.approval_id}  pending .*email\\.send \\[sha256:ab12\\]  "send the weekly report"`));
    assert.match((await run([BINARY, "list", "--root", root])).stdout, /approvals waiting for an answer \(2;/);
    const noWhy = await run([BINARY, "reject", b.approval_id, "--root", root]);
    assert.equal(noWhy.code, 2);
    assert.match(noWhy.stderr, /a rejection says why/);
    assert.equal((await run([BINARY, "reject", b.approval_id, "keep the build", "--root", root])).code, 0);
    const edited = await run([BINARY, "approve", a.approval_id, "only to alice", "--edit", '{"to":["alice@example.org"]}', "--json", "--root", root]);
    assert.equal(edited.code, 0, edited.stderr);
    assert.equal(JSON.parse(edited.stdout).approval.status, "edited");
    const again = await run([BINARY, "approve", a.approval_id, "--root", root]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /answered already \(edited by host:cli\)/);
    const seen = (await rpc(tokens.agent_token, "approval.list", {})).approvals;
    assert.deepEqual(seen.map((x: { status: string }) => x.status), ["rejected", "edited"]);
    assert.deepEqual(seen[1].edited_args, { to: ["alice@example.org"] });
    assert.match((await run([BINARY, "approvals", "--root", root])).stdout, /no approval waits/);
    // the agent's token cannot answer over HTTP either
    const r = await fetch(`${srv.info.url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${tokens.agent_token}`, "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "approval.answer", params: { approval_id: b.approval_id, decision: "approve" } }) });
    assert.equal(((await r.json()) as { error: { data: { kind: string } } }).error.data.kind, "unauthorized");
  });

  test("the agent's words reach the person's terminal escaped: no escape sequence, carriage return or bidi override is printed raw", async () => {
    const evil = "ok\u001b[2J\u001b[1;1Happroved by the user\r\u202eevil\u0007";
    const a = (await rpc(tokens.agent_token, "approval.request", { action: `deploy${evil}`, reason: `please${evil}` })).approval;
    await rpc(tokens.agent_token, "memory.save", { type: "note", title: `note${evil}`, content: "watch the log" });
    for (const argv of [["approvals"], ["list"], ["events", "--kinds", "approval."]]) {
      const out = await run([BINARY, ...argv, "--root", root]);
      assert.equal(out.code, 0, out.stderr);
      assert.doesNotMatch(out.stdout, /[\u0000-\u0009\u000b-\u001f\u007f\u202a-\u202e]/, `${argv[0]} printed a control character or an override raw`);
    }
    const listed = (await run([BINARY, "approvals", "--root", root])).stdout;
    assert.ok(listed.includes("please" + "ok\\x1b[2J\\x1b[1;1Happroved by the user\\x0d\\u202eevil\\x07"), listed);
    const started = await run([BINARY, "start", `a task${evil}`, "--root", root]);
    assert.doesNotMatch(started.stdout + started.stderr, /[\u001b\r\u202e]/);
    await run([BINARY, "reject", a.approval_id, "no", "--root", root]);
  });
});
