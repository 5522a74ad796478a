/** The gate's shell reader: what a command runs and names, in every spelling a shell allows. */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { cdTarget, Directories, lexicalPath } from "../../src/hooks/shell/cd.ts";
import { allCommands, literalOf, parseShell, ShellParseError } from "../../src/hooks/shell/parse.ts";
import { textOf, tokensMatch, wordPatterns, type WordEnv } from "../../src/hooks/shell/words.ts";

const env: WordEnv = { home: "/home/u", cwd: "/p", vars: { HOME: "/home/u", PWD: "/p" } };

/** Each simple command's words as the gate sees them ("*" for a glob, NUL for an unknown expansion). */
function seen(src: string): string[][] {
  return allCommands(parseShell(src)).map((c) => c.words.flatMap((w) => (wordPatterns(w, env) ?? [[]]).map(textOf)));
}

describe("the gate's shell reader", () => {
  const cases: [string, string, string[][]][] = [
    ["quotes are removed", `cat 'a b' "c d" e\\ f`, [["cat", "a b", "c d", "e f"]]],
    ["empty quotes split a name but not a word", `lon''grun se""rve`, [["longrun", "serve"]]],
    ["ANSI-C strings are decoded", `cat $'\\x2elongrun' $'\\056x' $'\\u002ey' $'a\\tb'`, [["cat", ".longrun", ".x", ".y", "a\tb"]]],
    ["locale strings are double quotes", `echo $"hi there"`, [["echo", "hi there"]]],
    ["a backslash before an ordinary letter is that letter", `lon\\grun`, [["longrun"]]],
    ["lists and pipes separate commands", "a; b && c || d | e |& f\ng", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]]],
    ["a line continuation joins lines", "ec\\\nho hi", [["echo", "hi"]]],
    ["comments are dropped", "ls # rm -rf /\npwd", [["ls"], ["pwd"]]],
    ["a # inside a word is not a comment", "echo a#b", [["echo", "a#b"]]],
    ["braces expand in order", "rm .{long,x}run a{1..3}", [["rm", ".longrun", ".xrun", "a1", "a2", "a3"]]],
    ["nested braces expand", "x{a,b{1,2}}", [["xa", "xb1", "xb2"]]],
    ["a brace with no comma stays", "echo {x} @{u}", [["echo", "{x}", "@{u}"]]],
    ["quoted braces do not expand", "echo '{a,b}'", [["echo", "{a,b}"]]],
    ["tilde and HOME are known", "cat ~/x $HOME/y ${HOME}/z", [["cat", "/home/u/x", "/home/u/y", "/home/u/z"]]],
    ["unknown variables are unknown", "cat $X ${Y}z", [["cat", "\u0000", "\u0000z"]]],
    ["numeric parameters are numbers", "echo $? $# $$ $((1+2))", [["echo", "0", "0", "0", "0"]]],
    ["command substitutions are commands too", "echo $(rm x) `touch y`", [["echo", "\u0000", "\u0000"], ["rm", "x"], ["touch", "y"]]],
    ["a substitution inside double quotes is still run", `echo "a $(rm x) b"`, [["echo", "a \u0000 b"], ["rm", "x"]]],
    ["nested substitutions are found", "echo $(echo $(rm x))", [["echo", "\u0000"], ["echo", "\u0000"], ["rm", "x"]]],
    ["process substitution is a command", "cat <(rm x)", [["cat", "\u0000"], ["rm", "x"]]],
    ["a default value's substitution is found", "echo ${X:-$(rm x)}", [["echo", "\u0000"], ["rm", "x"]]],
    ["an arithmetic substitution's command is found", "echo $((1 + $(rm x)))", [["echo", "\u0000"], ["rm", "x"]]],
    ["a literal heredoc in $(cat) is known text", "git commit -m \"$(cat <<'EOF'\nfix: it\nEOF\n)\"", [["git", "commit", "-m", "fix: it"], ["cat"]]],
    ["$(pwd) is the working directory", "cd $(pwd)/x", [["cd", "/p/x"], ["pwd"]]],
    ["globs are patterns", "ls *.ts a?c [ab]x", [["ls", "*.ts", "a*c", "*x"]]],
    ["quoted glob characters are literal", "ls '*.ts' \\?", [["ls", "*.ts", "?"]]],
  ];
  for (const [name, src, expected] of cases) {
    test(`${name}: ${JSON.stringify(src)}`, () => assert.deepEqual(seen(src), expected));
  }

  test("assignments, redirections and reserved words are kept apart from the command's words", () => {
    const [c] = parseShell("X=1 Y=$(id) cmd a > out 2>&1 < in").commands;
    assert.deepEqual(c!.assigns.map((w) => w.raw), ["X=1", "Y=$(id)"]);
    assert.deepEqual(c!.words.map((w) => literalOf(w)), ["cmd", "a"]);
    assert.deepEqual(c!.redirects.map((r) => `${r.fd ?? ""}${r.op}${r.target.raw}`), [">out", "2>&1", "<in"]);
    const s = parseShell("if true; then rm x; fi");
    assert.equal(s.compound, true);
    assert.deepEqual(s.commands.map((x) => x.keywords), [["if"], ["then"], ["fi"]]);
  });

  test("a heredoc body is read after its line, quoted or not", () => {
    const [c] = parseShell("cat <<'EOF' > x\nhello $X\nEOF\necho next").commands;
    assert.equal(c!.redirects[0]!.heredoc?.body, "hello $X\n");
    assert.equal(c!.redirects[0]!.heredoc?.literal, true);
    const [d] = parseShell("cat <<-EOF\n\t$(rm x)\n\tEOF").commands;
    assert.equal(d!.redirects[0]!.heredoc?.literal, false);
    assert.deepEqual(allCommands(parseShell("cat <<EOF\n$(rm x)\nEOF")).map((x) => literalOf(x.words[0]!)), ["cat", "rm"]);
  });

  test("stdin from a pipe, a heredoc or a file is recorded", () => {
    const s = parseShell("echo x | python3; python3 <<<x; python3 < f.py; python3");
    assert.deepEqual(s.commands.map((c) => c.stdin), ["none", "pipe", "data", "file", "none"]);
  });

  test("background jobs and subshells are marked", () => {
    assert.equal(parseShell("sleep 1 &").background, true);
    assert.equal(parseShell("(cd x; rm y)").compound, true);
    assert.equal(parseShell("a && b").compound, false);
  });

  for (const bad of ["echo 'unterminated", 'echo "unterminated', "echo $(", "echo `x", "echo ${x", "ls @(a|b)", "cat <<", "echo $'\\x'", "(ls", "ls )"]) {
    test(`what cannot be read with certainty is an error: ${JSON.stringify(bad)}`, () => {
      assert.throws(() => parseShell(bad), ShellParseError);
    });
  }

  test("very long commands are refused unread", () => {
    assert.throws(() => parseShell("x".repeat(300_000)), ShellParseError);
  });

  test("glob matching follows bash: no slash, no leading dot unless dotglob", () => {
    const pat = (s: string) => wordPatterns(parseShell(s).commands[0]!.words[0]!, env)![0]!;
    assert.equal(tokensMatch(pat("*"), "memory.db"), true);
    assert.equal(tokensMatch(pat("*"), ".longrun"), false);
    assert.equal(tokensMatch(pat("*"), ".longrun", true), true);
    assert.equal(tokensMatch(pat(".*"), ".longrun"), true);
    assert.equal(tokensMatch(pat("*"), "a/b"), false);
    assert.equal(tokensMatch(pat(".longru[n]"), ".longrun"), true);
    assert.equal(tokensMatch(pat(".longru[!n]"), ".longrun"), false);
  });
});

describe("the directories a script may be in (one walk for both Bash checks)", () => {
  test("each command is visited once for every directory an earlier cd may have led to", () => {
    const dirs = new Directories("/", "/home/u", 16);
    const seen: [number, string][] = [];
    for (const { command, at, cwd } of dirs.steps(["cd tmp", "ls"])) {
      seen.push([at, cwd]);
      assert.equal(dirs.follow(command.split(" "), cwd), null);
    }
    assert.deepEqual(seen, [[0, "/"], [1, "/"], [1, "/tmp"]]);
  });

  test("a cd that cannot be told, or one directory too many, is reported", () => {
    assert.equal(new Directories("/", "/home/u", 16).follow(["cd", "-"], "/"), "unknown");
    assert.equal(new Directories("/", "/home/u", 16).follow(["cd", null], "/"), "unknown");
    assert.equal(new Directories("/", "/home/u", 1).follow(["cd", "/tmp"], "/"), "too_many");
    assert.equal(new Directories("/", "/home/u", 1).follow(["ls", "/tmp"], "/"), null);
  });

  test("$PWD follows the directories reached: each step carries the PWD bash would have there", () => {
    const dirs = new Directories("/p", "/home/u", 16);
    const seen: [number, string][] = [];
    // the second cd's word is what `cd $PWD/x` becomes where PWD is each directory reached so far
    for (const { command, at, pwd } of dirs.steps(["cd src", "cd $PWD/x", "ls"])) {
      seen.push([at, pwd]);
      assert.equal(dirs.follow(command.replace("$PWD", pwd).split(" "), pwd), null);
    }
    assert.deepEqual(seen, [[0, "/p"], [1, "/p"], [1, "/p/src"], [2, "/p"], [2, "/p/src"], [2, "/p/x"], [2, "/p/src/x"]]);
  });

  test("cd -L takes .. off as text, cd -P on disk; a .. that crosses a symlink to elsewhere cannot be told", () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "longrun-cd-")));
    try {
      mkdirSync(join(base, "start", "src"), { recursive: true });
      mkdirSync(join(base, "real", "dir"), { recursive: true });
      symlinkSync(join(base, "real", "dir"), join(base, "start", "link"));
      const start = join(base, "start");
      assert.equal(lexicalPath("/a/./b//../c/"), "/a/c");
      assert.equal(cdTarget(["cd", "src/.."], start, "/home/u"), start);
      assert.equal(cdTarget(["cd", "link"], start, "/home/u"), join(start, "link"), "PWD keeps the link's name");
      assert.equal(cdTarget(["cd", "-P", "link"], start, "/home/u"), join(base, "real", "dir"));
      assert.equal(cdTarget(["cd", "-P", "link/.."], start, "/home/u"), join(base, "real"));
      // bash goes back to start; the directory on disk is real/: refused rather than guessed
      assert.equal(cdTarget(["cd", "link/.."], start, "/home/u"), "unknown");
      assert.equal(cdTarget(["cd", ".."], join(start, "link"), "/home/u"), "unknown");
      const dirs = new Directories(start, "/home/u", 16);
      assert.equal(dirs.follow(["cd", "link"], start), null);
      const places = [...dirs.steps(["ls"])].map(({ cwd, pwd }) => [cwd, pwd]);
      assert.deepEqual(places, [[start, start], [join(base, "real", "dir"), join(start, "link")]], "paths are checked on disk, $PWD keeps the link");
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  test("cd -, popd and $OLDPWD are never guessed", () => {
    assert.equal(cdTarget(["cd", "-"], "/p", "/home/u"), "unknown");
    assert.equal(cdTarget(["popd"], "/p", "/home/u"), "unknown");
    assert.equal(cdTarget(["cd", null], "/p", "/home/u"), "unknown");
    assert.ok(seen("cd $OLDPWD")[0]![1]!.includes("\u0000"), "$OLDPWD is an unknown expansion");
  });
});
