/**
 * A fresh root for each test of a describe block and `serve()`, which starts `longrun serve` (the
 * compiled binary) on it; every server still running is closed and the root removed after the test.
 * The root is local, or on sqld under LONGRUN_TEST_STORE=sqld (`testRoot`); the fault tests, which
 * change a root's files, pass `() => tempDir()` for a local directory always.
 */
import { afterEach, beforeEach } from "node:test";
import { removeDir } from "./helpers.ts";
import { testRoot } from "./sqld.ts";
import { Server, TARGETS } from "./server.ts";

export interface ServeEachTest {
  /** Starts `longrun serve --root <this test's root>`, with `env` added to the environment. */
  (env?: Record<string, string>): Server;
  /** This test's root directory. */
  dir(): string;
}

export function serveEachTest(makeRoot: () => string | Promise<string> = testRoot): ServeEachTest {
  let dir = "";
  const servers: Server[] = [];
  beforeEach(async () => (dir = await makeRoot()));
  afterEach(async () => {
    for (const s of servers.splice(0)) if (s.child.exitCode === null && s.child.signalCode === null) await s.close();
    removeDir(dir);
  });
  const serve = (env: Record<string, string> = {}) => {
    const s = new Server(TARGETS[0]!, ["serve", "--root", dir], env);
    servers.push(s);
    return s;
  };
  return Object.assign(serve, { dir: () => dir });
}
