/**
 * Option rules under a lease, as data: the programs and options that hand a program code or a
 * command to run (inline code for an interpreter, `tar --to-command`, `su -c`), the programs
 * that run commands the gate never sees (xargs, schedulers), and the programs that run the
 * command or the code file they are given (wrappers, code runners). lease_bash.ts applies them.
 * Each rule carries its examples (command lines it must let through and must refuse under a
 * lease), run in process by tests/hooks/rule_examples.test.ts. Pure.
 */
import type { RuleExamples } from "./rule_examples.ts";
import { type Command, literalOf } from "./shell/nodes.ts";
import { shown } from "./shell/words.ts";

/** An interpreter, by name pattern, with the options that hand it code inline (`*`: any code argument). */
export interface Interpreter {
  name: RegExp;
  inline: readonly string[];
  /** The inline options count after a file operand too (`vim a.txt -c ':!id'`), as an editor reads them. */
  anywhere?: boolean;
  examples: RuleExamples;
}

/** Interpreters, by name pattern, with the options that hand them code inline. */
export const INTERPRETERS: readonly Interpreter[] = [
  {
    name: /^python[0-9.]*$|^pypy[0-9.]*$/,
    inline: ["-c"],
    examples: { pass: ["python3 script.py", "python3 -m pytest -x -c pytest.ini"], refused: ["python3 -c 'open(\"x\",\"w\")'", "python3 -Bc 'import os'", "python3 -cimport\\ os", "echo 'import os' | python3"] },
  },
  { name: /^(node|nodejs)$/, inline: ["-e", "--eval", "-p", "--print"], examples: { pass: ["node build.js"], refused: ["node -e 1", "node --eval 1", "node -p 1"] } },
  { name: /^bun$/, inline: ["-e", "--eval", "-p", "--print"], examples: { pass: ["bun build.ts"], refused: ["bun --eval=1", "bun -e 1"] } },
  { name: /^deno$/, inline: ["eval", "-e"], examples: { pass: ["deno run build.ts"], refused: ["deno eval 1"] } },
  { name: /^perl[0-9.]*$/, inline: ["-e", "-E"], examples: { pass: ["perl x.pl"], refused: ["perl -e 'system(\"id\")'", "perl -E 'unlink q(x)'"] } },
  { name: /^ruby[0-9.]*$/, inline: ["-e"], examples: { pass: ["ruby x.rb"], refused: ["ruby -e 1"] } },
  { name: /^php[0-9.]*$/, inline: ["-r"], examples: { pass: ["php x.php"], refused: ["php -r 'system(\"id\");'"] } },
  { name: /^(lua|luajit)[0-9.]*$/, inline: ["-e"], examples: { pass: ["lua x.lua"], refused: ["lua -e 'os.execute(\"id\")'"] } },
  { name: /^(tclsh|wish)[0-9.]*$/, inline: [], examples: { pass: ["tclsh x.tcl"], refused: ["echo 'exec id' | tclsh"] } },
  { name: /^osascript$/, inline: ["-e"], examples: { pass: ["osascript x.scpt"], refused: ["osascript -e 'do shell script \"id\"'"] } },
  { name: /^(Rscript|R)$/, inline: ["-e"], examples: { pass: ["Rscript x.R"], refused: ["Rscript -e 'system(\"id\")'"] } },
  { name: /^julia$/, inline: ["-e", "-E"], examples: { pass: ["julia x.jl"], refused: ["julia -e 'run(`id`)'"] } },
  { name: /^(awk|gawk|mawk|nawk|busybox)$/, inline: ["*"], examples: { pass: ["awk -f prog.awk a.txt"], refused: ["awk 'BEGIN {system(\"id\")}'", "gawk 'BEGIN { print | \"sh\" }'"] } },
  {
    // +CMD, -c and --cmd run an Ex command (`:!sh`) at start, -S and -u source a script, -s types one in, nvim -l runs Lua
    name: /^(vi|vim|nvim|ex|view|vimdiff|rvim|rview|gvim|gview|evim|vimx)$/,
    inline: ["-c", "+", "--cmd", "-S", "-s", "-u", "-U", "-l"],
    anywhere: true,
    examples: {
      pass: ["vim a.txt", "vim -R a.txt", "view a.txt"],
      refused: ["vim -c ':!id'", "vi -c ':!id' a.txt", "vim a.txt -c ':!id'", "vim a.txt '+!rm -rf .long*'", "view '+!id' a.txt", "nvim --cmd '!id' a.txt", "vim -S evil.vim a.txt", "vim -Nu evil.vim a.txt"],
    },
  },
  {
    name: /^(emacs|emacsclient)$/,
    inline: ["--eval", "-eval", "-e", "--load", "-load", "-l", "--funcall", "-funcall", "-f", "--script", "-script", "-x"],
    anywhere: true,
    examples: { pass: ["emacs a.txt"], refused: ["emacs --eval '(shell-command \"id\")'", "emacs a.txt -l evil.el", "emacs -batch -load evil.el", "emacsclient -e '(shell-command \"id\")'"] },
  },
];

/** A group of programs one rule treats alike, by name pattern or by name. */
export interface ProgramPattern {
  name: RegExp;
  examples: RuleExamples;
}
export interface ProgramSet {
  names: ReadonlySet<string>;
  examples: RuleExamples;
}

/** Shells: `-c` text and heredoc bodies are parsed as scripts and checked like the command itself. */
export const SHELLS: ProgramPattern = {
  name: /^(sh|bash|dash|zsh|ksh|mksh|ash|fish)$/,
  examples: { pass: ["bash ok.sh", "sh -c 'echo hi'", "bash <<'EOF'\necho hi\nEOF"], refused: ["sh -c 'rm -rf .long*'", "bash -c", "echo ls | sh", "bash <<EOF\n$X\nEOF"] },
};

/** Python modules that run code given as text (`python -m timeit 'import os; …'`). */
export const CODE_MODULES: { modules: ReadonlySet<string>; examples: RuleExamples } = {
  modules: new Set(["timeit", "pdb", "code", "cProfile", "profile", "trace", "runpy", "idlelib", "doctest"]),
  examples: { pass: ["python3 -m pytest -x"], refused: ["python3 -m timeit -n1 'import os'", "python3 -mpdb x.py"] },
};

/** Programs that run commands later, after this turn and its lease have ended. */
export const SCHEDULERS: ProgramSet = {
  names: new Set(["at", "batch", "crontab", "systemd-run", "launchctl", "schtasks"]),
  examples: { pass: ["echo at now"], refused: ["crontab evil.cron", "echo ls | at now", "systemd-run ls"] },
};

/**
 * Options that hand a program a shell command to run (`tar --to-command=sh`, `rsync -e`), by
 * program. An option matches alone, as `--name=value`, attached (`-Psh`), in a cluster when
 * `clusters` says the program reads them so (`-aPsh`), and as an abbreviation of a long option
 * (`--to-com=sh`, as getopt_long and git read them); `prefixes` match every word that starts so
 * (less's `+CMD` runs a less command at start, and `+!CMD` a shell command).
 */
export const COMMAND_OPTIONS: Readonly<Record<string, { options: readonly string[]; prefixes?: readonly string[]; clusters?: boolean; examples: RuleExamples }>> = {
  tar: {
    options: ["--to-command", "--checkpoint-action", "--use-compress-program", "-I", "--info-script", "-F", "--new-volume-script", "--rsh-command"],
    clusters: true,
    examples: { pass: ["tar -czf /tmp/longrun-src.tgz src"], refused: ["tar xf a.tar --to-command=sh", "tar -cf /dev/null a.txt --checkpoint=1 --checkpoint-action=exec=sh", "tar -I zstd -cf /tmp/x.tar src", "tar xf a.tar --to-com=sh", "tar -cIzstd -f /tmp/x.tar src"] },
  },
  rsync: { options: ["-e", "--rsh", "--rsync-path"], clusters: true, examples: { pass: ["rsync -a src/ /tmp/longrun-copy-of-src"], refused: ["rsync -e 'sh -c id' a b:", "rsync --rsync-path=sh a b:", "rsync -ave 'sh -c id' a b:"] } },
  zip: { options: ["-TT", "--unzip-command"], examples: { pass: ["zip -r /tmp/longrun-src.zip src"], refused: ["zip -T -TT 'sh -c id' /tmp/x.zip a.txt"] } },
  git: { options: ["--upload-pack", "--receive-pack", "--exec", "--exec-path"], examples: { pass: ["git fetch origin"], refused: ["git fetch --upload-pack='sh -c id' origin", "git fetch --upload-p='sh -c id' origin", "git --exec-path=./bin log"] } },
  less: {
    // -k/--lesskey-*: a lesskey file or text can set LESSOPEN and bind commands; -+ resets an option
    options: ["-k", "--lesskey-file", "--lesskey-src", "--lesskey-content"],
    prefixes: ["+", "-+"],
    clusters: true,
    examples: { pass: ["less a.txt", "less -R a.txt", "less -p hello a.txt"], refused: ["less + a.txt", "less '+!rm -rf .long*' a.txt", "less '++!id' a.txt", "less a.txt +!id", "less -+S a.txt", "less -k keys.bin a.txt", "less -Sk keys.bin a.txt", "less --lesskey-src=keys.txt a.txt", "less --lesskey-s=keys.txt a.txt"] },
  },
  more: { options: [], prefixes: ["+"], examples: { pass: ["more a.txt"], refused: ["more '+!rm -rf .long*' a.txt", "more +/x a.txt"] } },
  man: {
    // -C: man-db's configuration file names the programs man runs (DEFINE pager …)
    options: ["-P", "--pager", "-H", "--html", "-C", "--config-file"],
    clusters: true,
    examples: { pass: ["man ls", "man -a ls"], refused: ["man -P sh ls", "man --pager=sh ls", "man -aPsh ls", "man --pag=sh ls", "man -C evil.conf ls"] },
  },
  ssh: { options: ["-o", "ProxyCommand", "LocalCommand"], examples: { pass: ["ssh -p 22 localhost"], refused: ["ssh -o ProxyCommand='sh -c id' x"] } },
};

/** The first of `after` that hands `program` a command to run (COMMAND_OPTIONS), or undefined. */
export function commandOption(program: string, after: readonly string[]): string | undefined {
  if (!Object.hasOwn(COMMAND_OPTIONS, program)) return undefined;
  const rule = COMMAND_OPTIONS[program]!;
  const letters = rule.options.filter((o) => o.length === 2 && o[0] === "-").map((o) => o[1]!);
  const longs = rule.options.filter((o) => o.startsWith("--"));
  return after.find((t) => {
    if (rule.prefixes?.some((p) => t.startsWith(p))) return true;
    if (rule.options.some((o) => t === o || t.startsWith(o + "="))) return true;
    if (program === "ssh" && /proxycommand|localcommand|permitlocalcommand/i.test(t)) return true;
    if (t.startsWith("--")) {
      const name = t.split("=")[0]!;
      return name.length >= 5 && longs.some((o) => o.startsWith(name));
    }
    if (!/^-./.test(t)) return false;
    return rule.clusters ? letters.some((l) => t.slice(1).includes(l)) : letters.some((l) => t.startsWith(`-${l}`));
  });
}

/**
 * Environment variables whose value a program runs as a command, or reads the commands or options
 * it runs at start from (`GIT_PAGER='sh x.sh' git log`, `LESS='+!sh' less f`, `LESSOPEN='|sh %s'`),
 * each with the values that run nothing. Under a lease a script may not set them otherwise: as an
 * assignment (in front of a command, alone, after export, declare or env), by name (`read PAGER`,
 * `printf -v PAGER`, `declare -n x=PAGER`) or as a loop's variable.
 */
export interface CommandVariable {
  names: RegExp;
  safe: (value: string) => boolean;
  what: string;
  examples: RuleExamples;
}

export const COMMAND_VARIABLES: readonly CommandVariable[] = [
  {
    names: /^(PAGER|GIT_PAGER|MANPAGER)$/,
    safe: (v) => ["", "cat", "less", "more"].includes(v.trim()),
    what: "the pager a program runs",
    examples: { pass: ["GIT_PAGER=cat git log", "PAGER= git log", "export GIT_PAGER=cat; git log"], refused: ["GIT_PAGER='sh -c id' git log", "export PAGER='sh x.sh'; git log", "env MANPAGER='sh x.sh' man ls", "read GIT_PAGER < a.txt; git log", "for PAGER in 'sh x.sh'; do git log; done"] },
  },
  {
    names: /^(LESS|MORE)$/,
    safe: (v) => commandOption("less", v.split(/\s+/).filter((t) => t !== "")) === undefined,
    what: "less's options, whose +CMD and -k run commands at start",
    examples: { pass: ["LESS=-FRX less a.txt"], refused: ["LESS='+!rm -rf .long*' less a.txt", "LESS='-R -kkeys.bin' less a.txt", "MORE='+!id' more a.txt", "declare -n opts=LESS; opts='+!id'; less a.txt"] },
  },
  {
    names: /^(LESSOPEN|LESSCLOSE|LESSKEY|LESSKEYIN|LESSKEY_SRC|LESSKEY_CONTENT|LESSKEY_SYSTEM|LESSKEYIN_SYSTEM|LESSKEY_SRC_SYSTEM|LESSGLOBALTAGS|LESSEDIT|MANOPT)$/,
    safe: (v) => v === "",
    what: "a command less or man runs (an input preprocessor, a lesskey file, man's options)",
    examples: { pass: ["LESSOPEN= less a.txt"], refused: ["LESSOPEN='|sh x.sh %s' less a.txt", "LESSKEY=keys.bin less a.txt", "MANOPT='-P sh' man ls"] },
  },
  {
    names: /^(EDITOR|VISUAL|GIT_EDITOR|GIT_SEQUENCE_EDITOR)$/,
    safe: (v) => ["", "true", ":", "cat"].includes(v.trim()),
    what: "the editor a program runs",
    examples: { pass: ["GIT_EDITOR=true git rebase --continue"], refused: ["GIT_EDITOR='sh x.sh' git commit", "EDITOR='sh x.sh' crontab -e"] },
  },
  {
    names: /^(GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_CONFIG_PARAMETERS|GIT_CONFIG|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|GIT_EXTERNAL_DIFF|GIT_SSH|GIT_SSH_COMMAND|GIT_ASKPASS|SSH_ASKPASS|GIT_PROXY_COMMAND|GIT_EXEC_PATH)$/,
    safe: (v) => v === "" || v === "/dev/null",
    what: "git configuration or a program git runs (as git -c core.pager=… would)",
    examples: { pass: ["GIT_CONFIG_GLOBAL=/dev/null git status"], refused: ["GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='sh x.sh' git log", "GIT_SSH_COMMAND='sh x.sh' git fetch", "GIT_CONFIG_PARAMETERS=\"'core.pager'='sh x.sh'\" git log"] },
  },
  {
    names: /^(BASH_ENV|LD_PRELOAD|LD_AUDIT)$/, // not ENV: only an interactive shell reads it, and ENV=production is common
    safe: (v) => v === "",
    what: "code a shell or every program loads at start",
    examples: { pass: ["BASH_ENV= bash fine.sh"], refused: ["BASH_ENV=evil.sh bash fine.sh", "LD_PRELOAD=./x.so ls"] },
  },
];

/**
 * `$HOME`, `$PWD`, `$OLDPWD` and `$CDPATH` decide where `cd`, `~` and `$PWD` lead; the checks
 * follow the directories a script reaches (shell/cd.ts) only as bash itself sets them.
 */
export const DIRECTORY_VARIABLES: CommandVariable = {
  names: /^(HOME|PWD|OLDPWD|CDPATH)$/,
  safe: () => false,
  what: "where cd, ~ and $PWD lead",
  examples: { pass: ["cd src && ls $PWD/a.ts"], refused: ["HOME=src/x; cd; ./fine.sh", "PWD=/tmp; cat $PWD/a.txt", "CDPATH=/tmp cd src", "export HOME=/tmp; cd", "read PWD < a.txt; ls $PWD"] },
};

/** Commands that set the variables they name (`read NAME`, `export NAME`, `printf -v NAME`). */
const SETTERS = new Set(["read", "export", "declare", "typeset", "local", "readonly", "printf", "mapfile", "readarray", "getopts"]);

/**
 * Every variable the commands set, with its value when it is plain text, else null: an assignment
 * (in front of a command, alone, after export or env), a name a setter is given (`read PAGER`,
 * `declare -n x=PAGER`) or a loop's variable.
 */
function variablesSet(commands: readonly Command[]): { name: string; value: string | null }[] {
  const out: { name: string; value: string | null }[] = [];
  for (const cmd of commands) {
    const program = cmd.words[0] ? literalOf(cmd.words[0]) : null;
    const setter = program !== null && SETTERS.has(program);
    for (const [k, w] of [...cmd.assigns, ...cmd.words].entries()) {
      const text = literalOf(w);
      const m = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?)=([^]*)$/.exec(text ?? w.raw);
      if (m) out.push({ name: m[1]!, value: text === null || m[2] || (m[3] && m[4]) ? null : m[4]! });
      const loop = (cmd.keywords.includes("for") || cmd.keywords.includes("select")) && k === cmd.assigns.length;
      if ((setter || loop) && text !== null) out.push({ name: text.replace(/^[A-Za-z_][A-Za-z0-9_]*=/, ""), value: null });
    }
  }
  return out;
}

/** Why a script sets one of COMMAND_VARIABLES or DIRECTORY_VARIABLES to a value that may run something or lead elsewhere, or null. */
export function commandVariableRefusal(commands: readonly Command[]): string | null {
  for (const { name, value } of variablesSet(commands)) {
    const row = [...COMMAND_VARIABLES, DIRECTORY_VARIABLES].find((r) => r.names.test(name));
    if (!row || (value !== null && row.safe(value))) continue;
    return `it sets ${name} to ${value === null ? "a value longrun cannot see" : shown(value)}, and ${name} is ${row.what}; longrun cannot check where that leads`;
  }
  return null;
}

/** Programs that build and run commands from input the gate never sees. */
export const COMMAND_BUILDERS: ProgramSet = {
  names: new Set(["xargs", "parallel"]),
  examples: { pass: ["ls xargs.txt"], refused: ["find . | xargs rm", "ls | parallel rm"] },
};

/** Programs that run a shell command given as one argument (`su -c '…'`, `watch '…'`; `*`: every argument). */
export const SHELL_STRING_FLAGS: Readonly<Record<string, { flags: readonly string[]; examples: RuleExamples }>> = {
  su: { flags: ["-c", "--command"], examples: { pass: ["su -c ls me"], refused: ["su -c 'rm -rf .long*' me"] } },
  runuser: { flags: ["-c", "--command"], examples: { pass: ["runuser -u me ls"], refused: ["runuser -c 'rm -rf .long*' me"] } },
  script: { flags: ["-c", "--command"], examples: { pass: ["script -q -c ls /dev/null"], refused: ["script -c 'rm -rf .long*' /dev/null"] } },
  flock: { flags: ["-c", "--command"], examples: { pass: ["flock /tmp/longrun-x.lock -c ls"], refused: ["flock /tmp/longrun-x.lock -c 'rm -rf .long*'"] } },
  watch: { flags: ["*"], examples: { pass: ["watch ls"], refused: ["watch 'rm -rf .long*'"] } },
  env: { flags: ["-S", "--split-string"], examples: { pass: ["env -S 'ls -la'"], refused: ["env -S 'rm -rf .long*'"] } },
};

/**
 * Whether an interpreter gets its code inline: an inline option among its own options (before
 * the script or module operand), or code on stdin with no script operand at all.
 */
export function inlineCode(inline: readonly string[], after: readonly string[], stdin: Command["stdin"], anywhere = false): boolean {
  if (inline.includes("*")) return !after.some((t, k) => t === "-f" || (t.startsWith("-f") && t.length > 2) || (after[k - 1] === "-f"));
  let operand = false;
  for (let k = 0; k < after.length; k++) {
    const t = after[k]!;
    if (inline.includes(t) || (inline.includes("+") && t.startsWith("+"))) return true;
    if (inline.some((f) => f.startsWith("--") && t.startsWith(f + "="))) return true;
    if (!t.startsWith("-") || t === "-") {
      operand ||= t !== "-";
      if (anywhere) continue;
      break;
    }
    if (t === "-m" || (t.startsWith("-m") && t.length > 2)) {
      // python -m module: the module's own options follow; some modules run code given as text
      const mod = t === "-m" ? after[k + 1] : t.slice(2);
      if (CODE_MODULES.modules.has(mod ?? "")) return true;
      operand = true;
      break;
    }
    if (t.startsWith("--")) continue;
    // a cluster (-Bc) or an attached value (-cCODE) of a one-letter inline option
    if (inline.some((f) => f.length === 2 && f[0] === "-" && (t.slice(1).includes(f[1]!) || t.startsWith(f)))) return true;
  }
  return !operand && (stdin === "pipe" || stdin === "data");
}

/** Programs that run the command given in their arguments (`nohup ./x.sh`, `timeout 5 bash x.sh`). */
export const WRAPPERS: ProgramSet = {
  names: new Set(["exec", "command", "builtin", "nohup", "env", "timeout", "nice", "ionice", "chrt", "taskset", "stdbuf", "sudo", "doas", "setsid", "time", "unbuffer", "strace", "ltrace", "chroot", "unshare", "nsenter", "firejail", "bwrap"]),
  examples: { pass: ["nohup ./fine.sh", "timeout 5 bash fine.sh"], refused: ["nohup ./evil.sh", "timeout 5 ./evil.sh"] },
};

/** Interpreters whose first operand is a file of code (`python3 x.py`, `node x.js`). */
export const CODE_RUNNERS: ProgramPattern = {
  name: /^(python[0-9.]*|pypy[0-9.]*|node|nodejs|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|Rscript|julia|tclsh[0-9.]*|tsx|ts-node)$/,
  examples: { pass: ["python3 fine.py", "node fine.js"], refused: ["python3 evil.py", "node evil.js"] },
};

/** Every rule above with its examples, named for a test's report (a new table is added here too). */
export function leaseOptionRules(): { name: string; examples: RuleExamples }[] {
  return [
    ...INTERPRETERS.map((r) => ({ name: `interpreter ${r.name.source}`, examples: r.examples })),
    { name: "shells", examples: SHELLS.examples },
    { name: "code modules", examples: CODE_MODULES.examples },
    { name: "schedulers", examples: SCHEDULERS.examples },
    ...Object.entries(COMMAND_OPTIONS).map(([program, r]) => ({ name: `command options of ${program}`, examples: r.examples })),
    ...COMMAND_VARIABLES.map((r) => ({ name: `command variables ${r.names.source}`, examples: r.examples })),
    { name: "directory variables", examples: DIRECTORY_VARIABLES.examples },
    { name: "command builders", examples: COMMAND_BUILDERS.examples },
    ...Object.entries(SHELL_STRING_FLAGS).map(([program, r]) => ({ name: `shell-string flags of ${program}`, examples: r.examples })),
    { name: "wrappers", examples: WRAPPERS.examples },
    { name: "code runners", examples: CODE_RUNNERS.examples },
  ];
}
