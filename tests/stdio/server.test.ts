import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { after, before, describe, test } from "node:test";
import { Dispatcher } from "../../src/rpc/dispatcher.ts";
import { allMethods } from "../../src/rpc/methods/index.ts";
import { RootRegistry } from "../../src/root/registry.ts";
import { serveStdio } from "../../src/stdio/server.ts";
import { removeDir, tempDir, until, searchHold } from "../support/helpers.ts";

/** Test double for stdin: an event emitter the test pushes chunks into. */
class FakeStdin extends EventEmitter {
  paused = false;
  pause() {
    this.paused = true;
    return this;
  }
}

describe("stdio server lifecycle (in-process, with a slow search)", () => {
  let dir = "";
  let roots: RootRegistry;
  const hold = searchHold();
  before(() => {
    dir = tempDir();
    roots = new RootRegistry({ defaultRoot: dir, rootOptions: { testOnlySearchHold: hold.buffer } });
  });
  after(async () => {
    hold.release();
    await roots.closeAll();
    removeDir(dir);
  });

  test("stop (SIGTERM) stops reading, answers what is in flight, then returns", async () => {
    const input = new FakeStdin();
    const written: string[] = [];
    const stop = new AbortController();
    const served = serveStdio({
      dispatcher: new Dispatcher({ methods: allMethods(), roots }),
      input,
      output: { write: (d, cb) => (written.push(d), cb?.(), true) },
      stop: stop.signal,
    });
    input.emit("data", new TextEncoder().encode('{"jsonrpc":"2.0","id":"slow","method":"memory.search","params":{"query":"x"}}\n'));
    input.emit("data", new TextEncoder().encode('{"jsonrpc":"2.0","id":"gate","method":"task.status"}\n'));
    await until(() => written.some((w) => w.includes('"gate"')), "the status answer while the search is in flight");
    assert.equal(written.some((w) => w.includes('"slow"')), false, "the search is still in flight");
    stop.abort();
    input.emit("data", new TextEncoder().encode('{"jsonrpc":"2.0","id":"late","method":"task.status"}\n'));
    hold.release(); // the search finishes only now
    await served;
    assert.equal(input.paused, true);
    assert.ok(written.some((w) => w.includes('"slow"')), "the in-flight search was answered before returning");
    assert.equal(written.some((w) => w.includes('"late"')), false, "nothing is read after stop");
  });
});
