/**
 * The root's layout table (src/root/layout.ts) and every place that reads it: each consumer agrees
 * with the table, and each row's examples (a path it covers, a near miss it does not) are run
 * in-process against every column the row has.
 */
import assert from "node:assert/strict";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { GITIGNORE_BLOCK } from "../../src/hooks/install.ts";
import { denyRules, protectedPaths } from "../../src/hooks/install_settings.ts";
import { turnEndPath } from "../../src/hooks/claude.ts";
import { literalRule, PROTECTED, protectContext, protectedInodes } from "../../src/hooks/protect.ts";
import { GITIGNORE_LINES, inodeFiles, LAYOUT, type LayoutEntry, ROOT_PATHS, ruleSegments } from "../../src/root/layout.ts";
import { rootPaths } from "../../src/root/root.ts";
import { GIT_ENTRIES, ROOT_ENTRIES } from "../../src/sandbox/layout.ts";
import { removeDir, tempDir } from "../support/helpers.ts";

const base = tempDir();
const root = join(base, "root");
const home = join(base, "home");
mkdirSync(join(root, ".longrun"), { recursive: true });
mkdirSync(home, { recursive: true });
after(() => removeDir(base));
const ctx = { ...protectContext(root, root, { HOME: home }), exePaths: [] };

/** A glob as Claude Code's permission rules and git pathspecs read it: `**` crosses slashes, `*` does not. */
function globMatches(glob: string, path: string): boolean {
  const re = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*\*\/?|\*|\?/g, (m) => (m === "?" ? "[^/]" : m === "*" ? "[^/]*" : ".*"));
  return new RegExp(`^${re}$`).test(path);
}

/** A .gitignore line without an inner slash: it matches a name at any depth; `x/` only a directory. */
function gitignoreMatches(line: string, path: string): boolean {
  const dirOnly = line.endsWith("/");
  const name = line.replace(/\/$/, "");
  const segs = path.split("/");
  return segs.some((s, k) => (!dirOnly || k < segs.length - 1) && globMatches(name, s));
}

const sandboxEntries = [...ROOT_ENTRIES.map((e) => ({ ...e, rel: e.rel })), ...GIT_ENTRIES.map((e) => ({ ...e, rel: `.git/${e.rel}` }))];
const covers = (rel: string, path: string) => path === rel || path.startsWith(rel + "/");
const sandboxFor = (path: string) => sandboxEntries.find((e) => covers(e.rel, path));

const rowName = (e: LayoutEntry) => `${e.rel} (${e.example.match} / not ${e.example.notMatch})`;

describe("the root's layout table", () => {
  test("rows are unique and every row's examples are paths relative to the root", () => {
    assert.equal(new Set(LAYOUT.map((e) => e.rel)).size, LAYOUT.length);
    for (const e of LAYOUT) {
      assert.ok(!e.example.match.startsWith("/") && !e.example.notMatch.startsWith("/"), e.rel);
      assert.ok(covers(e.rel, e.example.match), `${e.rel}: its match example lies under it`);
      assert.ok(!covers(e.rel, e.example.notMatch), `${e.rel}: its near miss does not`);
    }
  });

  test("every entry is out of an agent's reach: the gate's table or the sandbox's git files cover it", () => {
    for (const e of LAYOUT) {
      const rule = literalRule(`${root}/${e.example.match}`, () => true, ctx);
      if (e.gitRedirect) assert.equal(sandboxFor(e.example.match)?.rule, "git_redirect", rowName(e));
      else assert.ok(rule, `${rowName(e)}: no protected rule covers it`);
      assert.equal(literalRule(`${root}/${e.example.notMatch}`, () => true, ctx), null, `${rowName(e)}: the near miss is protected`);
    }
  });

  for (const e of LAYOUT.filter((r) => r.protect)) {
    test(`protect: ${rowName(e)} falls under ${e.protect} and its near miss under no rule`, () => {
      assert.equal(literalRule(`${root}/${e.example.match}`, () => true, ctx)?.id, e.protect);
      assert.equal(literalRule(`${root}/${e.example.notMatch}`, () => true, ctx), null);
    });
  }

  test("protect: each rule built from the table has exactly the table's rows as its paths", () => {
    const ids = new Set(LAYOUT.flatMap((e) => (e.protect ? [e.protect] : [])));
    for (const id of ids) {
      const rule = PROTECTED.find((r) => r.id === id);
      assert.ok(rule, id);
      assert.deepEqual(rule.segments, ruleSegments(id), id);
      let paths = [""];
      for (const names of rule.segments) paths = paths.flatMap((p) => names.map((n) => (p ? `${p}/${n}` : n)));
      assert.deepEqual(paths.sort(), LAYOUT.filter((e) => e.protect === id).map((e) => e.rel).sort(), `${id}: its segments name exactly its rows`);
    }
  });

  for (const e of LAYOUT.filter((r) => r.deny)) {
    test(`deny: ${rowName(e)} is denied to ${e.deny!.tools.join(" and ")} where the table says`, () => {
      const rules = denyRules(root);
      const d = e.deny!;
      for (const tool of d.tools) {
        for (const form of ["/", `/${root}/`]) assert.equal(rules.includes(`${tool}(${form}${d.glob})`), d.project, `${tool}(${form}${d.glob})`);
        assert.equal(rules.includes(`${tool}(~/${d.glob})`), d.home, `${tool}(~/${d.glob})`);
      }
      assert.ok(globMatches(d.glob, e.example.match), `${d.glob} matches ${e.example.match}`);
      assert.ok(!globMatches(d.glob, e.example.notMatch), `${d.glob} does not match ${e.example.notMatch}`);
    });
  }

  test("deny: install writes exactly the table's rules, in the order it always has", () => {
    const r = `/${root}/`;
    const project = (f: string) => [`Read(${f}.longrun/**)`, `Edit(${f}.longrun/**)`, `Read(${f}memory.db*)`, `Edit(${f}memory.db*)`, `Read(${f}raw_data/**)`, `Edit(${f}raw_data/**)`, `Edit(${f}.claude/settings.json)`, `Edit(${f}.claude/settings.local.json)`, `Edit(${f}.claude/commands/approve.md)`];
    assert.deepEqual(denyRules(root), [...project("/"), ...project(r), "Edit(~/.claude/settings.json)", "Edit(~/.claude/settings.local.json)", "Edit(~/.claude.json)"]);
  });

  test("gitignore: install adds the table's lines, each matching its row's example and not the near miss", () => {
    assert.deepEqual(GITIGNORE_BLOCK.slice(1), GITIGNORE_LINES);
    assert.deepEqual(GITIGNORE_LINES, [".longrun/", "memory.db*", "raw_data/"]);
    for (const e of LAYOUT.filter((r) => r.gitignore)) {
      assert.ok(gitignoreMatches(e.gitignore!, e.example.match), rowName(e));
      assert.ok(!gitignoreMatches(e.gitignore!, e.example.notMatch), rowName(e));
    }
  });

  test("tracked: each pathspec finds its row's example at any depth and not the near miss", () => {
    for (const e of LAYOUT.filter((r) => r.tracked)) {
      for (const at of ["", "nested/dir/"]) assert.ok(globMatches(`**/${e.tracked}`, `${at}${e.example.match}`), `${rowName(e)} at ${at}`);
      assert.ok(!globMatches(`**/${e.tracked}`, e.example.notMatch), rowName(e));
    }
  });

  for (const e of LAYOUT.filter((r) => r.placeholder)) {
    test(`sandbox: ${rowName(e)} is masked with placeholder ${e.placeholder}`, () => {
      const entry = sandboxEntries.find((x) => x.rel === e.rel);
      assert.ok(entry, e.rel);
      assert.equal(entry.absent, e.placeholder);
      assert.equal(sandboxFor(e.example.match)?.rel, e.rel);
      assert.notEqual(sandboxFor(e.example.notMatch)?.rel, e.rel);
      if (e.gitRedirect) {
        assert.equal(entry.rule, "git_redirect");
        assert.ok(protectedPaths(root, null, home).some((p) => p.path === join(root, e.rel) && p.rule === "git_redirect"), "install denies it to the sandbox too");
      }
    });
  }

  test("sandbox: placeholders other than the table's are skip", () => {
    const tabled = new Set(LAYOUT.filter((e) => e.placeholder).map((e) => e.rel));
    for (const x of sandboxEntries) if (!tabled.has(x.rel)) assert.equal(x.absent, "skip", x.rel);
  });

  test("inode: a hard link to each file the table names is caught", () => {
    const files = inodeFiles(root, home);
    for (const e of LAYOUT.filter((r) => r.inode)) {
      if (e.inode !== "home") assert.ok(files.includes(`${root}/${e.rel}`), e.rel);
      if (e.inode !== "root") assert.ok(files.includes(`${home}/${e.rel}`), e.rel);
    }
    for (const f of files) {
      mkdirSync(dirname(f), { recursive: true });
      writeFileSync(f, "x");
    }
    const inodes = protectedInodes(ctx);
    for (const f of files) {
      const st = statSync(f);
      assert.ok(inodes.has(`${st.dev}:${st.ino}`), f);
    }
    assert.equal(inodes.size, files.length);
  });

  test("names: the root's paths and the hook's are the table's", () => {
    const p = rootPaths("/r");
    const named: Record<string, string> = { longrun: p.longrun, state: p.state, pending: p.pending, lock: p.lock, settings: p.settings, memoryDb: p.memoryDb, rawData: p.rawData };
    for (const [name, path] of Object.entries(named)) assert.equal(path, join("/r", ROOT_PATHS[name as keyof typeof ROOT_PATHS]), name);
    if (!process.env.LONGRUN_STORE) assert.equal(turnEndPath(root), `${root}/${ROOT_PATHS.turnEnd}`);
    assert.deepEqual(
      Object.entries(ROOT_PATHS).sort(),
      LAYOUT.filter((e) => e.name).map((e) => [e.name, e.rel]).sort(),
    );
  });
});

describe("names the storage floor keeps (it sits below the layout table, so it states them once and is checked here)", () => {
  test("a blob's reference begins with the root's raw_data/ directory, and server-store state lives in a directory named like a root's own", async () => {
    const { RAW_REF_PREFIX } = await import("../../src/store/blobs.ts");
    const { STATE_DIR_NAME, stateDirParents } = await import("../../src/store/server_config.ts");
    assert.equal(RAW_REF_PREFIX, `${ROOT_PATHS.rawData}/`);
    assert.equal(STATE_DIR_NAME, ROOT_PATHS.longrun);
    assert.deepEqual(stateDirParents({ XDG_STATE_HOME: "/x/state" }, "/h"), ["/x/state/.longrun", "/h/.local/state/.longrun"]);
    assert.deepEqual(stateDirParents({ XDG_STATE_HOME: "relative" }, "/h"), ["/h/.local/state/.longrun"]);
  });
});
