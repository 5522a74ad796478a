/**
 * The Landlock layer of `longrun sandbox` (what it uses inside Claude Code's own sandbox, where
 * bubblewrap cannot nest): the pure part in-process, the boundary through the binary with
 * `SANDBOX_RUNTIME=1` (the variable Claude Code's sandbox sets) outside any outer sandbox, where
 * nothing masks longrun's files — so read mode must hide them itself and lease mode must refuse.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { readableAround } from "../../src/sandbox/landlock_run.ts";
import { removeDir, run, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary } from "../support/server.ts";

const made: string[] = [];
after(() => made.forEach(removeDir));

describe("readableAround", () => {
  const tree: Record<string, string[]> = { "/": ["usr", "tmp", "home"], "/tmp": ["a", "b", "c"], "/tmp/b": [".longrun", "src", "memory.db"] };
  const list = (d: string) => tree[d] ?? [];

  test("keeps everything readable but the hidden paths, splitting only the directories on the way to them", () => {
    const got = readableAround(["/tmp/b/.longrun", "/tmp/b/memory.db"], list)!.sort();
    assert.deepEqual(got, ["/home", "/tmp/a", "/tmp/b/src", "/tmp/c", "/usr"]);
  });

  test("a hidden directory's parent is split, not granted whole", () => {
    const got = readableAround(["/tmp/b"], list)!;
    assert.ok(!got.includes("/tmp") && !got.includes("/tmp/b"), JSON.stringify(got));
  });

  test("gives up (null) past its cap rather than return a partial list", () => {
    assert.equal(readableAround(["/tmp/b/.longrun"], list, 2), null);
  });
});

async function root(name: string): Promise<{ dir: string; token: string }> {
  const dir = tempDir(`longrun-ll-${name}-`);
  made.push(dir);
  const served = await run([BINARY, "serve", "--root", dir], { input: '{"jsonrpc":"2.0","id":1,"method":"task.start","params":{"description":"landlock"}}\n' });
  assert.equal(served.code, 0, served.stderr);
  const token = `TOKEN_${name}_${Math.random().toString(36).slice(2)}`;
  writeFileSync(join(dir, ".longrun", "http.json"), JSON.stringify({ host_token: token }));
  return { dir, token };
}

const landlocked = (mode: string, dir: string, script: string) => run([BINARY, "sandbox", "--mode", mode, "--root", dir, "--", "bash", "-c", script], { cwd: dir, env: { SANDBOX_RUNTIME: "1" } });

describe("longrun sandbox under Landlock (through the binary)", () => {
  test("read mode: nothing written but TMPDIR, longrun's files and another root's unreadable, no TCP", async () => {
    requireBinary();
    const a = await root("a");
    const b = await root("b");
    let connections = 0;
    const server: Server = createServer((s) => (connections++, s.destroy()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const r = await landlocked("read", a.dir, `echo x > new.txt; echo t > "$TMPDIR/t" && echo tmp-ok; cat .longrun/http.json; cat ${b.dir}/.longrun/http.json; grep -r -a TOKEN_ . ${b.dir}; exec 3<>/dev/tcp/127.0.0.1/${port}; echo done`);
      assert.equal(existsSync(join(a.dir, "new.txt")), false);
      assert.match(r.stdout, /tmp-ok/);
      assert.match(r.stdout, /done/, "the script ran to its end");
      assert.ok(!r.stdout.includes(a.token) && !r.stdout.includes(b.token), r.stdout);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(connections, 0);
    } finally {
      server.close();
    }
  });

  test("lease mode with no outer sandbox masking longrun's files is refused (exit 126), and the command does not run", async () => {
    requireBinary();
    const a = await root("c");
    const r = await landlocked("lease", a.dir, "echo ran > ran.txt");
    assert.equal(r.code, 126, r.stderr);
    assert.match(r.stderr, /is not protected by the sandbox around this command/);
    assert.equal(existsSync(join(a.dir, "ran.txt")), false);
    assert.ok(readFileSync(join(a.dir, ".longrun", "http.json"), "utf8").includes(a.token));
  });

  test("a process the command leaves behind is killed when it ends", async () => {
    requireBinary();
    const a = await root("d");
    mkdirSync(join(a.dir, "w"));
    const mark = `sleep-${Math.random().toString(36).slice(2)}`;
    const r = await landlocked("read", a.dir, `(exec -a ${mark} sleep 60 &) ; setsid bash -c 'exec -a ${mark} sleep 61' & sleep 0.2; pgrep -f "^${mark}" | wc -l`);
    assert.equal(r.stdout.trim(), "2", "both were running while the command ran");
    const left = await run(["pgrep", "-f", `^${mark}`]);
    assert.equal(left.stdout.trim(), "", "nothing outlives the command");
  });
});
