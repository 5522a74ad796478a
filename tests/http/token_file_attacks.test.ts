/**
 * Token files and http.json against what someone who can place files might try (task R): a FIFO
 * (which would hang a plain read), a link to one, a device, a process's own descriptors, a huge
 * sparse file, a link to a regular file (a mounted secret's usual shape, taken). Each is refused at
 * once with a line naming the variable, or in http.json's case answered with why its tokens are
 * not kept; nothing blocks. In process, on real files.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { readTokenFile } from "../../src/http/token_files.ts";
import { keptTokens, newToken, TokenEnvError, writeTokenFile } from "../../src/http/tokens.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

const HAS_MKFIFO = (() => {
  try {
    execFileSync("mkfifo", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe("token files and http.json that are not what they seem", () => {
  let dir = "";
  before(() => {
    dir = tempDir();
  });
  after(() => removeDir(dir));

  const refused = (file: string, why: RegExp) =>
    assert.throws(() => readTokenFile("LONGRUN_HOST_TOKEN_FILE", file), (e: Error) => e instanceof TokenEnvError && why.test(e.message) && e.message.startsWith("LONGRUN_HOST_TOKEN_FILE"), file);

  test("a FIFO, a link to one, a device, the process's own descriptors: refused at once as not a regular file", { skip: HAS_MKFIFO ? false : "no mkfifo on this machine to make a FIFO with" }, () => {
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    symlinkSync(fifo, join(dir, "to-fifo"));
    refused(fifo, /not a regular file/);
    refused(join(dir, "to-fifo"), /not a regular file/);
    refused("/dev/zero", /not a regular file/);
    refused("/dev/stdin", /not a regular file|ENOENT|ENXIO/);
    const fd = openSync(fifo, "r+"); // a FIFO held open, reachable as /proc/self/fd/N
    try {
      refused(`/proc/self/fd/${fd}`, /not a regular file|ENOENT/);
      refused(`/dev/fd/${fd}`, /not a regular file|ENOENT/);
    } finally {
      closeSync(fd);
    }
  });

  test("a huge sparse file is refused by its size, unread; a link to a regular file (a mounted secret) is read", () => {
    const big = join(dir, "big");
    writeFileSync(big, "");
    truncateSync(big, 1024 * 1024 * 1024);
    refused(big, /holds 1073741824 bytes/);
    const token = newToken();
    mkdirSync(join(dir, "..data"));
    writeFileSync(join(dir, "..data", "token"), token + "\n");
    symlinkSync(join(dir, "..data", "token"), join(dir, "token"));
    assert.equal(readTokenFile("LONGRUN_HOST_TOKEN_FILE", join(dir, "token")), token);
  });

  test("http.json a FIFO, a link to a FIFO or to our own good file, or a directory: its tokens are not kept, and nothing blocks", { skip: HAS_MKFIFO ? false : "no mkfifo on this machine to make a FIFO with" }, () => {
    const fifo = join(dir, "http-fifo.json");
    execFileSync("mkfifo", ["-m", "600", fifo]);
    assert.match((keptTokens(fifo) as { why: string }).why, /not a regular file/);
    symlinkSync(fifo, join(dir, "http-to-fifo.json"));
    assert.match((keptTokens(join(dir, "http-to-fifo.json")) as { why: string }).why, /not a regular file/);
    const good = join(dir, "good.json");
    writeTokenFile(good, { url: "http://127.0.0.1:1", tokens: { host: newToken(), agent: newToken(), metrics: null }, origins: { given: {} } });
    symlinkSync(good, join(dir, "http-link.json"));
    assert.match((keptTokens(join(dir, "http-link.json")) as { why: string }).why, /not a regular file/);
    mkdirSync(join(dir, "http-dir.json"), { mode: 0o700 });
    assert.match((keptTokens(join(dir, "http-dir.json")) as { why: string }).why, /not a regular file/);
  });
});
