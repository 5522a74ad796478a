/**
 * A person's verbs on a root kept on a libSQL server (`--store URL --project KEY`), through the
 * binary against a real sqld: a grant made from the command line is seen by a runner's
 * `longrun serve` on the same project, and `revoke` ends it; another project key is refused in
 * one line.
 */
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { run } from "../support/helpers.ts";
import { BINARY, Server } from "../support/server.ts";
import { type Sqld, sqldMissing, useSqld } from "../support/sqld.ts";

describe("longrun start, list, grant, revoke on a server store", { skip: sqldMissing() }, () => {
  const { db: server, dir } = useSqld();
  let db: Sqld;
  before(() => void (db = server()));

  test("a runner on the same project sees the grant and the revocation; another project key is refused in one line", async () => {
    const stateDir = dir();
    const store = ["--store", db.url, "--project", "alpha", "--state-dir", stateDir];
    const started = await run([BINARY, "start", "server task", ...store]);
    assert.equal(started.code, 0, started.stderr);
    const runner = new Server({ name: "binary", argv: [BINARY] }, ["serve", ...store]);
    try {
      assert.equal((await runner.error("writes.require", { action: "edit a.ts" })).data.reason, "read_only");
      const granted = await run([BINARY, "grant", "server work", "--json", ...store]);
      assert.equal(granted.code, 0, granted.stderr);
      assert.equal(JSON.parse(granted.stdout).lease.granted_by, "host:cli");
      assert.equal((await runner.result("writes.require", { action: "edit a.ts" })).ok, true);
      const list = JSON.parse((await run([BINARY, "list", "--json", ...store])).stdout);
      assert.deepEqual(list.tasks.map((t: { description: string }) => t.description), ["server task"]);
      assert.equal((await run([BINARY, "revoke", ...store])).code, 0);
      assert.equal((await runner.error("writes.require", { action: "edit a.ts" })).data.reason, "read_only");
    } finally {
      await runner.close();
    }
    const other = await run([BINARY, "grant", "x", "--store", db.url, "--project", "beta", "--state-dir", dir()]);
    assert.equal(other.code, 2, other.stderr);
    assert.equal(other.stderr.trim().split("\n").length, 1, other.stderr);
    assert.match(other.stderr, /holds project "alpha", not "beta"/);
  });
});
