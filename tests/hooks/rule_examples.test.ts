/**
 * Every gate rule's own examples, run in process: each read-only program row
 * (src/hooks/readonly_programs.ts) through `readOnlyRefusal`, each lease option rule
 * (src/hooks/lease_options.ts) and lease program rule (src/hooks/lease_programs.ts) through
 * `leaseRefusal`, with a context built as the Claude Code hook builds it, over a real root on disk.
 * A row must carry at least one example of each kind. This is the fast layer; the binary corpus
 * (hostile_corpus.test.ts) stays the integration layer.
 */
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { toolContext } from "../../src/hooks/claude.ts";
import { defaultHookConfig } from "../../src/hooks/config.ts";
import { leaseRefusal } from "../../src/hooks/lease_bash.ts";
import { leaseOptionRules } from "../../src/hooks/lease_options.ts";
import { LEASE_PROGRAMS } from "../../src/hooks/lease_programs.ts";
import { readOnlyRefusal } from "../../src/hooks/readonly_bash.ts";
import { READ_ONLY_PROGRAMS } from "../../src/hooks/readonly_programs.ts";
import type { RuleExamples } from "../../src/hooks/rule_examples.ts";
import { literalOf, parseShell } from "../../src/hooks/shell/parse.ts";
import type { ToolContext } from "../../src/hooks/tools.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

/** A rule and its examples; `words`: what each example's first command must start with. */
interface Row {
  name: string;
  examples: RuleExamples;
  words?: { program: string; sub?: string; globalFlags?: readonly string[] };
}

/** Why a command is refused, or null when it passes. */
type Decide = (command: string) => Promise<string | null>;

/** One line for every example decided the other way than its row says. */
async function wrongExamples(rows: readonly Row[], decide: Decide): Promise<string[]> {
  const out: string[] = [];
  for (const r of rows) {
    for (const command of r.examples.pass) {
      const why = await decide(command);
      if (why !== null) out.push(`${r.name}: ${JSON.stringify(command)} should pass, but is refused (${why})`);
    }
    for (const command of r.examples.refused) {
      if ((await decide(command)) === null) out.push(`${r.name}: ${JSON.stringify(command)} should be refused, but passes`);
    }
  }
  return out;
}

/** The rows that lack a must-pass or a must-refuse example. */
function withoutExamples(rows: readonly Row[]): string[] {
  return rows.filter((r) => r.examples.pass.length === 0 || r.examples.refused.length === 0).map((r) => r.name);
}

/** The examples that do not start with their row's program (and subcommand). */
function examplesOfOtherPrograms(rows: readonly Row[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    if (!r.words) continue;
    for (const command of [...r.examples.pass, ...r.examples.refused]) {
      const words = parseShell(command).commands[0]?.words.map((w) => literalOf(w)) ?? [];
      let k = 1;
      while (r.words.sub && r.words.globalFlags?.includes(words[k] ?? "")) k++;
      if (words[0] !== r.words.program || (r.words.sub !== undefined && words[k] !== r.words.sub)) out.push(`${r.name}: ${JSON.stringify(command)}`);
    }
  }
  return out;
}

const READ_ONLY_ROWS: Row[] = Object.entries(READ_ONLY_PROGRAMS).flatMap(([program, rule]) => [
  { name: program, examples: rule.examples, words: { program } },
  ...Object.entries(rule.sub ?? {}).map(([sub, r]) => ({ name: `${program} ${sub}`, examples: r.examples, words: { program, sub, globalFlags: rule.globalFlags } })),
]);

const LEASE_ROWS: Row[] = [...leaseOptionRules(), ...Object.entries(LEASE_PROGRAMS).map(([name, r]) => ({ name, examples: r.examples }))];

/**
 * A longrun root as the hook sees it (state, memory, raw bodies), with a project beside them, at
 * the top of a repository (a .git directory is all the read-only check looks for; nothing here
 * starts git, so the test stays in the fast lane).
 */
function layRoot(dir: string): void {
  mkdirSync(join(dir, ".git"));
  mkdirSync(join(dir, ".longrun"));
  writeFileSync(join(dir, ".longrun", "http.json"), '{"token":"secret"}');
  writeFileSync(join(dir, ".longrun", "hooks.json"), "{}");
  writeFileSync(join(dir, "memory.db"), "SQLite format 3\u0000");
  mkdirSync(join(dir, "raw_data"));
  mkdirSync(join(dir, "src"));
  mkdirSync(join(dir, "docs"));
  symlinkSync(join(dir, ".longrun"), join(dir, "docs", "state")); // a link into .longrun/, away from src
  writeFileSync(join(dir, "src", "a.ts"), "export const a = 1;\n");
  writeFileSync(join(dir, "a.txt"), "hello\n");
  writeFileSync(join(dir, "b.txt"), "world\n");
  for (const ext of ["sh", "py", "js"]) {
    writeFileSync(join(dir, `evil.${ext}`), ext === "sh" ? "rm -rf .lo" + "ngrun\n" : "remove('.lo" + "ngrun/state.json')\n");
    writeFileSync(join(dir, `fine.${ext}`), ext === "sh" ? "echo fine\n" : "print('fine')\n");
  }
}

describe("every gate rule carries examples, and they are decided as the rule says", () => {
  let root = "";
  let c: ToolContext;
  const readOnly: Decide = async (command) => {
    try {
      return await readOnlyRefusal(parseShell(command), c.protect, c.env, { extra: [], trustedPrograms: [], path: c.path, skipEnvironmentChecks: true });
    } catch (e) {
      return `unreadable: ${(e as Error).message}`;
    }
  };
  const lease: Decide = async (command) => {
    try {
      return leaseRefusal(parseShell(command), { protect: c.protect, env: c.env });
    } catch (e) {
      return `unreadable: ${(e as Error).message}`;
    }
  };

  before(() => {
    root = tempDir("longrun-rule-examples-");
    layRoot(root);
    c = toolContext({ cwd: root }, root, defaultHookConfig());
  });
  after(() => removeDir(root));

  test("each read-only program row (and git subcommand) passes its examples and refuses its counter-examples", async () => {
    assert.deepEqual(await wrongExamples(READ_ONLY_ROWS, readOnly), []);
  });

  test("each lease option rule and lease program rule passes its examples and refuses its counter-examples", async () => {
    assert.deepEqual(await wrongExamples(LEASE_ROWS, lease), []);
  });

  test("a program named after a property of Object.prototype finds no read-only row", async () => {
    for (const name of ["valueOf", "constructor", "toString", "__proto__", "hasOwnProperty", "isPrototypeOf"]) {
      assert.notEqual(await readOnly(`${name} a.txt`), null, name);
      assert.notEqual(await readOnly(`git ${name}`), null, `git ${name}`);
    }
  });

  test("every row has at least one example that must pass and one that must be refused", () => {
    assert.ok(READ_ONLY_ROWS.length > 30 && LEASE_ROWS.length > 30);
    assert.deepEqual(withoutExamples([...READ_ONLY_ROWS, ...LEASE_ROWS]), []);
  });

  test("a read-only row's examples run its own program (and subcommand), and every example is readable", () => {
    assert.deepEqual(examplesOfOtherPrograms(READ_ONLY_ROWS), []);
    for (const r of [...READ_ONLY_ROWS, ...LEASE_ROWS]) for (const command of [...r.examples.pass, ...r.examples.refused]) assert.doesNotThrow(() => parseShell(command), `${r.name}: ${command}`);
  });

  test("the checks can fail: a wrong example, a row without examples and an example of another program are reported", async () => {
    const wrong: Row = { name: "wrong", examples: { pass: ["rm -rf build"], refused: ["ls"] }, words: { program: "ls" } };
    assert.deepEqual((await wrongExamples([wrong], readOnly)).map((line) => line.split(":")[0]), ["wrong", "wrong"]);
    assert.equal((await wrongExamples([{ name: "wrong", examples: { pass: ["cat .longrun/http.json"], refused: [] } }], lease)).length, 1);
    assert.deepEqual(withoutExamples([{ name: "bare", examples: { pass: ["ls"], refused: [] } }, { name: "full", examples: { pass: ["ls"], refused: ["rm x"] } }]), ["bare"]);
    assert.deepEqual(examplesOfOtherPrograms([wrong]), ['wrong: "rm -rf build"']);
  });
});
