/**
 * A fresh root for each test of a describe block (local, or on sqld under LONGRUN_TEST_STORE=sqld)
 * and `serve()`, which starts `longrun serve` on it; every server still running is closed and the
 * root removed after the test.
 */
import { afterEach, beforeEach } from "node:test";
import { removeDir } from "../support/helpers.ts";
import { testRoot } from "../support/sqld.ts";
import { Server, TARGETS } from "./server.ts";

export function serveEachTest(): () => Server {
  let dir = "";
  const servers: Server[] = [];
  beforeEach(async () => (dir = await testRoot()));
  afterEach(async () => {
    for (const s of servers.splice(0)) if (s.child.exitCode === null && s.child.signalCode === null) await s.close();
    removeDir(dir);
  });
  return () => {
    const s = new Server(TARGETS[0]!, ["serve", "--root", dir]);
    servers.push(s);
    return s;
  };
}
