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
 */

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

const gitLog: ProgramRule = {
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
  pwd: { flags: "LP", operands: "none", builtin: true },
  cd: { flags: "LP", operands: "paths", maxOperands: 1, builtin: true, note: "changes the shell's directory only" },
  echo: { flags: "neE", operands: "text", builtin: true },
  printf: { operands: "text", builtin: true, note: "no -v" },
  true: { operands: "none", builtin: true },
  false: { operands: "none", builtin: true },
  ls: {
    flags: "aAlhtrSR1dFpisnguocUXvGLk",
    valued: { I: "text", w: "number" },
    long: ["--all", "--almost-all", "--human-readable", "--recursive", "--reverse", "--directory", "--classify", "--inode", "--size", "--dereference", "--group-directories-first", "--full-time", "--numeric-uid-gid", "--no-group"],
    longValued: { "--color": COLOR, "--sort": ["none", "size", "time", "version", "extension", "name", "width"], "--ignore": "text", "--time-style": "text", "--width": "number" },
    operands: "paths",
  },
  cat: { flags: "AbeEnstTuv", long: ["--number", "--number-nonblank", "--show-all", "--show-ends", "--show-tabs", "--squeeze-blank", "--show-nonprinting"], operands: "paths" },
  head: { flags: "qvz", valued: { n: "number", c: "number" }, numeric: true, long: ["--quiet", "--silent", "--verbose", "--zero-terminated"], longValued: { "--lines": "number", "--bytes": "number" }, operands: "paths" },
  tail: { flags: "qvz", valued: { n: "number", c: "number" }, numeric: true, long: ["--quiet", "--silent", "--verbose", "--zero-terminated"], longValued: { "--lines": "number", "--bytes": "number" }, operands: "paths", note: "no -f" },
  wc: { flags: "clmwL", long: ["--bytes", "--chars", "--lines", "--words", "--max-line-length"], operands: "paths" },
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
  },
  find: { operands: "paths", note: "tests and -print only; no -exec, -delete, -fprint, -fls" },
  sort: {
    flags: "bdfginMrRsuVhcCz",
    valued: { k: "text", t: "text" },
    long: ["--reverse", "--unique", "--numeric-sort", "--human-numeric-sort", "--ignore-case", "--stable", "--version-sort", "--ignore-leading-blanks", "--general-numeric-sort", "--month-sort", "--dictionary-order", "--zero-terminated", "--check"],
    longValued: { "--key": "text", "--field-separator": "text" },
    operands: "paths",
    note: "no -o, -T, -S, --compress-program, --files0-from",
  },
  uniq: { flags: "cdDiuz", valued: { f: "number", s: "number", w: "number" }, long: ["--count", "--repeated", "--unique", "--ignore-case", "--zero-terminated"], longValued: { "--skip-fields": "number", "--skip-chars": "number", "--check-chars": "number" }, operands: "paths", maxOperands: 1, note: "one input, no output file" },
  cut: { flags: "snz", valued: { d: "text", f: "text", c: "text", b: "text" }, long: ["--complement", "--only-delimited", "--zero-terminated"], longValued: { "--delimiter": "text", "--fields": "text", "--characters": "text", "--bytes": "text", "--output-delimiter": "text" }, operands: "paths" },
  tr: { flags: "cCdst", long: ["--complement", "--delete", "--squeeze-repeats", "--truncate-set1"], operands: "text", maxOperands: 2 },
  diff: {
    flags: "uqsiwbBtaTy",
    valued: { U: "number", W: "number" },
    long: ["--brief", "--report-identical-files", "--ignore-case", "--ignore-all-space", "--ignore-space-change", "--ignore-blank-lines", "--text", "--side-by-side", "--suppress-common-lines", "--minimal", "--expand-tabs", "--strip-trailing-cr"],
    longValued: { "--unified": "number", "--color": COLOR, "--label": "text", "--width": "number" },
    operands: "paths",
    maxOperands: 2,
    filesOnly: "diff compares the files inside a directory (its protected ones too); name the files",
    note: "files only: no -r, no directory operands",
  },
  du: { flags: "ahcsxLkmb", valued: { d: "number" }, long: ["--all", "--human-readable", "--summarize", "--total", "--one-file-system", "--apparent-size"], longValued: { "--max-depth": "number" }, operands: "paths" },
  df: { flags: "hHiTalkP", long: ["--human-readable", "--inodes", "--print-type", "--all", "--local", "--portability"], operands: "paths" },
  stat: { flags: "LftF", valued: { c: "text" }, long: ["--dereference", "--file-system", "--terse"], longValued: { "--format": "text", "--printf": "text" }, operands: "paths" },
  which: { flags: "a", operands: "text" },
  whoami: { operands: "none" },
  uname: { flags: "asnrvmpio", long: ["--all", "--kernel-name", "--nodename", "--kernel-release", "--kernel-version", "--machine", "--processor", "--hardware-platform", "--operating-system"], operands: "none" },
  date: { flags: "uR", valued: { d: "text" }, long: ["--utc", "--universal", "--rfc-email"], longValued: { "--date": "text" }, longOptional: { "--iso-8601": ["date", "hours", "minutes", "seconds", "ns"] }, operands: "date_format", note: "a +FORMAT only; never sets the clock" },
  basename: { flags: "az", valued: { s: "text" }, long: ["--multiple", "--zero"], longValued: { "--suffix": "text" }, operands: "text" },
  dirname: { flags: "z", long: ["--zero"], operands: "text" },
  realpath: { flags: "eEmLPqsz", long: ["--canonicalize-existing", "--canonicalize-missing", "--logical", "--physical", "--quiet", "--strip", "--no-symlinks", "--zero"], longValued: { "--relative-to": "path", "--relative-base": "path" }, operands: "paths" },
  readlink: { flags: "fenmqsvz", long: ["--canonicalize", "--canonicalize-existing", "--canonicalize-missing", "--no-newline", "--quiet", "--silent", "--verbose", "--zero"], operands: "paths" },
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
      },
      log: gitLog,
      show: gitLog,
      diff: {
        flags: GIT_DIFF_FLAGS,
        valued: { U: "number" },
        long: [...GIT_DIFF_LONG, "--cached", "--staged", "--quiet", "--exit-code", "--check", "--merge-base"],
        longValued: GIT_DIFF_VALUED,
        longOptional: { "--stat": "text", "--word-diff": ["plain", "color", "porcelain", "none"] },
        operands: "paths",
      },
      branch: {
        flags: "arv",
        long: ["--all", "--remotes", "--verbose", "--list", "--show-current", "--no-color", "--merged", "--no-merged"],
        longValued: { "--contains": "text", "--no-contains": "text", "--sort": "text", "--format": "text", "--color": COLOR },
        operands: "none",
        note: "listing only",
      },
      "rev-parse": {
        flags: "q",
        long: ["--show-toplevel", "--git-dir", "--git-common-dir", "--is-inside-work-tree", "--is-bare-repository", "--show-prefix", "--show-cdup", "--verify", "--quiet", "--symbolic-full-name", "--abbrev-ref", "--short"],
        longOptional: { "--short": "number", "--abbrev-ref": ["strict", "loose"] },
        operands: "text",
      },
      "ls-files": {
        flags: "cdmoiskuvtz",
        long: ["--cached", "--deleted", "--modified", "--others", "--ignored", "--stage", "--killed", "--unmerged", "--exclude-standard", "--full-name", "--error-unmatch", "--directory", "--no-empty-directory", "--eol"],
        longValued: { "--exclude": "text" },
        operands: "paths",
      },
      blame: {
        flags: "lstnewfcp",
        valued: { L: "text" },
        long: ["--porcelain", "--line-porcelain", "--show-name", "--show-number", "--show-email", "--root", "--incremental"],
        longValued: { "--date": "text" },
        operands: "paths",
      },
    },
  },
};

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
