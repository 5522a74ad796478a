/**
 * `longrun mcp` spoken to raw, line by line, as a broken or hostile client would: every request
 * is answered (an unparsable line with -32700 and id null, a non-message with -32600, malformed
 * tool arguments with -32602), the server keeps reading after each, and at end of input it
 * answers what is still in flight before it exits 0.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { Server, type Target, TARGETS } from "../support/server.ts";

const INIT = { jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };

async function rawMcp(target: Target, root: string): Promise<Server> {
  const srv = new Server(target, ["mcp", "--root", root]);
  await srv.write(JSON.stringify(INIT) + "\n" + JSON.stringify(INITIALIZED) + "\n");
  await srv.answer("init");
  return srv;
}

const line = (o: unknown) => JSON.stringify(o) + "\n";

for (const target of TARGETS) describe(`MCP over stdio, raw lines: ${target.name}`, () => {
  test("every request gets an answer: parse errors, non-messages, batches, bad arguments, unknown methods", async () => {
    const root = tempDir();
    const srv = await rawMcp(target, root);
    try {
      await srv.write("this is not json\n");
      await srv.write(new Uint8Array([0xff, 0xfe, 0x7b, 0x0a]));
      await srv.write(line({ jsonrpc: "2.0", id: 7 }));
      await srv.write(line({ jsonrpc: "1.0", id: 8, method: "ping" }));
      await srv.write(line([{ jsonrpc: "2.0", id: 9, method: "ping" }]));
      await srv.write(line({ jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "task_status", arguments: [1, 2] } }));
      await srv.write(line({ jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "task_status", arguments: "x" } }));
      await srv.write(line({ jsonrpc: "2.0", id: 12, method: "tools/call", params: { arguments: {} } }));
      await srv.write(line({ jsonrpc: "2.0", id: 13, method: "tools/call", params: { name: "writes_enable", arguments: { reason: "me" } } }));
      await srv.write(line({ jsonrpc: "2.0", id: 14, method: "no/such/method" }));
      await srv.write(line({ jsonrpc: "2.0", id: 15, method: "ping" }));
      const a = (id: unknown) => srv.answer(id) as Promise<{ error?: { code: number; message: string }; result?: unknown }>;
      assert.deepEqual((await a(15)).result, {}, "still reading after every bad line");
      const anonymous = srv.answers.filter((x) => x.id === null) as { error: { code: number; message: string } }[];
      assert.deepEqual(anonymous.map((x) => x.error.code), [-32700, -32700, -32600], "not JSON, not UTF-8, a batch: answered with id null");
      assert.match(anonymous[0]!.error.message, /not valid JSON/);
      assert.match(anonymous[2]!.error.message, /no batches/);
      assert.equal((await a(7)).error?.code, -32600);
      assert.equal((await a(8)).error?.code, -32600);
      for (const id of [10, 11]) {
        const e = (await a(id)).error!;
        assert.equal(e.code, -32602);
        assert.match(e.message, /^Invalid arguments for task_status: arguments must be an object/);
      }
      assert.equal((await a(12)).error?.code, -32602);
      assert.match((await a(13)).error!.message, /Unknown tool "writes_enable"/);
      assert.equal((await a(14)).error?.code, -32601);
    } finally {
      await srv.close();
      removeDir(root);
    }
  });

  test("at end of input it answers the requests still in flight, then exits 0", async () => {
    const root = tempDir();
    const srv = await rawMcp(target, root);
    try {
      const calls = Array.from({ length: 5 }, (_, i) => line({ jsonrpc: "2.0", id: 100 + i, method: "tools/call", params: { name: "memory_save", arguments: { type: "note", title: `n${i}`, content: "x" } } }));
      await srv.write(calls.join("") + line({ jsonrpc: "2.0", id: 200, method: "tools/call", params: { name: "task_start", arguments: { description: "last" } } }));
      srv.child.stdin.end();
      assert.deepEqual(await srv.exited, { code: 0, signal: null });
      for (let i = 0; i < 5; i++) assert.ok(srv.answers.find((x) => x.id === 100 + i && x.result), `memory_save ${i} answered`);
      const last = srv.answers.find((x) => x.id === 200) as { result: { structuredContent: { task: { description: string } } } };
      assert.equal(last.result.structuredContent.task.description, "last");
    } finally {
      removeDir(root);
    }
  });

  test("a line over the size limit is refused and discarded, and the stream goes on", async () => {
    const root = tempDir();
    const srv = await rawMcp(target, root);
    try {
      const huge = line({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "memory_save", arguments: { type: "note", title: "big", content: "x".repeat(1024 * 1024 + 10) } } });
      await srv.write(huge + line({ jsonrpc: "2.0", id: 2, method: "ping" }));
      assert.deepEqual((await srv.answer(2)).result, {});
      const refused = srv.answers.find((x) => x.id === null) as { error: { code: number; message: string } };
      assert.equal(refused.error.code, -32600);
      assert.match(refused.error.message, /limit/);
      assert.equal(srv.answers.some((x) => x.id === 1), false, "the discarded request was never carried out");
    } finally {
      await srv.close();
      removeDir(root);
    }
  });
});
