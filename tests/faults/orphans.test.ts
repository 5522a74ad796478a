/**
 * Bodies written by a process killed before its commit (a blob first, then the row naming it)
 * are collected by the next server that opens the root — only those no row names and only when
 * old enough that no commit in flight elsewhere can still claim them.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { removeDir, tempDir, until } from "../support/helpers.ts";
import { Server, TARGETS } from "../support/server.ts";

test("a server collects orphan blobs older than the grace period, and keeps referenced, young and foreign files", async () => {
  const dir = tempDir();
  try {
    let s = new Server(TARGETS[0]!, ["serve", "--root", dir]);
    const body = "a long body ".repeat(2000); // kept in raw_data, not inline
    const saved = await s.result("memory.save", { type: "note", title: "kept", content: body, keywords: ["kept"] });
    await s.close();
    const raw = join(dir, "raw_data");
    const referenced = readdirSync(raw);
    assert.equal(referenced.length, 1, "the body is a blob");
    const hourAgo = new Date(Date.now() - 3600_000);
    const old = join(raw, "m-0123456789abcdef-01234567.txt");
    const young = join(raw, "m-fedcba9876543210-76543210.txt");
    const foreign = join(raw, "notes-by-a-person.txt");
    for (const f of [old, young, foreign]) writeFileSync(f, "left behind");
    utimesSync(old, hourAgo, hourAgo);
    utimesSync(foreign, hourAgo, hourAgo);
    utimesSync(join(raw, referenced[0]!), hourAgo, hourAgo);

    s = new Server(TARGETS[0]!, ["serve", "--root", dir]);
    assert.equal((await s.result("memory.get", { id: saved.id })).record.content, body);
    await until(() => !existsSync(old), "the old orphan to be collected");
    assert.ok(existsSync(young), "a young blob may belong to a commit in flight");
    assert.ok(existsSync(foreign), "a file not named like a blob is not ours");
    assert.ok(existsSync(join(raw, referenced[0]!)), "a referenced blob stays");
    assert.equal((await s.result("memory.get", { id: saved.id })).record.content, body);
    await s.close();
  } finally {
    removeDir(dir);
  }
});
