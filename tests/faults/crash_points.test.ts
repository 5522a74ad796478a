/**
 * Bodies and artifacts across SIGKILL at every step of their write: the blob's temp file, its
 * fsync, its rename, the directory's fsync, before and after the row's commit. After each kill
 * and a restart: what was never acknowledged is absent or whole (never a row without its body,
 * never a body read back wrong), no temp file survives a start, the database is intact. The
 * crash-test build of the binary (the shipped one ignores LONGRUN_CRASH_AT).
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { CRASH_BINARY, Server } from "../support/server.ts";

const binary = { name: "the compiled binary (crash-test build)", argv: [CRASH_BINARY] };
const BODY = "a body long enough to live in raw_data. ".repeat(400);
const BLOB_STEPS = ["raw.after_temp_write", "raw.after_temp_fsync", "raw.after_rename", "raw.after_dir_fsync"];

async function killedAt(root: string, point: string, method: string, params: Record<string, unknown>): Promise<void> {
  const s = new Server(binary, ["serve", "--root", root], { LONGRUN_CRASH_AT: point });
  await s.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) + "\n");
  const end = await s.exited;
  assert.equal(end.signal, "SIGKILL", `the process died at ${point} (stderr: ${s.stderr})`);
  assert.equal(s.answers.length, 0, "nothing was acknowledged");
}

async function afterRestart(root: string, check: (s: Server) => Promise<void>): Promise<void> {
  const s = new Server(binary, ["serve", "--root", root]);
  try {
    await check(s);
  } finally {
    await s.close();
  }
  for (const dir of [".longrun", "raw_data"]) assert.deepEqual(readdirSync(join(root, dir)).filter((n) => n.endsWith(".tmp")), [], `no temp files in ${dir}`);
  const { Database } = await import("../../src/db/database.ts");
  const db = await Database.open("file://" + join(root, "memory.db"));
  try {
    assert.equal((await db.execute("PRAGMA integrity_check")).rows[0]![0], "ok");
  } finally {
    await db.close();
  }
}

describe("bodies and artifacts across SIGKILL at every step of their write", () => {
  let root = "";
  beforeEach(async () => {
    root = tempDir();
    const s = new Server(binary, ["serve", "--root", root]);
    await s.result("task.start", { description: "crash points for bodies" });
    await s.close();
  });
  afterEach(() => removeDir(root));

  for (const point of [...BLOB_STEPS, "memory.before_commit", "memory.after_commit"]) {
    test(`memory.save of a long body killed at ${point}: the record is absent or whole`, async () => {
      await killedAt(root, point, "memory.save", { type: "note", title: "long", content: BODY, keywords: ["crashbody"] });
      await afterRestart(root, async (s) => {
        const hits = (await s.result("memory.search", { query: "crashbody" })).hits;
        assert.ok(hits.length <= 1);
        const committed = point === "memory.after_commit";
        if (committed) assert.equal(hits.length, 1, "committed before the kill: present");
        if (point.startsWith("raw.")) assert.equal(hits.length, 0, "killed before the commit: absent");
        for (const h of hits) assert.equal((await s.result("memory.get", { id: h.id })).record.content === BODY, true, "whole, its body matches");
        assert.equal((await s.result("memory.save", { type: "note", title: "again", content: BODY, keywords: ["again"] })).record.size, new TextEncoder().encode(BODY).length);
      });
    });
  }

  for (const point of [...BLOB_STEPS, "artifact.before_commit", "artifact.after_commit"]) {
    test(`artifact.put killed at ${point}: the version is absent or readable exactly`, async () => {
      await killedAt(root, point, "artifact.put", { name: "report", kind: "full", content: BODY });
      await afterRestart(root, async (s) => {
        const versions = (await s.result("artifact.list", {})).artifacts.filter((a: { name: string }) => a.name === "report");
        if (point === "artifact.after_commit") assert.equal(versions.length, 1, "committed before the kill: present");
        else assert.equal(versions.length, 0, "killed before the commit: absent");
        for (const v of versions) assert.equal((await s.result("artifact.get", { name: "report", version: v.version })).artifact.content === BODY, true, "the body reads back exactly");
        const next = await s.result("artifact.put", { name: "report", kind: "full", content: "after" });
        assert.equal(next.artifact.version, versions.length + 1, "version numbers go on from what is there");
      });
    });
  }
});
