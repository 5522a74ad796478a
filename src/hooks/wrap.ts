/**
 * The command a shell tool call becomes: the agent's text, unchanged, as one argument of
 * `longrun sandbox`, which runs it with bash inside the OS boundary of the mode the gate chose.
 *
 *   sandboxedCommand("git status", "read", "/p")
 *   // → '/usr/local/bin/longrun' sandbox --mode read --root '/p' -- bash -c 'git status'
 */

/** Quotes one word for a POSIX shell: inside single quotes, `'` is the only character to escape. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The longrun executable that runs the sandbox: this very binary when compiled. */
export function longrunExecutable(): string {
  const main = process.argv[1] ?? "";
  if (/^(\/\$bunfs\/|[A-Za-z]:[\\/]~BUN[\\/])/.test(main)) return process.execPath;
  return process.env.LONGRUN_EXE ?? "longrun";
}

export function sandboxedCommand(command: string, mode: "read" | "lease", root: string, exe = longrunExecutable()): string {
  return `${shellQuote(exe)} sandbox --mode ${mode} --root ${shellQuote(root)} -- bash -c ${shellQuote(command)}`;
}
