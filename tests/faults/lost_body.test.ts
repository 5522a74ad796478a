/**
 * A deliverable's stored body removed from raw_data/ is `content_missing` naming the item and the
 * file, not a corrupt state: the task goes on, and the remedies the message names (restore the
 * file, or store the content again) work. Through the compiled binary over stdio.
 */
import assert from "node:assert/strict";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { removeDir, tempDir } from "../support/helpers.ts";
import { Server, TARGETS } from "../support/server.ts";

describe("a lost body", () => {
  let dir = "";
  let s: Server | null = null;
  beforeEach(() => (dir = tempDir()));
  afterEach(async () => {
    if (s && s.child.exitCode === null && s.child.signalCode === null) await s.close();
    removeDir(dir);
  });

  test("an artifact whose body was deleted is content_missing naming it and its file; the task stays usable; restoring the file or putting it again works", async () => {
    s = new Server(TARGETS[0]!, ["serve", "--root", dir]);
    await s.result("task.start", { description: "a lost artifact body" });
    const put = await s.result("artifact.put", { name: "report", kind: "full", content: "the report" });
    const ref = String(put.artifact?.ref ?? put.ref ?? "");
    assert.match(ref, /^raw_data\//, JSON.stringify(put));
    const file = join(dir, ref);
    const saved = readFileSync(file);
    renameSync(file, `${file}.away`);
    const e = await s.error("artifact.get", { name: "report" });
    assert.equal(e.data.kind, "content_missing");
    assert.equal(e.code, -32014);
    assert.equal(e.data.path, file);
    assert.equal(e.data.reason, "missing");
    assert.match(e.data.item, /artifact report@1/);
    assert.match(e.message, /Restore that file from a backup, or artifact\.put stores it again/);
    const st = await s.result("task.status", {});
    assert.equal(st.task.status, "in_progress", "the state is not corrupt");
    writeFileSync(file, saved);
    assert.equal((await s.result("artifact.get", { name: "report" })).artifact.content, "the report", "the restored file is served");
    writeFileSync(file, "tampered");
    const bad = await s.error("artifact.get", { name: "report" });
    assert.equal(bad.data.kind, "content_missing");
    assert.equal(bad.data.reason, "mismatch");
    const again = await s.result("artifact.put", { name: "report", kind: "full", content: "the report, again" });
    assert.equal((await s.result("artifact.get", { name: "report" })).artifact.content, "the report, again", JSON.stringify(again));
  });

  test("a context whose body was deleted is content_missing; context.put again gives a readable ref", async () => {
    s = new Server(TARGETS[0]!, ["serve", "--root", dir]);
    await s.result("task.start", { description: "a lost context body" });
    const put = await s.result("context.put", { label: "page", content: "0123456789" });
    const ref = String(put.ref);
    const st0 = await s.result("context.read", { ref, offset: 0, length: 4 });
    assert.equal(st0.content ?? st0.text, "0123");
    const { readdirSync } = await import("node:fs");
    for (const f of readdirSync(join(dir, "raw_data"))) renameSync(join(dir, "raw_data", f), join(dir, `${f}.away`));
    const e = await s.error("context.read", { ref, offset: 0, length: 4 });
    assert.equal(e.data.kind, "content_missing");
    assert.match(e.data.item, new RegExp(`context ${ref}`));
    assert.match(e.message, /context\.put stores it again under a new ref/);
    const fresh = await s.result("context.put", { label: "page", content: "0123456789" });
    const r = await s.result("context.read", { ref: fresh.ref, offset: 0, length: 4 });
    assert.equal(r.content ?? r.text, "0123");
    assert.equal((await s.result("task.status", {})).task.status, "in_progress");
  });
});
