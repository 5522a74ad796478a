/**
 * Webhooks through the real binary: `longrun serve` processes on a root whose settings name a
 * webhook, and a real HTTP receiver on 127.0.0.1. The event log arrives in order, signed with the
 * host's key; a failing URL is retried and the log says so; a restarted process goes on where the
 * last one stopped, and two processes on one root deliver each event once.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from "node:http";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, test } from "node:test";
import { Root } from "../../src/root/root.ts";
import { removeDir, run, tempDir, until } from "../support/helpers.ts";
import { BINARY, Server } from "../support/server.ts";

interface Delivery {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  event: { id: number; kind: string; task_id: string | null };
}

/** A webhook receiver: answers each POST with the next status of `statuses` (then 200) and records it; `hang`: answers none. */
class Receiver {
  readonly got: Delivery[] = [];
  readonly statuses: number[] = [];
  hang = false;
  /** POSTs it holds unanswered (hang). */
  pending = 0;
  #server: HttpServer | null = null;
  port = 0;

  async start(port = 0): Promise<void> {
    this.#server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (d: string) => (body += d));
      req.on("end", () => {
        if (this.hang) {
          this.pending++;
          res.on("close", () => this.pending--);
          return;
        }
        const status = this.statuses.shift() ?? 200;
        this.got.push({ status, headers: req.headers, body, event: JSON.parse(body).event });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((r) => this.#server!.listen(port, "127.0.0.1", () => r()));
    this.port = (this.#server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const s = this.#server;
    this.#server = null;
    if (s) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  }

  /** The events it answered 2xx, by kind. */
  ok(): Delivery[] {
    return this.got.filter((d) => d.status >= 200 && d.status < 300);
  }
}

const KEY = "a host's signing key, 32 bytes or so";

describe("webhooks", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(hook: Record<string, unknown> = {}) {
    const root = tempDir();
    const keys = tempDir();
    const receiver = new Receiver();
    await receiver.start();
    cleanups.push(() => removeDir(root), () => removeDir(keys), () => receiver.stop());
    writeFileSync(join(keys, "ops.key"), KEY + "\n");
    mkdirSync(join(root, ".longrun"), { recursive: true });
    const settings = (extra: Record<string, unknown> = {}) =>
      writeFileSync(join(root, ".longrun", "settings.json"), JSON.stringify({ webhooks: [{ name: "ops", url: `http://127.0.0.1:${receiver.port}/hook`, secret_file: join(keys, "ops.key"), from: "start", ...hook, ...extra }] }));
    settings();
    const serve = () => {
      const s = new Server({ name: "binary", argv: [BINARY] }, ["serve", "--root", root]);
      cleanups.push(async () => {
        if (s.child.exitCode === null && s.child.signalCode === null) await s.close();
      });
      return s;
    };
    return { root, receiver, serve, settings };
  }

  test("the event log arrives in order, each body signed with the host's key; kinds narrow what is sent", async () => {
    const { receiver, serve, root } = await setup({ kinds: ["task.", "approval.requested"] });
    const s = serve();
    const { task } = await s.result("task.start", { description: "survey the funds" });
    await s.result("writes.request", { reason: "write the draft" }); // lease.requested: not a kind it asked for
    await s.result("approval.request", { action: "email.send", reason: "send the survey" });
    await s.result("task.checkpoint", { summary: "halfway", next_step: "finish", kind: "progress" });
    await until(() => receiver.ok().length >= 3, "three deliveries");
    const got = receiver.ok();
    assert.deepEqual(got.map((d) => d.event.kind), ["task.created", "approval.requested", "task.checkpoint"]);
    assert.ok(got[0]!.event.id < got[1]!.event.id && got[1]!.event.id < got[2]!.event.id, "in the log's order");
    for (const d of got) {
      const ts = String(d.headers["x-longrun-timestamp"]);
      const expected = "sha256=" + createHmac("sha256", KEY).update(`${ts}.${d.body}`).digest("hex");
      assert.equal(d.headers["x-longrun-signature"], expected, "signed with the key in secret_file");
      assert.equal(d.headers["x-longrun-event-id"], String(d.event.id));
      assert.equal(d.headers["x-longrun-webhook"], "ops");
      assert.equal(JSON.parse(d.body).root, root, "the body names the root (event ids are per root)");
      assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 60);
      assert.equal(d.event.task_id, task.task_id);
    }
    assert.ok(!receiver.got.some((d) => d.body.includes(KEY)), "the key is never sent");
    const forged = "sha256=" + createHmac("sha256", "another key").update(`x.${got[0]!.body}`).digest("hex");
    assert.notEqual(got[0]!.headers["x-longrun-signature"], forged);
  });

  test("a failing URL is retried until it answers; the events after it wait; the log says webhook.failing, then webhook.recovered", async () => {
    const { receiver, serve } = await setup({ kinds: ["task.", "approval."], retry_after_ms: 50 });
    receiver.statuses.push(500, 503);
    const s = serve();
    await s.result("task.start", { description: "survey the funds" });
    await s.result("approval.request", { action: "email.send", reason: "send the survey" });
    await until(() => receiver.ok().length >= 2, "both events delivered after the failures");
    const first = receiver.got.filter((d) => d.event.kind === "task.created");
    assert.deepEqual(first.map((d) => d.status), [500, 503, 200], "retried until a 2xx");
    assert.equal(receiver.got.filter((d) => d.event.kind === "approval.requested").length, 1, "the next one waited and went once");
    const log = (await s.result("events.read", { kinds: ["webhook."] })).events;
    assert.deepEqual(log.map((e: { kind: string }) => e.kind), ["webhook.failing", "webhook.recovered"]);
    assert.deepEqual([log[0].detail.webhook, log[0].detail.error, log[0].detail.event_id], ["ops", "HTTP 500", first[0]!.event.id]);
    assert.equal(log[1].detail.failures, 2);
    assert.ok(!JSON.stringify(log).includes(KEY), "no event names the key");
  });

  test("a restarted process goes on after the last event delivered, and two processes on one root deliver each event once", async () => {
    const { receiver, serve } = await setup({ kinds: ["task.", "approval.requested"], retry_after_ms: 50 });
    const a = serve();
    await a.result("task.start", { description: "first" });
    await until(() => receiver.ok().length >= 1, "the first delivery");
    // the URL goes away: what happens now waits in the log
    const port = receiver.port;
    await receiver.stop();
    await a.result("approval.request", { action: "a", reason: "one" });
    await a.result("approval.request", { action: "b", reason: "two" });
    await a.close();
    await receiver.start(port);
    const b = serve();
    const c = serve();
    await b.result("task.status");
    await c.result("task.status");
    await until(() => receiver.ok().length >= 3, "the backlog delivered by the next process");
    for (let i = 0; i < 5; i++) await (i % 2 ? b : c).result("approval.request", { action: `x${i}`, reason: "more" });
    await until(() => receiver.ok().length >= 8, "eight events delivered");
    await new Promise((r) => setTimeout(r, 600)); // a second deliverer, if there were one, would have sent its copies by now
    const ids = receiver.ok().map((d) => d.event.id);
    assert.equal(new Set(ids).size, ids.length, `each event once: ${ids.join(",")}`);
    assert.deepEqual([...ids].sort((x, y) => x - y), ids, "in order");
    assert.deepEqual(receiver.ok().map((d) => d.event.kind), ["task.created", ...Array(7).fill("approval.requested")]);
  });

  test("a webhook setting that cannot be read sends nothing and says why in the log", async () => {
    const { receiver, serve, settings } = await setup();
    settings({ url: "ftp://127.0.0.1/hook" });
    const s = serve();
    await s.result("task.start", { description: "survey the funds" });
    const log = await until(async () => {
      const e = (await s.result("events.read", { kinds: ["webhook.settings_invalid"] })).events;
      return e.length ? e : null;
    }, "the settings_invalid event");
    assert.match(log[0].detail.error, /webhooks\[0\]\.url is an http:\/\/ or https:\/\/ URL/);
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(receiver.got.length, 0);
  });
  test("a flood of events a webhook does not want does not hold back the one it does", async () => {
    const { receiver, serve } = await setup({ kinds: ["approval.requested"] });
    const s = serve();
    await s.result("task.start", { description: "survey the funds" });
    // the agent's flood: 5,000 events of another kind (a page of 50 a look at the log, no wait between full pages)
    await Promise.all(Array.from({ length: 5000 }, () => s.call("writes.request", { reason: "again" })));
    await s.result("approval.request", { action: "email.send", reason: "send the survey" });
    await until(() => receiver.ok().length >= 1, "the approval delivered behind the flood", 15_000);
    assert.equal(receiver.ok()[0]!.event.kind, "approval.requested");
  });

  test("one webhook's hanging URL holds up no other", async () => {
    const { root, receiver: slow, serve, settings } = await setup({ kinds: ["approval.requested"] });
    const fast = new Receiver();
    await fast.start();
    cleanups.push(() => fast.stop());
    const base = JSON.parse(readFileSync(join(root, ".longrun", "settings.json"), "utf8")).webhooks[0];
    writeFileSync(join(root, ".longrun", "settings.json"), JSON.stringify({ webhooks: [base, { ...base, name: "fast", url: `http://127.0.0.1:${fast.port}/hook` }] }));
    void settings;
    slow.hang = true;
    const s = serve();
    await s.result("task.start", { description: "survey the funds" });
    await s.result("approval.request", { action: "email.send", reason: "send the survey" });
    await until(() => fast.ok().length >= 1, "the other webhook's delivery");
    assert.equal(slow.pending, 1, "delivered while the hanging URL still holds its POST");
  });

  test("one-off commands never deliver; only servers do", async () => {
    const { root, receiver } = await setup();
    for (const args of [["start", "survey the funds"], ["list"], ["events"]]) {
      const r = await run([BINARY, ...args, "--root", root]);
      assert.equal(r.code, 0, r.stderr);
    }
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(receiver.got.length, 0, "nothing was POSTed by a command");
  });

  test("events the log pruned before a webhook reached them are named in webhook.skipped; the rest go on", async () => {
    const { root, receiver } = await setup({ kinds: ["approval.requested", "webhook."] });
    const r = await Root.open(root, { searchInWorker: false });
    cleanups.push(() => r.close());
    await r.contract.startTask("survey the funds");
    const taskId = (await r.contract.status()).task!.task_id;
    for (let i = 0; i < 6; i++) await r.approvals.request({ task_id: taskId, action: `send ${i}`, reason: "r", by: "agent:test" });
    await r.events.prune(3);
    r.keepWebhooks({ idleMs: 20 });
    await until(() => receiver.ok().some((d) => d.event.kind === "webhook.skipped"), "the skipped event delivered");
    const kinds = receiver.ok().map((d) => d.event.kind);
    assert.deepEqual(kinds.filter((k) => k === "approval.requested").length, 3, "the three kept approvals went");
    const skipped = receiver.ok().find((d) => d.event.kind === "webhook.skipped")!;
    assert.equal((JSON.parse(skipped.body).event.detail as { after: number }).after, 0);
  });
});
