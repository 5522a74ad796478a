/**
 * Option rules under a lease, as data: the programs and options that hand a program code or a
 * command to run (inline code for an interpreter, `tar --to-command`, `su -c`), the programs
 * that run commands the gate never sees (xargs, schedulers), and the programs that run the
 * command or the code file they are given (wrappers, code runners). lease_bash.ts applies them. Pure.
 */
import type { Command } from "./shell/nodes.ts";

/** Interpreters, by name pattern, with the options that hand them code inline. */
export const INTERPRETERS: readonly { name: RegExp; inline: readonly string[] }[] = [
  { name: /^python[0-9.]*$|^pypy[0-9.]*$/, inline: ["-c"] },
  { name: /^(node|nodejs)$/, inline: ["-e", "--eval", "-p", "--print"] },
  { name: /^bun$/, inline: ["-e", "--eval", "-p", "--print"] },
  { name: /^deno$/, inline: ["eval", "-e"] },
  { name: /^perl[0-9.]*$/, inline: ["-e", "-E"] },
  { name: /^ruby[0-9.]*$/, inline: ["-e"] },
  { name: /^php[0-9.]*$/, inline: ["-r"] },
  { name: /^(lua|luajit)[0-9.]*$/, inline: ["-e"] },
  { name: /^(tclsh|wish)[0-9.]*$/, inline: [] },
  { name: /^osascript$/, inline: ["-e"] },
  { name: /^(Rscript|R)$/, inline: ["-e"] },
  { name: /^julia$/, inline: ["-e", "-E"] },
  { name: /^(awk|gawk|mawk|nawk|busybox)$/, inline: ["*"] },
  { name: /^(vi|vim|nvim|ex|emacs)$/, inline: ["-c", "+", "--cmd", "--eval"] },
];

/** Shells: `-c` text and heredoc bodies are parsed as scripts and checked like the command itself. */
export const SHELLS = /^(sh|bash|dash|zsh|ksh|mksh|ash|fish)$/;

/** Python modules that run code given as text (`python -m timeit 'import os; …'`). */
export const CODE_MODULES = new Set(["timeit", "pdb", "code", "cProfile", "profile", "trace", "runpy", "idlelib", "doctest"]);

/** Programs that run commands later, after this turn and its lease have ended. */
export const SCHEDULERS = new Set(["at", "batch", "crontab", "systemd-run", "launchctl", "schtasks"]);

/** Options that hand a program a shell command to run (`tar --to-command=sh`, `rsync -e`). */
export const COMMAND_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  tar: ["--to-command", "--checkpoint-action", "--use-compress-program", "-I", "--info-script", "-F", "--new-volume-script", "--rsh-command"],
  rsync: ["-e", "--rsh", "--rsync-path"],
  zip: ["-TT", "--unzip-command"],
  git: ["--upload-pack", "--receive-pack", "--exec"],
  less: ["+"],
  man: ["-P", "--pager", "-H", "--html"],
  ssh: ["-o", "ProxyCommand", "LocalCommand"],
};

/** Programs that build and run commands from input the gate never sees. */
export const COMMAND_BUILDERS = new Set(["xargs", "parallel"]);

/** Programs that run a shell command given as one argument (`su -c '…'`, `watch '…'`). */
export const SHELL_STRING_FLAGS: Readonly<Record<string, readonly string[]>> = {
  su: ["-c", "--command"],
  runuser: ["-c", "--command"],
  script: ["-c", "--command"],
  flock: ["-c", "--command"],
  watch: ["*"],
  env: ["-S", "--split-string"],
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
      if (CODE_MODULES.has(mod ?? "")) return true;
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
export const WRAPPERS = new Set(["exec", "command", "builtin", "nohup", "env", "timeout", "nice", "ionice", "chrt", "taskset", "stdbuf", "sudo", "doas", "setsid", "time", "unbuffer", "strace", "ltrace", "chroot", "unshare", "nsenter", "firejail", "bwrap"]);

/** Interpreters whose first operand is a file of code (`python3 x.py`, `node x.js`). */
export const CODE_RUNNERS = /^(python[0-9.]*|pypy[0-9.]*|node|nodejs|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|Rscript|julia|tclsh[0-9.]*|tsx|ts-node)$/;
