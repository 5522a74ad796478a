/**
 * One server, many roots, few file descriptors: the server keeps at most --max-roots open (the
 * least recently used idle one is closed to make room), so far more roots than descriptors allow
 * are served one after another; a root that cannot be opened for lack of descriptors is a clear
 * storage_error, and healthy roots keep working. The compiled binary under `ulimit -n`.
 */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { BINARY, requireBinary, Server } from "../support/server.ts";

const sh = { name: "the compiled binary under ulimit -n 128", argv: ["/bin/sh", "-c", `ulimit -n 128 && exec "$0" "$@"`, BINARY] };

test("60 roots through one server limited to 128 descriptors: each answers (only 8 open at once), the first one still has its memory", async () => {
  requireBinary();
  const base = tempDir();
  try {
    const dirs = Array.from({ length: 60 }, (_, i) => join(base, `r${i}`));
    for (const d of dirs) mkdirSync(d);
    const s = new Server(sh, ["serve", "--root", dirs[0]!, "--max-roots", "8"]);
    try {
      for (const [i, d] of dirs.entries()) {
        const saved = await s.result("memory.save", { root: d, type: "note", title: `root ${i}`, content: `only in root ${i}`, keywords: [`r${i}`] });
        assert.equal(saved.id, "S_0001", "each root has its own memory");
      }
      for (const i of [0, 1, 59]) {
        const hits = (await s.result("memory.search", { root: dirs[i]!, query: `r${i}` })).hits;
        assert.equal(hits.length, 1, `root ${i} still finds its record after being closed and opened again`);
      }
      const fds = readdirSync(`/proc/${s.child.pid}/fd`).length;
      assert.ok(fds < 128, `the server stays under its descriptor limit (${fds} open)`);
    } finally {
      await s.close();
    }
  } finally {
    removeDir(base);
  }
});

test("with a cap above what the descriptors allow, a root that cannot be opened is storage_error too_many_files (never internal), and the roots already open keep working", async () => {
  requireBinary();
  const base = tempDir();
  try {
    const dirs = Array.from({ length: 40 }, (_, i) => join(base, `r${i}`));
    for (const d of dirs) mkdirSync(d);
    const s = new Server(sh, ["serve", "--root", dirs[0]!, "--max-roots", "1000"]);
    try {
      const kinds = new Set<string>();
      for (const d of dirs) {
        const a = await s.call("memory.save", { root: d, type: "note", title: "t", content: "c", keywords: ["t"] });
        const e = a.error as { data: { kind: string; reason?: string } } | undefined;
        kinds.add(e ? `${e.data.kind}:${e.data.reason}` : "ok");
      }
      assert.deepEqual([...kinds].sort(), ["ok", "storage_error:too_many_files"], "some roots fit, the rest are refused clearly");
      assert.equal((await s.result("memory.get", { root: dirs[0]!, id: "S_0001" })).record.title, "t", "a healthy root still answers");
    } finally {
      await s.close();
    }
  } finally {
    removeDir(base);
  }
});

test("a bad --max-roots is refused at start with what to pass", async () => {
  requireBinary();
  const dir = tempDir();
  try {
    const s = new Server({ name: "binary", argv: [BINARY] }, ["serve", "--root", dir, "--max-roots", "0"]);
    const end = await s.exited;
    assert.equal(end.code, 2);
    assert.match(s.stderr, /--max-roots .* must be a whole number from 1/);
  } finally {
    removeDir(dir);
  }
});
