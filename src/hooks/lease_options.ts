/**
 * Option rules under a lease, as data: the programs and options that hand a program code or a
 * command to run (inline code for an interpreter, `tar --to-command`, `su -c`), the programs
 * that run commands the gate never sees (xargs, schedulers), and the programs that run the
 * command or the code file they are given (wrappers, code runners). lease_bash.ts applies them.
 * Each rule carries its examples (command lines it must let through and must refuse under a
 * lease), run in process by tests/hooks/rule_examples.test.ts. Pure.
 */
import type { RuleExamples } from "./rule_examples.ts";
import type { Command } from "./shell/nodes.ts";

/** An interpreter, by name pattern, with the options that hand it code inline (`*`: any code argument). */
export interface Interpreter {
  name: RegExp;
  inline: readonly string[];
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
  { name: /^(vi|vim|nvim|ex|emacs)$/, inline: ["-c", "+", "--cmd", "--eval"], examples: { pass: ["vim a.txt"], refused: ["vim -c ':!id'", "vi -c ':!id' a.txt", "emacs --eval '(shell-command \"id\")'"] } },
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

/** Options that hand a program a shell command to run (`tar --to-command=sh`, `rsync -e`), by program. */
export const COMMAND_OPTIONS: Readonly<Record<string, { options: readonly string[]; examples: RuleExamples }>> = {
  tar: {
    options: ["--to-command", "--checkpoint-action", "--use-compress-program", "-I", "--info-script", "-F", "--new-volume-script", "--rsh-command"],
    examples: { pass: ["tar -czf /tmp/longrun-src.tgz src"], refused: ["tar xf a.tar --to-command=sh", "tar -cf /dev/null a.txt --checkpoint=1 --checkpoint-action=exec=sh", "tar -I zstd -cf /tmp/x.tar src"] },
  },
  rsync: { options: ["-e", "--rsh", "--rsync-path"], examples: { pass: ["rsync -a src/ /tmp/longrun-copy-of-src"], refused: ["rsync -e 'sh -c id' a b:", "rsync --rsync-path=sh a b:"] } },
  zip: { options: ["-TT", "--unzip-command"], examples: { pass: ["zip -r /tmp/longrun-src.zip src"], refused: ["zip -T -TT 'sh -c id' /tmp/x.zip a.txt"] } },
  git: { options: ["--upload-pack", "--receive-pack", "--exec"], examples: { pass: ["git fetch origin"], refused: ["git fetch --upload-pack='sh -c id' origin"] } },
  less: { options: ["+"], examples: { pass: ["less a.txt"], refused: ["less + a.txt"] } },
  man: { options: ["-P", "--pager", "-H", "--html"], examples: { pass: ["man ls"], refused: ["man -P sh ls", "man --pager=sh ls"] } },
  ssh: { options: ["-o", "ProxyCommand", "LocalCommand"], examples: { pass: ["ssh -p 22 localhost"], refused: ["ssh -o ProxyCommand='sh -c id' x"] } },
};

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
export function inlineCode(inline: readonly string[], after: readonly string[], stdin: Command["stdin"]): boolean {
  if (inline.includes("*")) return !after.some((t, k) => t === "-f" || (t.startsWith("-f") && t.length > 2) || (after[k - 1] === "-f"));
  let operand = false;
  for (let k = 0; k < after.length; k++) {
    const t = after[k]!;
    if (inline.includes(t) || (inline.includes("+") && t.startsWith("+"))) return true;
    if (inline.some((f) => f.startsWith("--") && t.startsWith(f + "="))) return true;
    if (!t.startsWith("-") || t === "-") {
      operand = t !== "-";
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
    { name: "command builders", examples: COMMAND_BUILDERS.examples },
    ...Object.entries(SHELL_STRING_FLAGS).map(([program, r]) => ({ name: `shell-string flags of ${program}`, examples: r.examples })),
    { name: "wrappers", examples: WRAPPERS.examples },
    { name: "code runners", examples: CODE_RUNNERS.examples },
  ];
}
