/**
 * git's configuration read from its files (src/hooks/git_config_file.ts), checked against git
 * itself: every text the reader answers for gives exactly the entries `git config --list` lists,
 * every text git rejects the reader leaves to git (null); the whole check (readonly_env.ts
 * gitConfigRefusal, which reads the files when it can) answers as asking git does, over
 * repositories that set each kind of hazard; and what the reader cannot answer for sure (an
 * include, a worktree's .git file, a GIT_DIR, …) it leaves to git.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { gitConfigFromFiles, parseGitConfig } from "../../src/hooks/git_config_file.ts";
import { gitConfigRefusal } from "../../src/hooks/readonly_env.ts";
import { removeDir, tempDir } from "../support/helpers.ts";
import { skipped } from "../support/skips.ts";

const LINUX_GIT = process.platform === "linux" && spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim().length > 0;
const scratch = tempDir("longrun-gitconfig-");
after(() => removeDir(scratch));

/** A clean environment for git: a HOME of our own, no GIT_ variables. */
function envWith(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("GIT_") && k !== "XDG_CONFIG_HOME") env[k] = v;
  return { ...env, HOME: home, ...extra };
}

/** What `git config -f FILE --list -z` lists for `text`, or null when git rejects it. */
function gitParse(text: string): { key: string; value: string | null }[] | null {
  const file = join(scratch, `c${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, text);
  const r = spawnSync("git", ["config", "-f", file, "--list", "-z"], { encoding: "utf8" });
  if (r.status !== 0) return null;
  return r.stdout.split("\0").filter((e) => e !== "").map((e) => {
    // git prints the section and name in lower case and a subsection as written; so does the reader
    const nl = e.indexOf("\n");
    return { key: nl < 0 ? e : e.slice(0, nl), value: nl < 0 ? null : e.slice(nl + 1) };
  });
}

const TEXTS = [
  "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
  "[core] pager = less\n",
  "[Core]\n  Pager=less -R  \n",
  '[diff "Foo"]\n\ttextconv = "hexdump -C"\n',
  '[diff "a\\"b"]\n\tcommand = x\n',
  "[diff.Foo]\n\tcommand = x\n",
  "[alias]\n\tlg = log --graph ; a comment\n\tst = status # another\n",
  '[alias]\n\tq = "quoted ; not a comment # either"\n',
  "[a]\n\tk = one\\\n two\n\tpager = x\n",
  "[a]\n\tk = \"one\\\n two\"\n",
  '[a]\n\tk = "x\\\\"\n\tpager = sh\n',
  "[a]\n\tk = x\\\\\n\tpager = sh\n",
  "[a]\n\tk = x \\t y \\n z \\b\n",
  "[a]\n\tk = x \\q\n",
  '[a]\n\tk = "unterminated\n\tpager = sh\n',
  "[a]\n\tflag\n\tother = \n",
  "[a]\r\n\tk = v\r\n",
  "\ufeff[a]\n\tk = v\n",
  "k = v\n",
  "[a\n\tk = v\n",
  "[a b]\n\tk = v\n",
  '[a "b" ]\n\tk = v\n',
  '[a  "b c"]k=v\n',
  "[a]\n\t1k = v\n",
  "[a]\n\tk_x = v\n",
  "[a]\n\tk = v\n[b]\n\tk = w\n# [core]\n; pager = x\n",
  "[a]\n\tk = v",
  "[a]\n\tk",
  "[a]\n\tk = trailing spaces   \n\tj =    lead\n\ti = in  side\n",
  "[a]\n\tk = é ü 漢字\n",
  "[a]\n\tk = v\u000bw\n",
  "[include]\n\tpath = other\n",
  '[includeIf "gitdir:/x/"]\n\tpath = other\n',
  // hostile spellings of hazards (a hostile-agent pass): each must list as git lists it, or be left to git
  "[core]\n\tFSMonitor = x\n",
  "[CORE]\n\tfsmonitor = x\n",
  '[core ""]\n\tfsmonitor = x\n',
  "[core.X]\n\tfsmonitor = x\n",
  "[core]\n\tpa\\\nger = x\n",
  "[core]\\\n\tpager = x\n",
  "[core]# c\npager=x\n",
  "[core]\r\n\tpager = x\\\r\n y\r\n",
  "[core]\n\tpager = x\u0000y\n",
  "\ufeff\ufeff[core]\n\tpager = x\n",
  '[core]\n\tfsmonitor = "0 "\n',
  "[core]\n\tfsmonitor\n",
  "[core]\n\tfsmonitor = false\n\tfsmonitor = sh\n",
  '[diff "a"b"]\n\ttextconv = x\n',
  "[core ]\n\tpager=x\n",
  '[core\t"x"]\n\tpager=x\n',
  "[core]\n\tfsmonitor = \u00a0\n",
  "[.core]\n\tpager = x\n",
  "[core]\n\t\u0085pager = x\n",
];

describe("git's configuration read from its files", { skip: skipped("tests/hooks/git_config_file", !LINUX_GIT && "needs git on Linux") }, () => {
  test("every text the reader answers for lists exactly what git lists; every text git rejects the reader leaves to git", () => {
    for (const text of TEXTS) {
      const ours = parseGitConfig(text);
      const git = gitParse(text);
      if (git === null) assert.equal(ours, null, `git rejects ${JSON.stringify(text)}, the reader must leave it to git`);
      else if (ours !== null) assert.deepEqual(ours, git, `the entries of ${JSON.stringify(text)}`);
    }
    // the common shapes are answered, not left to git
    for (const text of TEXTS.slice(0, 10)) assert.notEqual(parseGitConfig(text), null, JSON.stringify(text));
  });

  function repo(name: string, local: string, home = ""): { dir: string; env: Record<string, string> } {
    const dir = join(scratch, name);
    const homeDir = join(scratch, `${name}-home`);
    mkdirSync(homeDir, { recursive: true });
    if (home) writeFileSync(join(homeDir, ".gitconfig"), home);
    const env = envWith(homeDir);
    assert.equal(spawnSync("git", ["init", "-q", dir], { env }).status, 0);
    if (local) writeFileSync(join(dir, ".git", "config"), `[core]\n\trepositoryformatversion = 0\n\tbare = false\n${local}`);
    mkdirSync(join(dir, "sub", "deeper"), { recursive: true });
    return { dir, env };
  }

  /** gitConfigRefusal with this environment, and with the files' reading disabled (git asked). */
  async function both(cwd: string, env: Record<string, string>): Promise<{ files: string | null; git: string | null; read: boolean }> {
    const saved = { ...process.env };
    try {
      for (const k of Object.keys(process.env)) delete process.env[k];
      Object.assign(process.env, env);
      const read = gitConfigFromFiles(cwd, env.PATH ?? "") !== null;
      const files = await gitConfigRefusal(cwd, { path: env.PATH ?? "", trustedPrograms: [] });
      Object.assign(process.env, { GIT_CONFIG_COUNT: "0" }); // a variable the reader does not answer for: git is asked
      const git = await gitConfigRefusal(cwd, { path: env.PATH ?? "", trustedPrograms: [] });
      return { files, git, read };
    } finally {
      for (const k of Object.keys(process.env)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  }

  test("the check answers from the files as git does, for clean repositories and for each hazard", async () => {
    const cases: [string, string, string, boolean][] = [
      ["clean", "", "", false],
      ["pager", "\tpager = sh x.sh\n", "", true],
      ["fsmonitor-off", "\tfsmonitor = false\n", "", false],
      ["fsmonitor", "\tfsmonitor = touch pwned\n", "", true],
      ["textconv", '[diff "x"]\n\ttextconv = sh\n', "", true],
      ["home-pager", "", "[pager]\n\tlog = sh\n", true],
      ["home-alias", "", '[alias]\n\tst = "status --short"\n[user]\n\tname = A\n', false],
      ["hooks-path", "\thooksPath = hk\n", "", true],
      // git takes a value that is not exactly a boolean for the hook's command ("0 " runs a program
      // named 0 from PATH), and a bare key for true: neither may be trimmed into "off"
      ["fsmonitor-quoted-space", '\tfsmonitor = "off "\n', "", true],
      ["fsmonitor-nbsp", "\tfsmonitor = \u00a0\n", "", true],
      ["fsmonitor-bare", "\tfsmonitor\n", "", true],
      ["fsmonitor-last-wins", "\tfsmonitor = false\n\tfsmonitor = sh\n", "", true],
      ["fsmonitor-case", "[CORE]\n\tFSMonitor = sh\n", "", true],
      ["showsignature-bare", "[log]\n\tshowSignature\n", "", true],
      ["home-trace2", "", `[trace2]\n\tnormalTarget = ${join(scratch, "trace2-written")}\n`, true],
    ];
    for (const [name, local, home, refused] of cases) {
      const { dir, env } = repo(name, local, home);
      for (const cwd of [dir, join(dir, "sub", "deeper")]) {
        const r = await both(cwd, env);
        assert.equal(r.files, r.git, `${name} in ${cwd}: the files' answer and git's`);
        assert.equal(r.files !== null, refused, `${name}: ${r.files}`);
        if (!refused) assert.ok(r.read, `${name}: answered from the files`);
      }
    }
    const { dir, env } = repo("read-hook", "");
    writeFileSync(join(dir, ".git", "hooks", "post-index-change"), "#!/bin/sh\n");
    const r = await both(dir, env);
    assert.ok(r.files?.includes("post-index-change"), String(r.files));
    assert.equal(r.files, r.git);
    // a gitlink in the index with no .gitmodules: git status runs `git status` in the embedded
    // repository, under its own configuration (here a core.fsmonitor that runs a program)
    const outer = repo("gitlink", "");
    assert.equal(spawnSync("git", ["init", "-q", "inner"], { cwd: outer.dir, env: outer.env }).status, 0);
    assert.equal(spawnSync("git", ["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "x"], { cwd: join(outer.dir, "inner"), env: outer.env }).status, 0);
    assert.equal(spawnSync("git", ["add", "inner"], { cwd: outer.dir, env: outer.env }).status, 0);
    writeFileSync(join(outer.dir, "inner", ".git", "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = touch pwned\n");
    for (const cwd of [outer.dir, join(outer.dir, "sub")]) {
      const g = await both(cwd, outer.env);
      assert.ok(g.files?.includes("gitlink"), String(g.files));
      assert.equal(g.files, g.git);
    }
    // and an index of ordinary files is not taken for one
    const plainIndex = repo("plain-index", "");
    for (let k = 0; k < 50; k++) writeFileSync(join(plainIndex.dir, `f${k}`), `${k}\n`);
    assert.equal(spawnSync("git", ["add", "."], { cwd: plainIndex.dir, env: plainIndex.env }).status, 0);
    const p = await both(plainIndex.dir, plainIndex.env);
    assert.equal(p.files, null, String(p.files));
    assert.equal(p.git, null, String(p.git));
    const sub = repo("submodules", "");
    writeFileSync(join(sub.dir, ".gitmodules"), "");
    const s = await both(join(sub.dir, "sub"), sub.env);
    assert.ok(s.files?.includes("submodules"), String(s.files));
    assert.equal(s.files, s.git);
  });

  test("what the reader cannot answer for sure it leaves to git", () => {
    const { dir, env } = repo("unsure", "");
    const path = env.PATH ?? "";
    assert.notEqual(gitConfigFromFiles(dir, path, env), null, "a plain repository is answered");
    assert.notEqual(gitConfigFromFiles(dir, path, { ...env, GIT_SSL_CAINFO: "/etc/ssl/x.pem" }), null, "a variable that moves no configuration");
    for (const name of ["GIT_DIR", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_COUNT", "GIT_CEILING_DIRECTORIES", "GIT_CONFIG_NOSYSTEM", "GIT_WORK_TREE"]) {
      assert.equal(gitConfigFromFiles(dir, path, { ...env, [name]: "x" }), null, name);
    }
    assert.equal(gitConfigFromFiles(dir, path, { ...env, HOME: "" }), null, "no HOME");
    assert.equal(gitConfigFromFiles(dir, "/nonexistent", env), null, "no git on PATH");
    for (const [name, local] of [
      ["include", "[include]\n\tpath = /dev/null\n"],
      ["include-if", '[includeIf "gitdir:/"]\n\tpath = x\n'],
      ["worktree", "\tworktree = /tmp\n"],
      ["extension", "[extensions]\n\tobjectFormat = sha256\n"],
      ["broken", "[core\n"],
    ] as const) {
      const r = repo(`unsure-${name}`, local);
      assert.equal(gitConfigFromFiles(r.dir, path, r.env), null, name);
    }
    const linked = join(scratch, "linked");
    mkdirSync(linked);
    writeFileSync(join(linked, ".git"), `gitdir: ${dir}/.git\n`);
    assert.equal(gitConfigFromFiles(linked, path, env), null, "a .git file (a worktree, a submodule)");
    assert.equal(gitConfigFromFiles(join(dir, ".git", "refs"), path, env), null, "inside the git directory");
  });
});
