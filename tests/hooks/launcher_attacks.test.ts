/**
 * An agent reaching a person's verbs (grant, revoke, start, open) through what longrun's packages
 * install besides the executable: the npm launcher (`node …/bin/longrun.js`), the Python
 * package's module (`python -mlongrun`, `python -m longrun.__main__`), the copy `hook install`
 * makes under `$XDG_DATA_HOME/longrun/bin/<version>/longrun`. Each is refused by the gate as
 * running longrun's executable, decided in process with the Claude Code hook's context (the OS
 * sandbox, which hides `.longrun/` from such a run besides, is not relied on here).
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { toolContext } from "../../src/hooks/claude.ts";
import { defaultHookConfig } from "../../src/hooks/config.ts";
import { decideTool, type ToolContext } from "../../src/hooks/tools.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

const bash = (command: string) => ({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command } });

describe("longrun's launchers are longrun's executable to the gate", () => {
  let root = "";
  let c: ToolContext;
  before(() => {
    root = tempDir("longrun-launchers-");
    mkdirSync(join(root, ".longrun"));
    mkdirSync(join(root, "node_modules", "longrun", "bin"), { recursive: true });
    writeFileSync(join(root, "node_modules", "longrun", "bin", "longrun.js"), "#!/usr/bin/env node\n");
    writeFileSync(join(root, "build.js"), "console.log(1)\n");
    c = toolContext({ cwd: root }, root, defaultHookConfig());
  });
  after(() => removeDir(root));

  const kind = async (command: string) => (await decideTool(bash(command), c)).kind;

  test("the npm launcher, the Python module and the lasting copy are refused, by any of these spellings", async () => {
    const attacks = [
      "node node_modules/longrun/bin/longrun.js grant 'fix it'",
      "node ./node_modules/longrun/bin/longrun.js revoke",
      "bun node_modules/longrun/bin/longrun.js grant x",
      "node node_modules/longrun/bin/LONGRUN.JS grant x",
      "python3 -mlongrun grant x",
      "python3 -m longrun grant x",
      "python3 -m longrun.__main__ grant x",
      "python -m longrun.__main__ open",
      `${process.env.HOME ?? "/root"}/.local/share/longrun/bin/0.1.0/longrun grant x`,
      "XDG_DATA_HOME=/x /x/longrun/bin/0.1.0/longrun start 'a task'",
      "longrun.exe grant x",
      "longrun open",
      "longrun start 'a task'",
      "longrun list",
      "longrun revoke",
      "longrun answer R_0001 'yes, go on'",
      "python3 -m longrun answer 'yes'",
      "longrun events --follow",
      "longrun approve A_0001",
      "longrun reject A_0001 no",
      "longrun approvals",
      "exec -a status longrun grant x",
      "command longrun grant x",
    ];
    const got = await Promise.all(attacks.map(async (a) => [a, await kind(a)] as const));
    assert.deepEqual(got.filter(([, k]) => k !== "deny"), [], "each of these runs longrun's executable");
  });

  test("other scripts and modules are not taken for longrun", async () => {
    for (const ok of ["node build.js", "python3 -m json.tool a.json", "cat node_modules/longrun/package.json"]) {
      assert.notEqual(await kind(ok), "deny", ok);
    }
  });
});
