/**
 * `longrun grant` / `longrun revoke` end to end, with real processes: an agent on a running
 * `longrun mcp` (or `longrun serve`) child is refused a write, a person grants it from the project
 * directory in another process, the agent's next call passes, `revoke` ends it again. The lease is
 * seen across processes through memory.db.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { startMcp } from "../mcp/helpers.ts";
import { removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary, Server } from "../support/server.ts";

const person = (root: string, ...args: string[]) => run([BINARY, ...args], { cwd: root });

describe("a person grants writes from the command line", () => {
  let root = "";
  beforeEach(() => {
    root = tempDir();
  });
  afterEach(() => removeDir(root));

  test("an MCP agent is refused, allowed after `longrun grant` in the project directory, refused again after `longrun revoke`", async () => {
    requireBinary();
    const started = await person(root, "start", "fix the parser");
    assert.equal(started.code, 0, started.stderr);
    const mcp = await startMcp(root);
    try {
      const before = await mcp.refused("writes_require", { action: "edit src/parser.ts" });
      assert.equal(before.data.reason, "read_only");

      const granted = await person(root, "grant", "fix the parser");
      assert.equal(granted.code, 0, granted.stderr);
      assert.match(granted.stdout, /^writes granted for turn 1 of task T_\S+ \("fix the parser", by host:cli\): any path; until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(10m\)/);

      const allowed = await mcp.ok("writes_require", { action: "edit src/parser.ts" });
      assert.equal(allowed.ok, true);
      const seen = await mcp.ok("task_status");
      assert.equal(seen.task.lease.granted_by, "host:cli");
      assert.equal(seen.task.lease.reason, "fix the parser");
      assert.ok(seen.task.lease.expires_at, "a grant from the command line always has a time to live");

      const revoked = await person(root, "revoke");
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.match(revoked.stdout, /^revoked the write lease of task T_\S+ \(turn 1, "fix the parser"\): read-only now$/m);
      const after = await mcp.refused("writes_require", { action: "edit src/parser.ts" });
      assert.equal(after.data.reason, "read_only");
    } finally {
      await mcp.close();
    }
  });

  test("a JSON-RPC host's agent (longrun serve) sees the grant and the revocation of another process", async () => {
    requireBinary();
    const serve = new Server({ name: "the compiled binary", argv: [BINARY] }, ["serve", "--root", root]);
    try {
      await serve.result("task.start", { description: "adapt the supplier interface" });
      assert.equal((await serve.error("writes.require", { action: "edit adapters/x.py" })).data.reason, "read_only");
      const granted = await person(root, "grant", "adapter work", "--scope", "adapters/**", "--uses", "2", "--json");
      assert.equal(granted.code, 0, granted.stderr);
      const g = JSON.parse(granted.stdout);
      assert.equal(g.ok, true);
      assert.deepEqual(g.lease.scope, ["adapters/**"]);
      assert.equal(g.lease.max_uses, 2);
      assert.equal(g.until, g.lease.expires_at);
      assert.equal((await serve.result("writes.require", { action: "edit adapters/x.py" })).ok, true);
      assert.equal((await serve.error("writes.require", { action: "edit src/main.py" })).data.reason, "out_of_scope");
      assert.equal((await person(root, "revoke")).code, 0);
      assert.equal((await serve.error("writes.require", { action: "edit adapters/x.py" })).data.reason, "read_only");
    } finally {
      await serve.close();
    }
  });
});
