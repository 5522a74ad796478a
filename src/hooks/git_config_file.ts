/**
 * git's configuration read from its files, without starting git: the gate's `git status` check
 * (readonly_env.ts) reads them here and starts `git config` and `git rev-parse` only when these
 * files hold anything this reader cannot answer for sure. Every such case answers "unsure" (null),
 * never "clean":
 * - an environment variable that moves or adds configuration or the repository (any `GIT_*` but a
 *   few that only carry credentials, identities or programs other commands run), no absolute HOME;
 * - a git other than the system's /usr/bin/git on Linux (where the system file is /etc/gitconfig:
 *   git's Makefile puts sysconfdir at /etc for prefix /usr), so the system file is known;
 * - a repository that is not a plain `.git` directory owned by this user on the same file system
 *   (a `.git` file — a worktree or a submodule —, a link, a bare layout, a HEAD git would not take);
 * - an include or a conditional include, an extension, core.worktree, core.bare other than false,
 *   a repository format other than 0 or 1, a file that cannot be read for another reason than
 *   its absence, and anything git's parser would reject or this one does not know (a lone CR, a
 *   control character, a key outside a section).
 */
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname } from "node:path";

/** One `key`/`value` pair as `git config --list` shows it: the section and name in lower case, the value null for a bare key. */
export interface GitConfigEntry {
  key: string;
  value: string | null;
}

/** `GIT_*` variables that change neither which configuration git reads nor which repository it finds. */
const INERT_GIT_ENV = new Set([
  "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_NO_VERIFY", "GIT_TERMINAL_PROMPT", "GIT_ASKPASS", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER",
  "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_HTTP_USER_AGENT", "GIT_OPTIONAL_LOCKS", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
  "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_MERGE_AUTOEDIT",
]);

/** Thrown inside the parser for anything it cannot answer for sure. */
const UNSURE = Symbol("unsure");

/**
 * The entries of one configuration file's text, in order, parsed as git's own parser does
 * (config.c: sections, `"subsections"`, quotes, the escapes \\ \" \n \t \b, a backslash before the
 * end of a line continuing the value, comments after # or ;), or null when git would reject the
 * text or this parser is not sure how git reads it.
 */
export function parseGitConfig(text: string): GitConfigEntry[] | null {
  try {
    return parse(text);
  } catch (e) {
    if (e === UNSURE) return null;
    throw e;
  }
}

function parse(text: string): GitConfigEntry[] {
  const n = text.length;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a UTF-8 byte-order mark, which git skips
  let eof = false;
  /** git's get_next_char: CR LF is a newline, the end of the text a newline with eof set. */
  const next = (): string => {
    if (i >= n) {
      eof = true;
      return "\n";
    }
    const c = text[i++]!;
    if (c === "\r") {
      if (text[i] !== "\n") throw UNSURE;
      i++;
      return "\n";
    }
    const code = c.charCodeAt(0);
    if ((code < 0x20 && c !== "\t" && c !== "\n") || code === 0x7f) throw UNSURE;
    return c;
  };
  const isSpace = (c: string) => c === " " || c === "\t" || c === "\n";
  const isAlpha = (c: string) => (c >= "a" && c <= "z") || (c >= "A" && c <= "Z");
  const isKeyChar = (c: string) => isAlpha(c) || (c >= "0" && c <= "9") || c === "-";

  const entries: GitConfigEntry[] = [];
  let section: string | null = null;
  let comment = false;
  for (;;) {
    const c = next();
    if (c === "\n") {
      if (eof) return entries;
      comment = false;
      continue;
    }
    if (comment || isSpace(c)) continue;
    if (c === "#" || c === ";") {
      comment = true;
      continue;
    }
    if (c === "[") {
      section = sectionName();
      continue;
    }
    if (!isAlpha(c) || section === null) throw UNSURE;
    let name = c.toLowerCase();
    let d: string;
    for (;;) {
      d = next();
      if (eof || !isKeyChar(d)) break;
      name += d.toLowerCase();
    }
    while (d === " " || d === "\t") d = next();
    let value: string | null = null;
    if (d !== "\n") {
      if (d !== "=") throw UNSURE;
      value = parseValue();
    }
    entries.push({ key: `${section}.${name}`, value });
  }

  /** git's get_base_var and get_extended_base_var, after the `[`. */
  function sectionName(): string {
    let name = "";
    for (;;) {
      let c = next();
      if (eof) throw UNSURE;
      if (c === "]") {
        if (name === "") throw UNSURE;
        return name;
      }
      if (c === " " || c === "\t") {
        if (name === "") throw UNSURE;
        while (c === " " || c === "\t") c = next();
        if (c !== '"') throw UNSURE;
        let sub = "";
        for (;;) {
          c = next();
          if (c === "\n") throw UNSURE;
          if (c === '"') break;
          if (c === "\\") {
            c = next();
            if (c === "\n") throw UNSURE;
          }
          sub += c;
        }
        if (next() !== "]") throw UNSURE;
        return `${name}.${sub}`;
      }
      if (!isKeyChar(c) && c !== ".") throw UNSURE;
      name += c.toLowerCase();
    }
  }

  /** git's parse_value, after the `=`: up to the end of the line (or of a continued one). */
  function parseValue(): string {
    let value = "";
    let quote = false;
    let comment = false;
    let spaces = 0;
    for (;;) {
      let c = next();
      if (c === "\n") {
        if (quote) throw UNSURE;
        return value;
      }
      if (comment) continue;
      if ((c === " " || c === "\t") && !quote) {
        if (value.length > 0) spaces++;
        continue;
      }
      if (!quote && (c === ";" || c === "#")) {
        comment = true;
        continue;
      }
      value += " ".repeat(spaces);
      spaces = 0;
      if (c === "\\") {
        c = next();
        if (eof) throw UNSURE;
        if (c === "\n") continue;
        const escaped = ({ t: "\t", b: "\b", n: "\n", "\\": "\\", '"': '"' } as Record<string, string>)[c];
        if (escaped === undefined) throw UNSURE;
        value += escaped;
        continue;
      }
      if (c === '"') {
        quote = !quote;
        continue;
      }
      value += c;
    }
  }
}

/** What the files say: every entry git would list for `cwd`, and the repository's git directory (null outside one). */
export interface GitConfigFiles {
  entries: GitConfigEntry[];
  gitDir: string | null;
}

/**
 * Every entry `git config --list --includes` would show in `cwd`, read from the files, with the
 * git directory found the way git finds it; null when anything is not sure (see the top of this
 * file), and then the caller asks git itself.
 */
export function gitConfigFromFiles(cwd: string, path: string, env: Record<string, string | undefined> = process.env): GitConfigFiles | null {
  if (process.platform !== "linux") return null;
  for (const name of Object.keys(env)) if (name.startsWith("GIT_") && !INERT_GIT_ENV.has(name)) return null;
  const home = env.HOME;
  if (!home || !home.startsWith("/")) return null;
  if (systemGit(path) !== "/usr/bin/git") return null;
  const xdg = env.XDG_CONFIG_HOME ? `${env.XDG_CONFIG_HOME}/git/config` : `${home}/.config/git/config`;
  if (!xdg.startsWith("/")) return null;
  let repo: { workTree: string; gitDir: string } | null | undefined;
  try {
    repo = discover(realpathSync(cwd));
  } catch {
    return null;
  }
  if (repo === undefined) return null;
  const entries: GitConfigEntry[] = [];
  for (const file of ["/etc/gitconfig", xdg, `${home}/.gitconfig`, ...(repo ? [`${repo.gitDir}/config`] : [])]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      if ((e as { code?: string }).code === "ENOENT") continue;
      return null;
    }
    const parsed = parseGitConfig(text);
    if (parsed === null || !parsed.every(plain)) return null;
    entries.push(...parsed);
  }
  return { entries, gitDir: repo ? repo.gitDir : null };
}

/** Entries this reader can answer for: none that pulls in another file or changes the repository's layout or format. */
function plain(e: GitConfigEntry): boolean {
  const section = e.key.slice(0, e.key.indexOf("."));
  if (section === "include" || section === "includeif" || section === "extensions") return false;
  if (e.key === "core.worktree") return false;
  if (e.key === "core.bare") return e.value !== null && ["false", "no", "off", "0"].includes(e.value.trim().toLowerCase());
  if (e.key === "core.repositoryformatversion") return e.value === "0" || e.value === "1";
  return true;
}

/** The real path of the first `git` on PATH, or null. */
function systemGit(path: string): string | null {
  for (const dir of path.split(":")) {
    if (!dir.startsWith("/")) continue;
    try {
      if (statSync(`${dir}/git`).isFile()) return realpathSync(`${dir}/git`);
    } catch {
      continue;
    }
  }
  return null;
}

/**
 * The repository git finds from `dir` (a real path): the first directory up with a `.git`
 * directory that is a git directory; null when there is none up to / on this file system;
 * undefined when git could see it otherwise (a `.git` file or link, a directory that is itself a
 * git directory, a file system boundary, another owner, a `.git` git would not take).
 */
function discover(dir: string): { workTree: string; gitDir: string } | null | undefined {
  const dev = statSync(dir).dev;
  const uid = typeof process.getuid === "function" ? process.getuid() : -1;
  for (;;) {
    const here = lstatSync(dir);
    if (here.dev !== dev) return undefined;
    const dot = lstatSync(`${dir}/.git`, { throwIfNoEntry: false });
    if (dot) {
      if (!dot.isDirectory() || !isGitDirectory(`${dir}/.git`)) return undefined;
      if (here.uid !== uid || dot.uid !== uid) return undefined;
      return { workTree: dir, gitDir: `${dir === "/" ? "" : dir}/.git` };
    }
    for (const part of ["HEAD", "objects", "refs", "commondir", "gitdir"]) if (lstatSync(`${dir}/${part}`, { throwIfNoEntry: false })) return undefined;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** git's is_git_directory for a plain repository: a HEAD it takes, objects and refs, and no commondir. */
function isGitDirectory(gitDir: string): boolean {
  const head = lstatSync(`${gitDir}/HEAD`, { throwIfNoEntry: false });
  if (!head?.isFile()) return false;
  if (!lstatSync(`${gitDir}/objects`, { throwIfNoEntry: false })?.isDirectory()) return false;
  if (!lstatSync(`${gitDir}/refs`, { throwIfNoEntry: false })?.isDirectory()) return false;
  if (lstatSync(`${gitDir}/commondir`, { throwIfNoEntry: false })) return false;
  const text = readFileSync(`${gitDir}/HEAD`, "utf8");
  return /^ref: refs\/[^\s]+\n?$/.test(text) || /^([0-9a-f]{40}|[0-9a-f]{64})\n?$/.test(text);
}

/**
 * Whether the index at `indexFile` (or a split index's shared part beside it) may hold a gitlink
 * (mode 160000): git status and diff then run `git status` inside a populated submodule, under
 * that repository's own configuration (its core.fsmonitor, its hooks), even with no .gitmodules.
 * Any 00 00 e0 00 in the files counts (a mode is a big-endian 32-bit field), so a rare false
 * match refuses rather than lets through; an index that cannot be read counts too, unless absent.
 */
export function indexMayHaveGitlink(indexFile: string): boolean {
  const files = [indexFile];
  try {
    const dir = dirname(indexFile);
    for (const name of readdirSync(dir)) if (name.startsWith("sharedindex.")) files.push(`${dir}/${name}`);
  } catch {
    return true;
  }
  for (const file of files) {
    let data: Buffer;
    try {
      data = readFileSync(file);
    } catch (e) {
      if ((e as { code?: string }).code === "ENOENT") continue;
      return true;
    }
    for (let at = data.indexOf(0xe0); at >= 0; at = data.indexOf(0xe0, at + 1)) {
      if (at >= 2 && data[at - 2] === 0 && data[at - 1] === 0 && data[at + 1] === 0) return true;
    }
  }
  return false;
}
