/**
 * The examples in docs/ do what they say: the research loop of docs/research-runs.md runs against
 * the binary as written (only `root` is given), and docs/python.md names every error class the
 * Python package defines.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { removeDir, REPO, run, tempDir } from "./support/helpers.ts";
import { BINARY, requireBinary } from "./support/server.ts";

const read = (f: string) => readFileSync(join(REPO, f), "utf8");

/** The first ```python block of `file` that starts with `opening`. */
export function pythonBlock(file: string, opening: string): string {
  const blocks = [...read(file).matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const block = blocks.find((b) => b.startsWith(opening));
  assert.ok(block, `${file} has a python block starting with ${JSON.stringify(opening)}`);
  return block;
}

/** Runs Python `code` with the repository's client and the built binary. */
export function runPython(code: string, cwd: string) {
  requireBinary();
  return run(["python3", "-c", code], { cwd, env: { PYTHONPATH: join(REPO, "clients", "python"), LONGRUN_BIN: BINARY }, timeoutMs: 60_000 });
}

describe("docs/research-runs.md", () => {
  test("the host's loop runs as written, with typed methods only, and spends what it charged", async () => {
    const block = pythonBlock("docs/research-runs.md", "from longrun import LongrunClient");
    assert.doesNotMatch(block, /lr\.call\(/, "the example uses the typed methods, not call()");
    const dir = tempDir();
    try {
      const r = await runPython(`root = ${JSON.stringify(dir)}\n${block}`, dir);
      assert.equal(r.code, 0, r.stderr);
      const spent = JSON.parse(r.stdout.trim().replaceAll("'", '"')) as Record<string, number>;
      assert.equal(spent.cost, 0.02);
      assert.equal(spent.tool_calls, 1, "one receipt, one tool call");
    } finally {
      removeDir(dir);
    }
  });
});

describe("docs/python.md", () => {
  test("names every error class the package defines", () => {
    const classes = [...read("clients/python/longrun/errors.py").matchAll(/^class (\w+)\(/gm)].map((m) => m[1]!);
    assert.ok(classes.length >= 20, `found ${classes.length} classes`);
    const doc = read("docs/python.md");
    const missing = classes.filter((c) => !doc.includes(`\`${c}\``));
    assert.deepEqual(missing, [], `docs/python.md does not name: ${missing.join(", ")}`);
  });

  test("names the memory methods of the client", () => {
    const methods = [...read("clients/python/longrun/_methods_tasks.py").matchAll(/^ {4}def (\w*memory\w*)\(/gm)].map((m) => m[1]!);
    assert.ok(methods.length >= 3, `found ${methods.join(", ")}`);
    const doc = read("docs/python.md");
    assert.deepEqual(methods.filter((m) => !doc.includes(`\`${m}\``)), []);
  });
});
