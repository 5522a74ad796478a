/**
 * Rules for single programs under a lease, as data and small readers: which `git -c` keys and
 * `git config` forms may run, whether a sed script runs commands, whether `find`'s name tests
 * keep an action away from every protected name (and a whole-tree command it runs away from
 * protected trees), and which file lists tar, rsync, zip and cpio take. Pure apart from the
 * disk reads of protect.ts and trees.ts.
 */
import { PROTECTED, type ProtectContext } from "./protect.ts";
import type { RuleExamples } from "./rule_examples.ts";
import { fileListHit } from "./script_files.ts";
import { shown, type Tok, tokensMatch } from "./shell/words.ts";
import { treeOperationRefusal } from "./trees.ts";

/** A word as lease_bash sees it: its glob tokens and its text. */
export interface FindArg {
  tokens: Tok[];
  text: string;
}

/** `git -c KEY=VALUE` may only set keys that cannot make git run a program. */
const GIT_SAFE_KEYS = /^(user\.(name|email)|commit\.gpgsign|tag\.gpgsign|core\.autocrlf|core\.quotepath|init\.defaultbranch|color\.[a-z.]+|advice\.[a-z]+|pull\.rebase|push\.default|merge\.ff|rebase\.autostash|core\.safecrlf|diff\.renames|log\.showsignature)$/;

/** git's options before the subcommand that take the next word as their value. */
const GIT_VALUED_GLOBALS = new Set(["-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--list-cmds", "--attr-source"]);

export function gitConfigOverride(after: readonly string[]): string | null {
  for (let k = 0; k < after.length; k++) {
    const t = after[k]!;
    if (t === "--config-env" || t.startsWith("--config-env=")) return "git --config-env can make git run any program";
    let setting: string | undefined;
    if (t === "-c") setting = after[++k]; // its value is no subcommand: the options go on after it
    else if (t.startsWith("-c") && t.length > 2) setting = t.slice(2);
    else if (GIT_VALUED_GLOBALS.has(t)) k++; // `git -C src -c …`: a directory, not the subcommand
    else if (!t.startsWith("-")) break; // the subcommand: its own -c means something else
    if (setting === undefined) continue;
    const key = setting.split("=")[0]!.toLowerCase();
    if (!GIT_SAFE_KEYS.test(key)) return `git -c ${key} is not allowed under a lease (configuration can make git run any program); allowed: user.name, user.email, commit.gpgsign, …`;
  }
  return null;
}

export const FIND_ACTIONS = new Set(["-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"]);
const FIND_NAME_TESTS = new Set(["-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename"]);
const FIND_OR = new Set(["-o", "-or", "!", "-not", ",", "(", ")"]);
/** `git config` may read, but not write: configuration can make later git commands run programs. */
export function gitConfigWrite(after: readonly string[]): string | null {
  let k = 0;
  // git's global options before the subcommand, some with a value
  while (k < after.length && after[k]!.startsWith("-")) k += ["-C", "-c", "--git-dir", "--work-tree", "--namespace"].includes(after[k]!) ? 2 : 1;
  if (after[k] !== "config") return null;
  const rest = after.slice(k + 1);
  const reading = rest.some((t) => ["--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color", "--get-colorbool"].includes(t)) || ["get", "list"].includes(rest.find((t) => !t.startsWith("-")) ?? "");
  if (reading) return null;
  const operands = rest.filter((t) => !t.startsWith("-"));
  if (operands.length === 1 && !rest.some((t) => /^--(add|replace-all|unset|unset-all|rename-section|remove-section|edit)$/.test(t) || t === "-e")) return null; // `git config key`: a read
  return "git config writes git configuration, which can make later git commands run programs; ask the user to set it";
}

/**
 * A sed script may not run commands (`e`, or the `e` flag of `s`): sed would hand that text to a
 * shell. Scripts from files (-f) cannot be seen, so they are refused too.
 */
export function sedRefusal(after: readonly string[]): string | null {
  const scripts: string[] = [];
  let sawScriptOption = false;
  for (let k = 0; k < after.length; k++) {
    const t = after[k]!;
    if (t === "-e" || t === "--expression") {
      scripts.push(after[++k] ?? "");
      sawScriptOption = true;
    } else if (t.startsWith("--expression=")) {
      scripts.push(t.slice(13));
      sawScriptOption = true;
    } else if (t === "-f" || t.startsWith("--file") || (/^-[a-zA-Z]*f/.test(t) && !t.startsWith("--"))) return "sed -f runs a script file longrun cannot check";
    else if (/^-[a-zA-Z]*e$/.test(t) && !t.startsWith("--")) {
      scripts.push(after[++k] ?? "");
      sawScriptOption = true;
    } else if (!t.startsWith("-") && !sawScriptOption) {
      scripts.push(t);
      sawScriptOption = true;
    }
  }
  for (const sc of scripts) if (sedRunsCommands(sc)) return "this sed script runs commands (the e command or flag); longrun cannot check them";
  return null;
}

/** True when a sed script has an `e` command or an `s` command with the `e` flag (or cannot be read). */
function sedRunsCommands(script: string): boolean {
  let i = 0;
  const n = script.length;
  const skipSpace = () => {
    while (i < n && /[\s;]/.test(script[i]!)) i++;
  };
  const delimited = (d: string) => {
    while (i < n && script[i] !== d) {
      if (script[i] === "\\") i++;
      i++;
    }
    i++;
  };
  while (i < n) {
    skipSpace();
    if (i >= n) break;
    // addresses: numbers, $, /re/, \cREc, ranges, step, !
    for (let guard = 0; guard < 4; guard++) {
      if (/[0-9$~+]/.test(script[i] ?? "")) while (i < n && /[0-9$~+]/.test(script[i]!)) i++;
      else if (script[i] === "/") {
        i++;
        delimited("/");
        while (/[IM]/.test(script[i] ?? "")) i++;
      } else if (script[i] === "\\" && i + 1 < n) {
        const d = script[i + 1]!;
        i += 2;
        delimited(d);
      }
      if (script[i] === ",") {
        i++;
        continue;
      }
      break;
    }
    while (script[i] === " " || script[i] === "!") i++;
    const cmd = script[i++];
    if (cmd === undefined) break;
    if (cmd === "e") return true;
    if (cmd === "{" || cmd === "}") continue;
    if (cmd === "s" || cmd === "y") {
      const d = script[i++];
      if (d === undefined || d === "\n" || d === "\\") return true;
      delimited(d);
      delimited(d);
      if (cmd === "s") {
        while (i < n && /[gpiImMe0-9wW]/.test(script[i]!)) {
          if (script[i] === "e") return true;
          if (script[i] === "w" || script[i] === "W") {
            while (i < n && script[i] !== "\n") i++;
            break;
          }
          i++;
        }
      }
      continue;
    }
    if (/[aicrRwWbtTvl:#qQ]/.test(cmd)) {
      // text, a file name or a label runs to the end of the line
      while (i < n && script[i] !== "\n") i++;
      continue;
    }
    if (!/[dDgGhHnNpPxz=F]/.test(cmd)) return true; // something this reader does not know
  }
  return false;
}

/**
 * Names a `find` action could hit inside protected places: the protected names themselves and the
 * files longrun and Claude Code keep in them (raw bodies are `<kind>-<hash16>-<rand8>.txt`).
 */
const PROTECTED_CHILDREN = [
  "state.json", "http.json", "hooks.json", "lock", "pending_checkpoint.json", "state.json.corrupt-x", "x.tmp",
  "m-0123456789abcdef-01234567.txt", "a-0123456789abcdef-01234567.txt", "c-0123456789abcdef-01234567.txt",
  "settings.json", "settings.local.json", "commands", "approve.md", "config", "hooks", "pre-commit",
];

/** `find` with an action must be narrowed by name tests that no protected name can pass. */
export function findRefusal(args: readonly FindArg[], dotglob: boolean): string | null {
  const texts = args.map((a) => a.text);
  if (!texts.some((t) => FIND_ACTIONS.has(t))) return null;
  for (let i = 0; i < texts.length - 1; i++) {
    if (FIND_ACTIONS.has(texts[i]!) && texts[i]!.startsWith("-exec") || texts[i] === "-ok" || texts[i] === "-okdir") {
      if (texts[i + 1]!.includes("{}")) return "find -exec runs the files it finds as programs";
    }
  }
  if (texts.some((t) => FIND_OR.has(t))) return "find with an action and -o, !, -not or parentheses cannot be shown to spare longrun's files";
  const tests: { path: boolean; pattern: Tok[] }[] = [];
  for (let i = 0; i < args.length - 1; i++) if (FIND_NAME_TESTS.has(texts[i]!)) tests.push({ path: texts[i]!.includes("path"), pattern: globTokens(texts[i + 1]!) });
  if (tests.length === 0) return "find with an action needs a -name or -path test, so that longrun's files are never among its matches";
  const names = [...PROTECTED.flatMap((r) => r.segments.flat()).filter((n) => n !== "*"), ...PROTECTED_CHILDREN];
  const paths = PROTECTED.flatMap((r) => r.segments[0]!.flatMap((first) => [first, ...PROTECTED_CHILDREN.map((c) => `${first}/${c}`)]));
  // the tests are all required (no -o), so one test that no protected entry passes is enough
  for (const t of tests) {
    const candidates = t.path ? paths.flatMap((p) => [`./${p}`, p, `x/${p}`, `./x/${p}`]) : names;
    if (!candidates.some((n) => tokensMatch(t.pattern, n.toLowerCase(), true))) return null;
  }
  void dotglob;
  return "find's name tests could match one of longrun's or Claude Code's protected files (exclude them with a narrower -name or -path)";
}

/**
 * A find -name/-path pattern (fnmatch syntax) as tokens: `\x` is x, `[…]` any one character (an
 * over-approximation), `?` one, `*` anything (for -path it crosses `/`, and a leading dot is
 * matched too).
 */
function globTokens(p: string): Tok[] {
  const out: Tok[] = [];
  const s = p.toLowerCase();
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === "\\" && i + 1 < s.length) out.push({ t: "c", c: s[++i]! });
    else if (ch === "*") out.push({ t: "any" });
    else if (ch === "?") out.push({ t: "one" });
    else if (ch === "[" && s.indexOf("]", i + 2) > 0) {
      out.push({ t: "one" });
      i = s.indexOf("]", i + 2);
    } else out.push({ t: "c", c: ch });
  }
  return out;
}

/**
 * `find . -name . -exec rm -rf {} +`: a name test may let a directory through, so a whole-tree
 * command run by -exec is checked over every starting point of the search.
 */
export function findTreeRefusal(after: readonly string[], ctx: ProtectContext): string | null {
  const first = after.findIndex((t) => t.startsWith("-") || t === "!" || t === "(");
  const starts = first < 0 ? after : after.slice(0, first);
  const roots = starts.length ? starts : ["."];
  for (let k = 0; k < after.length; k++) {
    if (!FIND_ACTIONS.has(after[k]!) || !after[k]!.match(/^-(exec|execdir|ok|okdir)$/)) continue;
    const end = after.findIndex((t, j) => j > k && (t === ";" || t === "+"));
    const command = after.slice(k + 1, end < 0 ? after.length : end);
    if (!command.includes("{}")) continue;
    for (const r of roots) {
      const why = treeOperationRefusal(command.map((t) => t.replaceAll("{}", r)), ctx);
      if (why) return `find ${after[k]} would run it on what it finds: ${why}`;
    }
  }
  return null;
}

/** Programs that take the list of files to read from a file or stdin, which the gate cannot see. */
export function fileListRefusal(name: string, after: readonly string[], ctx: ProtectContext): string | null {
  const listed = (value: string | undefined, option: string): string | null => {
    if (value === undefined || value === "-" || value.startsWith("/dev/") || value.startsWith("/proc/")) return `${name} ${option} reads the names of the files to take from input longrun cannot see; name the files`;
    const hit = fileListHit(value, ctx);
    return hit ? `${name} ${option} ${shown(value)}: ${hit}` : null;
  };
  if (name === "cpio" && after.some((t) => /^-[a-zA-Z]*[op]/.test(t) || t === "--create" || t === "--pass-through")) return "cpio copies the files named on its input, which longrun cannot see; use tar with the files named";
  if (name === "zip" && after.some((t) => t === "-@" || t === "--names-stdin")) return "zip -@ reads the names of the files to take from input longrun cannot see; name the files";
  for (let k = 0; k < after.length; k++) {
    const t = after[k]!;
    if ((name === "tar" && (t === "-T" || t === "--files-from")) || (name === "rsync" && t === "--files-from")) {
      const why = listed(after[k + 1], t);
      if (why) return why;
    }
    const eq = /^--files-from=(.*)$/.exec(t) ?? (name === "tar" ? /^-T(.+)$/.exec(t) : null);
    if (eq && (name === "tar" || name === "rsync")) {
      const why = listed(eq[1], "--files-from");
      if (why) return why;
    }
  }
  return null;
}

/**
 * The rules above as rows, each with why it exists and its examples: command lines it must let
 * through and must refuse under a lease (run in process by tests/hooks/rule_examples.test.ts).
 */
export const LEASE_PROGRAMS: Readonly<Record<string, { rule: string; why: string; examples: RuleExamples }>> = {
  "git -c": {
    rule: "gitConfigOverride",
    why: "configuration set on the command line can make git run any program (core.pager, core.fsmonitor, alias.x=!…)",
    examples: { pass: ["git -c color.ui=never log", "git -c user.name=x -c user.email=y log"], refused: ["git -c core.fsmonitor=id status", "git -c alias.x='!ls' x", "git --config-env=core.pager=X log", "git -c user.name=x -c core.pager='sh x.sh' log", "git -C src -c core.pager='sh x.sh' log", "git --git-dir .git -c core.fsmonitor=id status"] },
  },
  "git config": {
    rule: "gitConfigWrite",
    why: "written configuration makes later git commands run programs, after the lease",
    examples: { pass: ["git config user.name", "git config --get core.editor", "git config --list"], refused: ["git config core.hooksPath hk", "git config --global alias.st '!touch /tmp/pwned'", "git -C sub config core.fsmonitor x"] },
  },
  sed: {
    rule: "sedRefusal",
    why: "sed hands the text of its e command (or the e flag of s) to a shell",
    examples: { pass: ["sed -i 's/foo/bar/g' src/a.ts", "sed -n '1,5p' a.txt"], refused: ["sed 's/x/y/e' a.txt", "sed -n '1e id' a.txt", "sed -f script.sed a.txt"] },
  },
  find: {
    rule: "findRefusal",
    why: "an action (-delete, -exec, -fprint, …) may only act on names that no protected file has",
    examples: { pass: ["find . -name '*.pyc' -delete", "find . -type f"], refused: ["find . -name '*.json' -delete", "find . -name '*' -delete", "find . -type f -o -name x -delete", "find . -execdir rm {} \\;"] },
  },
  "find -exec over a tree": {
    rule: "findTreeRefusal",
    why: "a whole-tree command that -exec runs on a starting point covers the tree",
    examples: { pass: ["find src -maxdepth 0 -name src -exec chmod -R u+w {} +"], refused: ["find . -name . -exec rm -rf {} +", "find . -maxdepth 0 -name . -exec chmod -R 777 {} \\;"] },
  },
  "file lists": {
    rule: "fileListRefusal",
    why: "tar -T, rsync --files-from, zip -@ and cpio take the names of the files to copy from input the gate does not see",
    examples: { pass: ["tar -czf /tmp/longrun-src.tgz src"], refused: ["find . -print0 | tar --null -T - -czf /tmp/x.tgz", "ls -a | zip -@ /tmp/x.zip", "find . | cpio -o > /tmp/x.cpio"] },
  },
};
