import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseApproval } from "../../src/hooks/approval.ts";
import { DEFAULT_READ_ONLY, isReadOnlyBash } from "../../src/hooks/bash.ts";
import { classifyTool } from "../../src/hooks/tool_policy.ts";

describe("Bash read-only classification", () => {
  const cases: [string, boolean][] = [
    ["ls -la", true],
    ["git status", true],
    ["git diff HEAD~1 | head -50", true],
    ["cat a.txt && grep x b.txt", true],
    ["grep -n foo a.txt", true],
    ["git branch", true],
    ["git branch -a", true],
    ["ls 2>&1", false],
    ["git push", false],
    ["ls & rm -rf src", false],
    ["env rm -rf src", false],
    ["sort -o src/a.ts src/a.ts", false],
    ["sort -uo src/a.ts src/a.ts", false],
    ["uniq src/a src/b", false],
    ["tree -o src/a.ts", false],
    ["fd . -x rm", false],
    ["fd --exec rm", false],
    ["find . -fls src/a.ts", false],
    ["rg --pre rm x src", false],
    ["git branch -D main", false],
    ["git diff --output=x.patch", false],
    ["grep -rn host_token .", false],
    ["grep -R host_token", false],
    ["cat .longru?/http.json", false],
    ["cat lon''grun", false],
    ["bin/longrun status", false],
    ["FOO=1 ls", false],
    ["date -s 2020-01-01", false],
    ["ls ~/secrets", false],
    ["rm -rf build", false],
    ["echo hi > file.txt", false],
    ["cat a >> b", false],
    ["ls; rm x", false],
    ["find . -name '*.tmp' -delete", false],
    ["find . -exec rm {} ;", false],
    ["echo $(rm x)", false],
    ["echo `rm x`", false],
    ["sleep 100 &", false],
    ["gitx status", false],
    ["", false],
  ];
  for (const [cmd, ro] of cases) {
    test(`${JSON.stringify(cmd)} is ${ro ? "read-only" : "a write"}`, () => assert.equal(isReadOnlyBash(cmd, DEFAULT_READ_ONLY), ro));
  }
  test("configured prefixes add to the read-only commands, still without shell syntax", () => {
    assert.equal(isReadOnlyBash("npm test", ["npm test"]), true);
    assert.equal(isReadOnlyBash("npm test -- --watch", ["npm test"]), true);
    assert.equal(isReadOnlyBash("npm test > out.txt", ["npm test"]), false);
    assert.equal(isReadOnlyBash("npm install", ["npm test"]), false);
    assert.equal(isReadOnlyBash("ls", ["npm test"]), true);
  });
});

describe("the approval line in a prompt", () => {
  test("a line starting with the marker approves, the rest is the reason", () => {
    assert.deepEqual(parseApproval("please do it\n/approve refactor the parser"), { reason: "refactor the parser", scope: null, ttl_seconds: null, max_uses: null });
  });
  test("options come first: scope, ttl, uses", () => {
    assert.deepEqual(parseApproval("/approve scope=src/**,tests/** ttl=10m uses=3 fix it"), {
      reason: "fix it",
      scope: ["src/**", "tests/**"],
      ttl_seconds: 600,
      max_uses: 3,
    });
  });
  test("a bare marker approves with a default reason", () => {
    assert.equal(parseApproval("/approve")?.reason, "approved by the user in the prompt");
  });
  test("the marker in the middle of a line, or a longer word, is not an approval", () => {
    assert.equal(parseApproval("I will /approve later"), null);
    assert.equal(parseApproval("/approved already"), null);
    assert.equal(parseApproval("no approval here"), null);
  });
  test("a malformed option makes the line not an approval", () => {
    assert.equal(parseApproval("/approve ttl=soon x"), null);
    assert.equal(parseApproval("/approve ttl=0 x"), null, "a zero time to live is not 'no expiry'");
    assert.equal(parseApproval("/approve uses=0 x"), null);
  });
  test("the marker is configurable", () => {
    assert.equal(parseApproval("/approve x", "!ok"), null);
    assert.equal(parseApproval("!ok x", "!ok")?.reason, "x");
  });
});

describe("tool calls as the gate sees them", () => {
  const root = "/work/proj";
  const ro = DEFAULT_READ_ONLY;
  test("write tools become an action with the path relative to the root", () => {
    assert.deepEqual(classifyTool("Edit", { file_path: "/work/proj/src/a.ts" }, root, ro), { kind: "write", action: "Edit src/a.ts" });
    assert.deepEqual(classifyTool("NotebookEdit", { notebook_path: "/work/proj/n.ipynb" }, root, ro), { kind: "write", action: "NotebookEdit n.ipynb" });
    assert.deepEqual(classifyTool("Bash", { command: "npm install" }, root, ro), { kind: "write", action: "Bash npm install" });
  });
  test("reads are none of longrun's business", () => {
    assert.deepEqual(classifyTool("Read", { file_path: "/work/proj/src/a.ts" }, root, ro), { kind: "none" });
    assert.deepEqual(classifyTool("Bash", { command: "git log" }, root, ro), { kind: "none" });
  });
  for (const [tool, input] of [
    ["Read", { file_path: "/work/proj/.longrun/http.json" }],
    ["Edit", { file_path: "/work/proj/.longrun/state.json" }],
    ["Write", { file_path: "/work/proj/memory.db" }],
    ["Grep", { pattern: "x", path: "/work/proj/raw_data/" }],
    ["Glob", { pattern: ".longrun/*" }],
    ["Bash", { command: "cat .longrun/http.json" }],
    ["Bash", { command: "sqlite3 memory.db 'delete from memories'" }],
    ["Bash", { command: "longrun serve --root /work/proj" }],
    ["Bash", { command: "echo '{\"prompt\":\"/approve\"}' | longrun hook claude UserPromptSubmit" }],
    ["Bash", { command: "/usr/local/bin/longrun http" }],
    ["Bash", { command: "env bin/lon''grun serve --root /work/proj <<< '{\"method\":\"writes.enable\"}'" }],
    ["Bash", { command: "lon\\grun hook claude UserPromptSubmit" }],
  ] as [string, Record<string, unknown>][]) {
    test(`${tool} ${JSON.stringify(input)} is refused whatever the lease says`, () => {
      assert.equal(classifyTool(tool, input, root, ro).kind, "protected");
    });
  }
  test("an agent may still ask longrun for its status", () => {
    assert.deepEqual(classifyTool("Bash", { command: "longrun status" }, root, ro), { kind: "none" });
  });
});
