/**
 * The programs a read-only turn may run through Bash, each with every option it may take: an
 * allowlist of programs *and* options, never a list of forbidden flags. What is not here is
 * refused (GNU tools also accept abbreviated long options such as `--outp`; those are refused
 * because only exact names are listed). Policy as data: tests iterate over this table, and the
 * generated table of docs/gate.md prints it (scripts/gen_docs.ts).
 *
 * Value kinds: `text` (any literal), `number`, `path` (checked against protected paths),
 * `git_format` (a format without the `%G` signature placeholders, which run gpg), or a list of
 * allowed values. An `optional` long option takes its value only as `--name=value`.
 *
 * Each row carries its examples: command lines it must pass and must refuse, run in process by
 * tests/hooks/rule_examples.test.ts (a row without both kinds fails that test).
 */
import type { RuleExamples } from "./rule_examples.ts";

export type ValueKind = "text" | "number" | "path" | "git_format" | readonly string[];

export interface ProgramRule {
  /** One-letter options without a value (they may be clustered: `-la`). */
  flags?: string;
  /** One-letter options with a value (`-n 5`, `-n5`). */
  valued?: Readonly<Record<string, ValueKind>>;
  /** Long options without a value. */
  long?: readonly string[];
  /** Long options with a value (`--name=value` or `--name value`). */
  longValued?: Readonly<Record<string, ValueKind>>;
  /** One-letter options whose value is optional and only attached (`git status -uno`). */
  attached?: Readonly<Record<string, ValueKind>>;
  /** Long options whose value is optional and only given as `--name=value`. */
  longOptional?: Readonly<Record<string, ValueKind>>;
  /** `-NUM` is a count (`head -20`). */
  numeric?: boolean;
  /**
   * Operands: `paths` (files, checked), `text`, `none`, `pattern_then_paths` (grep: the first is
   * a pattern unless -e/-f gave one), or `date_format` (a single `+FORMAT`).
   */
  operands: "paths" | "text" | "none" | "pattern_then_paths" | "date_format";
  maxOperands?: number;
  /** A shell builtin: no program file is looked up on PATH. */
  builtin?: boolean;
  /** Subcommands (git), each with its own rule; the command word alone is not enough. */
  sub?: Readonly<Record<string, ProgramRule>>;
  /** Options allowed between the program and its subcommand. */
  globalFlags?: readonly string[];
  /**
   * Options that make the program read whole directory trees (`grep -r`): every path operand (the
   * working directory when there is none) must then be a tree that holds none of longrun's files;
   * the `follow` ones also follow the symlinks met inside.
   */
  recursive?: { flags: string; long: readonly string[]; follow: string; followLong: readonly string[]; defaultCwd: boolean };
  /** Directory operands are refused: the program reads the files inside them (`diff DIR DIR`). */
  filesOnly?: string;
  /** One line for the docs (docs/gate.md's generated table). */
  note?: string;
  /** Command lines this row lets through in a read-only turn, and ones it refuses (tests run them all). */
  examples: RuleExamples;
}

const COLOR = ["never", "auto", "always"] as const;

const GIT_DIFF_FLAGS = "pusRwb";
const GIT_DIFF_LONG = [
  "--stat", "--shortstat", "--numstat", "--name-only", "--name-status", "--patch", "--no-patch", "--no-color", "--ignore-all-space",
  "--ignore-space-change", "--ignore-blank-lines", "--ignore-cr-at-eol", "--minimal", "--patience", "--histogram", "--no-renames",
  "--no-ext-diff", "--no-textconv", "--raw", "--summary", "--full-index", "--color-words", "--text", "--find-renames", "--find-copies",
] as const;
const GIT_DIFF_VALUED: Record<string, ValueKind> = {
  "--unified": "number",
  "--color": COLOR,
  "--diff-filter": "text",
  "--abbrev": "number",
  "--diff-algorithm": ["default", "myers", "minimal", "patience", "histogram"],
  "--ignore-submodules": ["none", "untracked", "dirty", "all"],
};
const GIT_LOG_LONG = [
  "--oneline", "--graph", "--all", "--decorate", "--no-decorate", "--abbrev-commit", "--no-abbrev-commit", "--no-merges", "--merges",
  "--first-parent", "--reverse", "--follow", "--full-diff", "--topo-order", "--date-order", "--author-date-order", "--left-right",
  "--boundary", "--source", "--regexp-ignore-case", "--all-match", "--invert-grep", "--branches", "--tags", "--remotes",
  "--full-history", "--simplify-by-decoration", "--parents", "--children", "--relative-date", "--cherry-pick", "--no-walk",
] as const;
const GIT_LOG_VALUED: Record<string, ValueKind> = {
  "--max-count": "number",
  "--skip": "number",
  "--since": "text",
  "--until": "text",
  "--after": "text",
  "--before": "text",
  "--author": "text",
  "--committer": "text",
  "--grep": "text",
  "--format": "git_format",
  "--pretty": "git_format",
  "--date": "text",
  "--min-parents": "number",
  "--max-parents": "number",
};

const gitLog: Omit<ProgramRule, "examples"> = {
  flags: GIT_DIFF_FLAGS + "i",
  valued: { n: "number", S: "text", G: "text", U: "number" },
  numeric: true,
  long: [...GIT_DIFF_LONG, ...GIT_LOG_LONG],
  longValued: { ...GIT_DIFF_VALUED, ...GIT_LOG_VALUED },
  longOptional: { "--decorate": ["short", "full", "auto", "no"], "--stat": "text" },
  operands: "paths",
};

/** The read-only programs, by command name. */
export const READ_ONLY_PROGRAMS: Readonly<Record<string, ProgramRule>> = {
  pwd: {
    flags: "LP", operands: "none", builtin: true,
    examples: { pass: ["pwd", "pwd -P"], refused: ["pwd src"] },
  },
  cd: {
    flags: "LP", operands: "paths", maxOperands: 1, builtin: true, note: "changes the shell's directory only",
    examples: {
      pass: ["cd src && ls", "cd -P src", "cd src && cd $PWD/.. && ls", "cd src && ls $PWD/a.ts"],
      // $PWD is the directory reached so far; bash takes `..` off as text, before the link is followed
      refused: ["cd src src", "cd .longrun", "cd src && cd $PWD/../docs && cat state/http.json", "cd docs/state/.. && cat state/http.json", "cd src && cd -", "cd src && cd $OLDPWD"],
    },
  },
  echo: {
    flags: "neE", operands: "text", builtin: true,
    examples: { pass: ["echo hello", "echo -n hi"], refused: ["echo hi > file.txt", "echo $(rm x)"] },
  },
  printf: {
    operands: "text", builtin: true, note: "no -v",
    examples: { pass: ["printf '%s\\n' hello"], refused: ["printf -v x hi"] },
  },
  true: {
    operands: "none", builtin: true,
    examples: { pass: ["true"], refused: ["true > x"] },
  },
  false: {
    operands: "none", builtin: true,
    examples: { pass: ["false"], refused: ["false > x"] },
  },
  ls: {
    flags: "aAlhtrSR1dFpisnguocUXvGLk",
    valued: { I: "text", w: "number" },
    long: ["--all", "--almost-all", "--human-readable", "--recursive", "--reverse", "--directory", "--classify", "--inode", "--size", "--dereference", "--group-directories-first", "--full-time", "--numeric-uid-gid", "--no-group"],
    longValued: { "--color": COLOR, "--sort": ["none", "size", "time", "version", "extension", "name", "width"], "--ignore": "text", "--time-style": "text", "--width": "number" },
    operands: "paths",
    examples: { pass: ["ls", "ls -la src", "ls 2>/dev/null"], refused: ["ls > /tmp/x", "ls $X", "ls --hyperlink"] },
  },
  cat: {
    flags: "AbeEnstTuv", long: ["--number", "--number-nonblank", "--show-all", "--show-ends", "--show-tabs", "--squeeze-blank", "--show-nonprinting"], operands: "paths",
    examples: { pass: ["cat a.txt", "cat -n a.txt b.txt"], refused: ["cat .longrun/http.json", "cat *", "cat a >| b"] },
  },
  head: {
    flags: "qvz", valued: { n: "number", c: "number" }, numeric: true, long: ["--quiet", "--silent", "--verbose", "--zero-terminated"], longValued: { "--lines": "number", "--bytes": "number" }, operands: "paths",
    examples: { pass: ["head -n 5 a.txt", "head -5 a.txt"], refused: ["head -n $(id) a.txt", "head .longrun/http.json"] },
  },
  tail: {
    flags: "qvz", valued: { n: "number", c: "number" }, numeric: true, long: ["--quiet", "--silent", "--verbose", "--zero-terminated"], longValued: { "--lines": "number", "--bytes": "number" }, operands: "paths", note: "no -f",
    examples: { pass: ["tail -n 2 a.txt"], refused: ["tail -f a.txt"] },
  },
  wc: {
    flags: "clmwL", long: ["--bytes", "--chars", "--lines", "--words", "--max-line-length"], operands: "paths",
    examples: { pass: ["wc -l a.txt"], refused: ["wc --files0-from=list"] },
  },
  grep: {
    flags: "iyvwxcLlnhHoqsbZzEFGPaUTrR",
    valued: { e: "text", f: "path", m: "number", A: "number", B: "number", C: "number" },
    numeric: true,
    long: [
      "--ignore-case", "--no-ignore-case", "--invert-match", "--word-regexp", "--line-regexp", "--count", "--files-with-matches",
      "--files-without-match", "--line-number", "--no-filename", "--with-filename", "--only-matching", "--quiet", "--silent",
      "--no-messages", "--byte-offset", "--null", "--null-data", "--extended-regexp", "--fixed-strings", "--basic-regexp",
      "--perl-regexp", "--text", "--initial-tab", "--recursive", "--dereference-recursive",
    ],
    longValued: {
      "--regexp": "text", "--file": "path", "--max-count": "number", "--after-context": "number", "--before-context": "number",
      "--context": "number", "--color": COLOR, "--colour": COLOR, "--include": "text", "--exclude": "text", "--label": "text",
      "--binary-files": ["binary", "text", "without-match"],
    },
    operands: "pattern_then_paths",
    recursive: { flags: "rR", long: ["--recursive", "--dereference-recursive"], follow: "R", followLong: ["--dereference-recursive"], defaultCwd: true },
    note: "-r/-R only over directories that hold none of longrun's files (name them: grep -rn x src); no -d",
    examples: { pass: ["grep -n hello a.txt", "grep -in -e hello -e world a.txt b.txt", "grep -c x ./*.txt", "grep -rn hello src"], refused: ["grep -r token .", "grep -d recurse token .", "grep x *", "grep -e * a.txt"] },
  },
  find: {
    operands: "paths", note: "tests and -print only; no -exec, -delete, -fprint, -fls",
    examples: { pass: ["find . -name '*.txt' -type f", "find src -maxdepth 1"], refused: ["find . -delete", "find . -exec sh -c 'id > pwned' \\;", "find . -fprint out.txt", "find . -name x constructor", "find . -name x __proto__"] },
  },
  sort: {
    flags: "bdfginMrRsuVhcCz",
    valued: { k: "text", t: "text" },
    long: ["--reverse", "--unique", "--numeric-sort", "--human-numeric-sort", "--ignore-case", "--stable", "--version-sort", "--ignore-leading-blanks", "--general-numeric-sort", "--month-sort", "--dictionary-order", "--zero-terminated", "--check"],
    longValued: { "--key": "text", "--field-separator": "text" },
    operands: "paths",
    note: "no -o, -T, -S, --compress-program, --files0-from",
    examples: { pass: ["sort -r a.txt"], refused: ["sort -o ./x a.txt", "sort --compress-program=sh a.txt", "sort *"] },
  },
  uniq: {
    flags: "cdDiuz", valued: { f: "number", s: "number", w: "number" }, long: ["--count", "--repeated", "--unique", "--ignore-case", "--zero-terminated"], longValued: { "--skip-fields": "number", "--skip-chars": "number", "--check-chars": "number" }, operands: "paths", maxOperands: 1, note: "one input, no output file",
    examples: { pass: ["uniq -c a.txt"], refused: ["uniq a.txt out.txt"] },
  },
  cut: {
    flags: "snz", valued: { d: "text", f: "text", c: "text", b: "text" }, long: ["--complement", "--only-delimited", "--zero-terminated"], longValued: { "--delimiter": "text", "--fields": "text", "--characters": "text", "--bytes": "text", "--output-delimiter": "text" }, operands: "paths",
    examples: { pass: ["cut -d: -f1 a.txt"], refused: ["cut -f1 a.txt > b.txt"] },
  },
  tr: {
    flags: "cCdst", long: ["--complement", "--delete", "--squeeze-repeats", "--truncate-set1"], operands: "text", maxOperands: 2,
    examples: { pass: ["tr a-z A-Z < a.txt"], refused: ["tr a b c"] },
  },
  diff: {
    flags: "uqsiwbBtaTy",
    valued: { U: "number", W: "number" },
    long: ["--brief", "--report-identical-files", "--ignore-case", "--ignore-all-space", "--ignore-space-change", "--ignore-blank-lines", "--text", "--side-by-side", "--suppress-common-lines", "--minimal", "--expand-tabs", "--strip-trailing-cr"],
    longValued: { "--unified": "number", "--color": COLOR, "--label": "text", "--width": "number" },
    operands: "paths",
    maxOperands: 2,
    filesOnly: "diff compares the files inside a directory (its protected ones too); name the files",
    note: "files only: no -r, no directory operands",
    examples: { pass: ["diff -u a.txt b.txt"], refused: ["diff -r . /tmp", "diff --to-file=x a", "diff src a.txt"] },
  },
  du: {
    flags: "ahcsxLkmb", valued: { d: "number" }, long: ["--all", "--human-readable", "--summarize", "--total", "--one-file-system", "--apparent-size"], longValued: { "--max-depth": "number" }, operands: "paths",
    examples: { pass: ["du -sh src"], refused: ["du --files0-from=x"] },
  },
  df: {
    flags: "hHiTalkP", long: ["--human-readable", "--inodes", "--print-type", "--all", "--local", "--portability"], operands: "paths",
    examples: { pass: ["df -h"], refused: ["df --output=source"] },
  },
  stat: {
    flags: "LftF", valued: { c: "text" }, long: ["--dereference", "--file-system", "--terse"], longValued: { "--format": "text", "--printf": "text" }, operands: "paths",
    examples: { pass: ["stat a.txt", "stat -c %s a.txt"], refused: ["stat .longrun/http.json"] },
  },
  which: {
    flags: "a", operands: "text",
    examples: { pass: ["which ls"], refused: ["which -s ls"] },
  },
  whoami: {
    operands: "none",
    examples: { pass: ["whoami"], refused: ["whoami me"] },
  },
  uname: {
    flags: "asnrvmpio", long: ["--all", "--kernel-name", "--nodename", "--kernel-release", "--kernel-version", "--machine", "--processor", "--hardware-platform", "--operating-system"], operands: "none",
    examples: { pass: ["uname -a"], refused: ["uname x"] },
  },
  date: {
    flags: "uR", valued: { d: "text" }, long: ["--utc", "--universal", "--rfc-email"], longValued: { "--date": "text" }, longOptional: { "--iso-8601": ["date", "hours", "minutes", "seconds", "ns"] }, operands: "date_format", note: "a +FORMAT only; never sets the clock",
    examples: { pass: ["date +%Y", "date -u +%H"], refused: ["date -s 2020-01-01", "date --set=2020-01-01", "date 010100002020"] },
  },
  basename: {
    flags: "az", valued: { s: "text" }, long: ["--multiple", "--zero"], longValued: { "--suffix": "text" }, operands: "text",
    examples: { pass: ["basename src/a.txt"], refused: ["basename *"] },
  },
  dirname: {
    flags: "z", long: ["--zero"], operands: "text",
    examples: { pass: ["dirname src/a.txt"], refused: ["dirname *"] },
  },
  realpath: {
    flags: "eEmLPqsz", long: ["--canonicalize-existing", "--canonicalize-missing", "--logical", "--physical", "--quiet", "--strip", "--no-symlinks", "--zero"], longValued: { "--relative-to": "path", "--relative-base": "path" }, operands: "paths",
    examples: { pass: ["realpath src"], refused: ["realpath --relative-to=.longrun src"] },
  },
  readlink: {
    flags: "fenmqsvz", long: ["--canonicalize", "--canonicalize-existing", "--canonicalize-missing", "--no-newline", "--quiet", "--silent", "--verbose", "--zero"], operands: "paths",
    examples: { pass: ["readlink -f src"], refused: ["readlink -f .longrun/http.json"] },
  },
  git: {
    operands: "none",
    globalFlags: ["--no-pager"],
    note: "only when the repository's git configuration runs no programs (fsmonitor, pagers, diff drivers, filters, gpg)",
    sub: {
      status: {
        flags: "sbvz",
        attached: { u: ["no", "normal", "all"] },
        long: ["--short", "--branch", "--long", "--verbose", "--show-stash", "--ignored", "--no-renames", "--renames", "--ahead-behind", "--no-ahead-behind"],
        longValued: { "--untracked-files": ["no", "normal", "all"], "--ignore-submodules": ["none", "untracked", "dirty", "all"] },
        longOptional: { "--porcelain": ["v1", "v2"] },
        operands: "paths",
        examples: { pass: ["git status --short", "git status -uno"], refused: ["git status --porcelain=v3"] },
      },
      log: { ...gitLog, examples: { pass: ["git log --oneline -n 5", "git log --format=%H -n 1"], refused: ["git log --output=x.patch", "git log --format=%H -o x", "git log --format='%G?'"] } },
      show: { ...gitLog, examples: { pass: ["git show --stat HEAD"], refused: ["git show --output=x"] } },
      diff: {
        flags: GIT_DIFF_FLAGS,
        valued: { U: "number" },
        long: [...GIT_DIFF_LONG, "--cached", "--staged", "--quiet", "--exit-code", "--check", "--merge-base"],
        longValued: GIT_DIFF_VALUED,
        longOptional: { "--stat": "text", "--word-diff": ["plain", "color", "porcelain", "none"] },
        operands: "paths",
        examples: { pass: ["git diff", "git diff --stat", "git diff -- a.txt", "git diff HEAD -- src"], refused: ["git diff --ext-diff", "git diff --textconv", "git diff --no-index a b", "git diff HEAD:memory.db"] },
      },
      branch: {
        flags: "arv",
        long: ["--all", "--remotes", "--verbose", "--list", "--show-current", "--no-color", "--merged", "--no-merged"],
        longValued: { "--contains": "text", "--no-contains": "text", "--sort": "text", "--format": "text", "--color": COLOR },
        operands: "none",
        note: "listing only",
        examples: { pass: ["git branch -a"], refused: ["git branch -D main", "git branch new-branch", "git branch -m a b"] },
      },
      "rev-parse": {
        flags: "q",
        long: ["--show-toplevel", "--git-dir", "--git-common-dir", "--is-inside-work-tree", "--is-bare-repository", "--show-prefix", "--show-cdup", "--verify", "--quiet", "--symbolic-full-name", "--abbrev-ref", "--short"],
        longOptional: { "--short": "number", "--abbrev-ref": ["strict", "loose"] },
        operands: "text",
        examples: { pass: ["git rev-parse --show-toplevel"], refused: ["git rev-parse --git-path hooks"] },
      },
      "ls-files": {
        flags: "cdmoiskuvtz",
        long: ["--cached", "--deleted", "--modified", "--others", "--ignored", "--stage", "--killed", "--unmerged", "--exclude-standard", "--full-name", "--error-unmatch", "--directory", "--no-empty-directory", "--eol"],
        longValued: { "--exclude": "text" },
        operands: "paths",
        examples: { pass: ["git ls-files"], refused: ["git ls-files --with-tree=HEAD"] },
      },
      blame: {
        flags: "lstnewfcp",
        valued: { L: "text" },
        long: ["--porcelain", "--line-porcelain", "--show-name", "--show-number", "--show-email", "--root", "--incremental"],
        longValued: { "--date": "text" },
        operands: "paths",
        examples: { pass: ["git blame a.txt"], refused: ["git blame .longrun/http.json"] },
      },
    },
    examples: { pass: ["git status", "git --no-pager log"], refused: ["git commit -m x", "git push", "git -p log", "git -C /tmp status", "git valueOf", "git __proto__", "git --no-pager constructor"] },
  },
};

/**
 * The row of `table` named `key`, or undefined: the tables are looked up by names the agent
 * chooses, and a plain index would find Object.prototype's `constructor`, `valueOf`, `__proto__`.
 */
export function own<T>(table: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return table !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}

/** `find`'s expression: each allowed primary with the number of arguments it takes. */
export const FIND_PRIMARIES: Readonly<Record<string, 0 | 1>> = {
  "-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1, "-regex": 1, "-iregex": 1,
  "-type": 1, "-xtype": 1, "-maxdepth": 1, "-mindepth": 1, "-size": 1, "-mtime": 1, "-mmin": 1, "-atime": 1, "-amin": 1,
  "-ctime": 1, "-cmin": 1, "-newer": 1, "-perm": 1, "-user": 1, "-group": 1, "-links": 1, "-regextype": 1, "-printf": 1,
  "-empty": 0, "-readable": 0, "-writable": 0, "-executable": 0, "-print": 0, "-print0": 0, "-prune": 0, "-depth": 0,
  "-xdev": 0, "-mount": 0, "-follow": 0, "-nouser": 0, "-nogroup": 0, "-true": 0, "-false": 0, "-quit": 0, "-ls": 0,
  "-not": 0, "!": 0, "-a": 0, "-and": 0, "-o": 0, "-or": 0, "(": 0, ")": 0, ",": 0,
};

/** Programs that are the shell's own builtins everywhere (no PATH lookup). */
export const BUILTINS = new Set(Object.entries(READ_ONLY_PROGRAMS).filter(([, r]) => r.builtin).map(([n]) => n));
